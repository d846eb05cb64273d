// restrict: __restrict__ on every pointer parameter, const on the pointees
// that are only loaded from; proven from the file's launches.
// RUN: cudal1-opt %s --plan '@saxpy: restrict; @gather: restrict; @tmpl: restrict; @escapes: restrict' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@inplace: restrict' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=SAME
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@offset: restrict' 2>&1 | FileCheck %s --check-prefix=OFFSET
// RUN: not cudal1-opt %s --plan '@unlaunched: restrict' 2>&1 | FileCheck %s --check-prefix=NOLAUNCH
// RUN: not cudal1-opt %s --plan '@done: restrict' 2>&1 | FileCheck %s --check-prefix=DONE
// RUN: not cudal1-opt %s --plan '@scalars: restrict' 2>&1 | FileCheck %s --check-prefix=NOPTR
// RUN: not cudal1-opt %s --plan '@indirect: restrict' 2>&1 | FileCheck %s --check-prefix=INDIRECT

__device__ float twice(const float *p, int i) { return 2.0f * p[i]; }

// CHECK-LABEL: {{^}}__global__ void saxpy(
// CHECK-SAME: int n, float a, const float *__restrict__ x, float *__restrict__ y) {
__global__ void saxpy(int n, float a, float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

struct P { float v, w; };

// Loads through p->v and idx[i] are reads; out is written.
// CHECK-LABEL: {{^}}__global__ void gather(
// CHECK-SAME: const P *__restrict__ p, const int *__restrict__ idx, float *__restrict__ out, int n) {
__global__ void gather(P *p, int *idx, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = p[idx[i]].v + (*p).w + p->v;
}

// A template is edited once, on its definition.
// CHECK-LABEL: {{^}}template <typename T> __global__ void tmpl(
// CHECK-SAME: const T *__restrict__ in, T *__restrict__ out, int n) {
template <typename T> __global__ void tmpl(T *in, T *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i];
}

// `in` escapes into a device function: __restrict__ only, no const.
// CHECK-LABEL: {{^}}__global__ void escapes(
// CHECK-SAME: float *__restrict__ in, float *__restrict__ out, int n) {
__global__ void escapes(float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = twice(in, i);
}

// In place: both pointers are the same buffer at the launch.
__global__ void inplace(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] + 1.0f;
}

// Offset into one buffer: the two ranges may overlap.
__global__ void offset(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i];
}

// Never launched here: nothing shows what its callers pass.
__global__ void unlaunched(const float *in, float *out) { out[threadIdx.x] = in[threadIdx.x]; }

// Already restrict.
__global__ void done(const float *__restrict__ in, float *__restrict__ out) {
  out[threadIdx.x] = in[threadIdx.x];
}

// No pointers.
__global__ void scalars(int n) {}

// Launched through cudaLaunchKernel too, whose arguments the model does not see.
__global__ void indirect(const float *in, float *out) { out[threadIdx.x] = in[threadIdx.x]; }

void run(float *x, float *y, P *ps, int *idx, int *jdx, int n) {
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
  gather<<<(n + 255) / 256, 256>>>(ps, idx, y, n);
  tmpl<<<(n + 255) / 256, 256>>>(x, y, n);
  tmpl<<<(n + 255) / 256, 256>>>(idx, jdx, n);
  escapes<<<(n + 255) / 256, 256>>>(x, y, n);
  inplace<<<(n + 255) / 256, 256>>>(x, x, n);
  offset<<<(n + 255) / 256, 256>>>(x, x + 1, n);
  done<<<1, 32>>>(x, y);
  scalars<<<1, 1>>>(n);
  indirect<<<1, 32>>>(x, y);
  void *args[] = {&x, &y};
  cudaLaunchKernel((const void *)indirect, dim3(1), dim3(32), args, 0, 0);
}
// SAME: plan:1:11: error: step 1 (restrict): not legal at kernel 'inplace': launch #5 passes x for both in and out
// OFFSET: not legal at kernel 'offset': launch #6 passes 'x + 1' for out, not a plain buffer variable
// NOLAUNCH: not legal at kernel 'unlaunched': the kernel has no launch in this file, so nothing shows that its pointers do not alias
// DONE: not legal at kernel 'done': every pointer parameter is already __restrict__
// NOPTR: not legal at kernel 'scalars': the kernel has no pointer parameter
// INDIRECT: not legal at kernel 'indirect': the kernel is referenced outside a <<<>>> launch at line {{[0-9]+}}, so some of its launches are not visible
