// The double reference: shared memory arrays and float atomics promoted
// (atomicAdd on double* exists from sm_60; atomicExch goes through a
// helper), and the reductions the reference's tolerance scales with: a
// loop over a parameter, a tree over the block, a warp shuffle, one atomic
// per block into one address.
// RUN: cudal1-opt %s --reference blockSum -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o /dev/null %t.cu %}
// RUN: cudal1-opt %s --reference perThread -o - | head -1 | FileCheck %s --check-prefix=PER
// RUN: cudal1-opt %s --reference rowDot -o - | head -1 | FileCheck %s --check-prefix=ROW

// CHECK: {{^}}/* cudal1 reference of 'blockSum': entry blockSum_ref; args f32* f32* i32 i32; reductions line [[@LINE+6]]: cols; line [[@LINE+11]]: block threads; line [[@LINE+16]]: 32; line [[@LINE+18]]: grid blocks */
__global__ void blockSum(const float *x, float *total, int n, int cols) {
  __shared__ float s[256];
  __shared__ float last;
  float acc = 0.0f;
  for (int j = 0; j < cols; ++j)
    acc += x[(blockIdx.x * blockDim.x + threadIdx.x) * cols + j];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 32; h >>= 1) {
    if (threadIdx.x < h)
      s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  float v = threadIdx.x < 32 ? s[threadIdx.x] + s[threadIdx.x + 32] : 0.0f;
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffffu, v, off);
  if (threadIdx.x == 0) {
    atomicAdd(total, v);
    last = atomicExch(total + 1, v);
  }
}
// CHECK-LABEL: // --- cudal1: the double reference of 'blockSum'
// CHECK: {{^}}static __device__ __forceinline__ double cudal1_ref_atomicExch(double *p, double v) {
// CHECK: {{^}}extern "C" __global__ void __launch_bounds__(1024) blockSum_ref(const double *x, double *total, int n, int cols) {
// CHECK-NEXT: {{^}}  __shared__ double s[256];
// CHECK-NEXT: {{^}}  __shared__ double last;
// CHECK-NEXT: {{^}}  double acc = 0.0;
// CHECK: {{^}}  double v = threadIdx.x < 32 ? s[threadIdx.x] + s[threadIdx.x + 32] : 0.0;
// CHECK: {{^}}    atomicAdd(total, v);
// CHECK-NEXT: {{^}}    last = cudal1_ref_atomicExch(total + 1, v);

// A grid-stride loop: each thread sums its share of n, every thread's
// atomic meets in one address.
// PER: reductions line [[@LINE+4]]: n / grid threads; line [[@LINE+5]]: grid threads */
__global__ void perThread(const float *x, float *out, int n) {
  float acc = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    acc = fmaf(x[i], x[i], acc);
  atomicAdd(out, acc);
}

// One thread per row; `sum = sum + ...` accumulates along a loop from 1.
// ROW: reductions line [[#]]: (cols - 1) */
__global__ void rowDot(const float *m, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  float sum = m[r * cols];
  for (int c = 1; c < cols; c++)
    sum = sum + m[r * cols + c];
  out[r] = sum;
}

void run(const float *x, float *t, int n, int cols) {
  blockSum<<<n / 256, 256>>>(x, t, n, cols);
  perThread<<<80, 256>>>(x, t, n);
  rowDot<<<n / 256, 256>>>(x, t, n, cols);
}
