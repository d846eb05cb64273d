// warp-reduce on spellings other than the canonical `if (i < n)
// atomicAdd(total, v)`: the atomic is recognized in lib/Analysis/Idioms
// (recognizeUniformAtomic) on the AST and the target's affine form, so the
// operand orders, a void cast, braces, pointer arithmetic, block ids through
// locals and products of block ids do not matter; targets that vary within a
// block keep their refusal, with the reason.
// RUN: cudal1-opt %s --plan '@ptr: warp-reduce; @local: warp-reduce; @prod: warp-reduce' -o - | grep -v "^ *// [A-Z-]*:" | %FileCheck %s
// RUN: cudal1-opt %s --plan '@ptr: warp-reduce; @local: warp-reduce; @prod: warp-reduce' -o %t.cu
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: not cudal1-opt %s --plan '@quot: warp-reduce' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=QUOT
// RUN: not cudal1-opt %s --plan '@lane: warp-reduce' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=LANE
// RUN: not cudal1-opt %s --plan '@hist: warp-reduce' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=HIST
// RUN: not cudal1-opt %s --plan '@mut: warp-reduce' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=MUT

// The global id's terms and factors swapped, the bound on the left, braces,
// the call cast to void and the target as pointer arithmetic.
// CHECK-LABEL: {{^}}__global__ void ptr(
// CHECK-NEXT: int i = threadIdx.x + blockDim.x * blockIdx.x;
// CHECK-NEXT: float cudal1_partial = 0;
// CHECK-NEXT: if (n > i) {
// CHECK-NEXT: cudal1_partial += x[i];
// CHECK-NEXT: }
// CHECK-NEXT: cudal1WarpAtomicAdd<float>(out + blockIdx.x, cudal1_partial);
// CHECK-NEXT: }
__global__ void ptr(const float *x, float *out, int n) {
  int i = threadIdx.x + blockDim.x * blockIdx.x;
  if (n > i) {
    (void)atomicAdd(out + blockIdx.x, x[i]);
  }
}

// The block's row through a local, the target an affine index of block ids.
// CHECK-LABEL: {{^}}__global__ void local(
// CHECK: double cudal1_partial = 0;
// CHECK-NEXT: if (c < cols)
// CHECK-NEXT: cudal1_partial += x[r * cols + c];
// CHECK-NEXT: cudal1WarpAtomicAdd<double>(&out[r * gridDim.x + blockIdx.x], cudal1_partial);
__global__ void local(const double *x, double *out, int cols) {
  const int r = blockIdx.y;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < cols)
    atomicAdd(&out[r * gridDim.x + blockIdx.x], x[r * cols + c]);
}

// A product of block ids is outside the affine form, yet the same for the
// whole block.
// CHECK-LABEL: {{^}}__global__ void prod(
// CHECK: unsigned int cudal1_partial = 0;
// CHECK: cudal1WarpAtomicAdd<unsigned int>(&out[blockIdx.x * blockIdx.y], cudal1_partial);
__global__ void prod(const unsigned *x, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&out[blockIdx.x * blockIdx.y], x[i]);
}

// The block id spelled as the global id's quotient: the analysis does not
// know that threadIdx.x < blockDim.x, so the quotient varies with the thread.
// QUOT: not legal at kernel 'quot': the atomic's index i / blockDim.x depends on threadIdx
__global__ void quot(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&out[i / blockDim.x], x[i]);
}

// A remainder of the thread id: one address per lane.
// LANE: not legal at kernel 'lane': the atomic's index threadIdx.x % 32 depends on threadIdx
__global__ void lane(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&out[threadIdx.x % 32], x[i]);
}

// A histogram: the refusal says what is outside the affine form.
// HIST: not legal at kernel 'hist': the atomic's index x[i] % 64 is not an affine expression (the index reads memory)
__global__ void hist(const int *x, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&bins[x[i] % 64], 1u);
}

// A variable of the address assigned again: its value at the atomic is not
// known (and moving the atomic after the if could change it).
// MUT: not legal at kernel 'mut': the atomic's index b is not an affine expression (the index depends on 'b', whose relation to the thread index is unknown)
__global__ void mut(const float *x, float *out, int n) {
  int b = blockIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&out[b], x[i]);
  b = 0;
}
