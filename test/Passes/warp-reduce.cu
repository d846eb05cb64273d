// warp-reduce: an atomicAdd to a block-uniform address becomes a per-thread
// partial sum, a shuffle reduction over the warp's live lanes and one
// atomic per warp (the helper is inserted once, guarded by a macro).
// RUN: cudal1-opt %s --plan '@sum: warp-reduce; @rows: warp-reduce; @count: warp-reduce; @all: warp-reduce; @tsum: warp-reduce' -o - | grep -v "^ *// [A-Z-]*:" | %FileCheck %s
// RUN: cudal1-opt %s --plan '@sum: warp-reduce; @rows: warp-reduce; @count: warp-reduce; @all: warp-reduce; @tsum: warp-reduce' -o %t.cu
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: not cudal1-opt %s --plan '@hist: warp-reduce' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-HIST
// RUN: not cudal1-opt %s --plan '@early: warp-reduce' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-RET
// RUN: not cudal1-opt %s --plan '@two: warp-reduce' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-TWO
// RUN: not cudal1-opt %s --plan '@used: warp-reduce' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-USED
// RUN: not cudal1-opt %s --plan '@inner: warp-reduce' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-INNER
// RUN: not cudal1-opt %s --plan '@lng: warp-reduce' -o /dev/null 2>&1 | %FileCheck %s --check-prefix=ILLEGAL-TYPE

#include <cuda_fp16.h>

// CHECK: {{^}}#ifndef CUDAL1_WARP_ATOMIC_ADD
// CHECK: __device__ __forceinline__ void cudal1WarpAtomicAdd(T *addr, T v) {
// CHECK: T o = __shfl_down_sync(mask, v, off);
// CHECK: if (lane == 0)
// CHECK-NEXT: atomicAdd(addr, v);
// CHECK: {{^}}#endif
// CHECK-LABEL: {{^}}__global__ void sum(
// CHECK-NEXT: int i = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: float cudal1_partial = 0;
// CHECK-NEXT: if (i < n)
// CHECK-NEXT: cudal1_partial += x[i] * x[i];
// CHECK-NEXT: cudal1WarpAtomicAdd<float>(total, cudal1_partial);
// CHECK-NEXT: }
__global__ void sum(const float *x, float *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(total, x[i] * x[i]);
}

// One row per blockIdx.y: the address is uniform within a block.
// CHECK-LABEL: {{^}}__global__ void rows(
// CHECK: double cudal1_partial = 0;
// CHECK-NEXT: if (c < cols) {
// CHECK-NEXT: double v = A[blockIdx.y * cols + c];
// CHECK-NEXT: cudal1_partial += v * v;
// CHECK-NEXT: }
// CHECK-NEXT: cudal1WarpAtomicAdd<double>(&out[blockIdx.y], cudal1_partial);
__global__ void rows(const double *A, double *out, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < cols) {
    double v = A[blockIdx.y * cols + c];
    atomicAdd(&out[blockIdx.y], v * v);
  }
}

// CHECK-LABEL: {{^}}__global__ void count(
// CHECK: unsigned long long cudal1_partial = 0;
// CHECK: cudal1_partial += (unsigned long long)x[i];
// CHECK: cudal1WarpAtomicAdd<unsigned long long>(total, cudal1_partial);
__global__ void count(const int *x, unsigned long long *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0) atomicAdd(total, (unsigned long long)x[i]);
}

// Every thread adds: the value goes to the reduction directly.
// CHECK-LABEL: {{^}}__global__ void all(
// CHECK-NEXT: cudal1WarpAtomicAdd<int>(counter, 1);
__global__ void all(int *counter) {
  atomicAdd(counter, 1);
}

// CHECK-LABEL: {{^}}__global__ void tsum(
// CHECK: float cudal1_partial = 0;
template <typename T>
__global__ void tsum(const T *x, float *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(total, (float)x[i]);
}

// Negative: the address differs between threads (a histogram).
// ILLEGAL-HIST: not legal at kernel 'hist': the atomic's index {{.*}} is not an affine expression
__global__ void hist(const int *x, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&bins[x[i] % 64], 1u);
}

// Negative: threads that return early would not join the shuffle.
// ILLEGAL-RET: not legal at kernel 'early': the kernel returns early
__global__ void early(const float *x, float *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(total, x[i]);
}

// ILLEGAL-TWO: not legal at kernel 'two': the kernel has several atomics; only one is handled
__global__ void two(const float *x, float *total, float *sq, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(total, x[i]);
    atomicAdd(sq, x[i] * x[i]);
  }
}

// ILLEGAL-USED: not legal at kernel 'used': the atomicAdd is not a statement at the top of the kernel or directly inside a top-level if (or its result is used)
__global__ void used(const float *x, float *total, float *old, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    old[i] = atomicAdd(total, x[i]);
}

// ILLEGAL-INNER: not legal at kernel 'inner': the atomic's address uses 'p', declared inside the if
__global__ void inner(const float *x, float *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float *p = total + blockIdx.x;
    atomicAdd(p, x[i]);
  }
}

// ILLEGAL-TYPE: not legal at kernel 'lng': the atomicAdd's value type is not float, double, int, unsigned or unsigned long long
__global__ void lng(const float *x, __half *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(total, __float2half(x[i]));
}

void host(const float *x, const double *dx, float *t, int n) {
  tsum<<<1, 256>>>(x, t, n);
  tsum<<<1, 256>>>(dx, t, n);
}
