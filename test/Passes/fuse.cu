// fuse: two consecutive launches with the same configuration and
// element-to-element dependences become one launch of a new kernel.
// RUN: cudal1-opt %s --plan '@#0: fuse' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@#1: fuse' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=CROSS
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@#3: fuse' 2>&1 | FileCheck %s --check-prefix=CONFIG
// RUN: not cudal1-opt %s --plan '@#6: fuse' 2>&1 | FileCheck %s --check-prefix=ALIAS
// RUN: not cudal1-opt %s --plan '@#5: fuse' 2>&1 | FileCheck %s --check-prefix=LAST
// A fused kernel's body is hidden in lambdas: fusing it again is refused.
// RUN: not cudal1-opt %t.cu --plan '@#0: fuse' 2>&1 | FileCheck %s --check-prefix=AGAIN
// After fusing #8 and #9, half and twice no longer run: a later step on
// either is refused; bias still runs (other launches) and may be changed.
// RUN: not cudal1-opt %s --plan '@#8: fuse; @half: vectorize(width=16)' 2>&1 | FileCheck %s --check-prefix=DEAD
// RUN: cudal1-opt %s --plan '@#0: fuse; @bias: vectorize(width=16)' -o %t.live.cu
// RUN: FileCheck %s --check-prefix=LIVE < %t.live.cu

__global__ void bias(const float *x, const float *b, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  y[i] = x[i] + b[i];
}

__global__ void relu(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}

__global__ void shift(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 1 < n)
    y[i] = x[i + 1];
}

// CHECK: // cudal1 fuse: [[F:cudal1Fused[0-9]+]] runs bias then relu in each thread
// CHECK-NEXT: __global__ void [[F]](const float * a0, const float * a1, float * a2, int a3, float * b0, int b1) {
// CHECK-NEXT:   [](const float *x, const float *b, float *y, int n) {
// CHECK:      }(a0, a1, a2, a3);
// CHECK-NEXT:   [](float *y, int n) {
// CHECK:      }(b0, b1);
// CHECK-NEXT: }
// CHECK-LABEL: void layer(
void layer(int n) {
  float *x, *b, *y, *z;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMalloc(&z, n * sizeof(float));
  // CHECK: [[F]]<<<(n + 255) / 256, 256>>>(x, b, y, n, y, n);
  bias<<<(n + 255) / 256, 256>>>(x, b, y, n);
  // CHECK-NEXT: /* cudal1 fuse: relu<<<(n + 255) / 256, 256>>>(y, n) */;
  relu<<<(n + 255) / 256, 256>>>(y, n);
  // shift reads a neighbour's element of y, which relu wrote: cross-thread.
  shift<<<(n + 255) / 256, 256>>>(y, z, n);
  relu<<<(n + 255) / 256, 256>>>(z, n);
  // Another configuration.
  bias<<<(n + 127) / 128, 128>>>(x, b, y, n);
  relu<<<(n + 255) / 256, 256>>>(y, n);
}

// Two parameters that may alias.
void params(float *p, float *q, int n) {
  relu<<<(n + 255) / 256, 256>>>(p, n);
  relu<<<(n + 255) / 256, 256>>>(q, n);
}
// Used once each, in a chain.
__global__ void half(float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    v[i] *= 0.5f;
}

__global__ void twice(float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    v[i] *= 2.0f;
}

void chain(int n) {
  float *v;
  cudaMalloc(&v, n * sizeof(float));
  half<<<(n + 255) / 256, 256>>>(v, n);
  twice<<<(n + 255) / 256, 256>>>(v, n);
}
// CROSS: not legal at launch site #1 ({{.*}}fuse.cu:{{[0-9]+}}:3): launch #2 depends on it through 'y' (cross-thread
// CONFIG: launch #4 has another configuration
// ALIAS: 'p' and 'q' may alias (not both fresh allocations)
// LAST: no launch follows it in its block
// AGAIN: writes memory the model cannot name
// DEAD: step 2 (vectorize): kernel 'half' no longer runs: an earlier step of the plan replaced its launches
// LIVE: cudal1-opt plan: @#0: fuse; @bias: vectorize(width=16)
// LIVE: float4
