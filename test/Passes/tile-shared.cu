// tile-shared: the dot-product loop of a naive matrix product staged through
// shared-memory tiles; the bounds check moves below the tiled loop so every
// thread reaches the barriers. Composition: launch-config first makes the
// block square, then tile-shared applies (each step sees the previous one's output).
// RUN: cudal1-opt %s --plan '@matmul: tile-shared(tile=16)' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: cudal1-opt %s --plan '@#1: launch-config(block=32x32); @gemm_nt: tile-shared(tile=32)' -o %t.2.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.2.cu | FileCheck %s --check-prefix=COMPOSED
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.2.o %t.2.cu %}
// RUN: not cudal1-opt %s --plan '@gemm_nt: tile-shared(tile=16)' 2>&1 | FileCheck %s --check-prefix=NOTSQUARE
// RUN: not cudal1-opt %s --plan '@early: tile-shared(tile=16)' 2>&1 | FileCheck %s --check-prefix=EARLY
// RUN: not cudal1-opt %s --plan '@nested: tile-shared(tile=16)' 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not cudal1-opt %s --plan '@mixed: tile-shared(tile=16)' 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: not cudal1-opt %s --plan '@matmul: tile-shared(tile=32)' 2>&1 | FileCheck %s --check-prefix=PARAM

// CHECK-LABEL: __global__ void matmul(
// CHECK:      { // tile-shared(tile=16): 16x16 tiles of both operands in shared memory
// CHECK-NEXT:   float acc = 0.0f;
// CHECK-NEXT:   __shared__ float cudal1_tileA[16][16];
// CHECK-NEXT:   __shared__ float cudal1_tileB[16][16];
// CHECK-NEXT:   for (int cudal1_t = 0; cudal1_t < n; cudal1_t += 16) {
// CHECK:          int k = cudal1_t + threadIdx.x;
// CHECK-NEXT:     cudal1_tileA[threadIdx.y][threadIdx.x] = (row < n) && k < n ? A[row * n + k] : float(0);
// CHECK:          int k = cudal1_t + threadIdx.y;
// CHECK-NEXT:     cudal1_tileB[threadIdx.y][threadIdx.x] = (col < n) && k < n ? B[k * n + col] : float(0);
// CHECK:        __syncthreads();
// CHECK-NEXT:   for (int cudal1_k = 0; cudal1_k < 16; ++cudal1_k)
// CHECK-NEXT:     acc += cudal1_tileA[threadIdx.y][cudal1_k] * cudal1_tileB[cudal1_k][threadIdx.x];
// CHECK-NEXT:   __syncthreads();
// CHECK:        if (row < n && col < n) {
// CHECK-NEXT:     C[row * n + col] = acc;
__global__ void matmul(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
      acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}

// B transposed and an epilogue with a bias: both stay.
// COMPOSED-LABEL: __global__ void gemm_nt(
// COMPOSED: __shared__ double cudal1_tileA[32][32];
// COMPOSED: cudal1_tileB[threadIdx.y][threadIdx.x] = (c < N) && k < K ? Wt[c * K + k] : double(0);
// COMPOSED: Y[r * N + c] = s + bias[c];
// COMPOSED: gemm_nt<<<dim3({{.*}}), dim3(32, 32, 1)>>>
__global__ void gemm_nt(const double *X, const double *Wt, const double *bias, double *Y, int M,
                        int N, int K) {
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < M && c < N) {
    double s = 0.0;
    for (int k = 0; k < K; ++k)
      s += X[r * K + k] * Wt[c * K + k];
    Y[r * N + c] = s + bias[c];
  }
}

// An early return: threads leave before the barriers the tiles need.
__global__ void early(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n)
    return;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k)
    acc += A[row * n + k] * B[k * n + col];
  C[row * n + col] = acc;
}

// The loop sits under a second, data-dependent condition: barriers would be divergent.
__global__ void nested(const float *A, const float *B, float *C, const int *mask, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    if (mask[row]) {
      float acc = 0.0f;
      for (int k = 0; k < n; ++k)
        acc += A[row * n + k] * B[k * n + col];
      C[row * n + col] = acc;
    }
  }
}

// Both operands follow x: no row/column structure to share.
__global__ void mixed(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
      acc += A[col * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}

void run(const float *A, const float *B, float *C, const double *X, const double *W,
         const double *b, double *Y, const int *mask, int n) {
  dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
  matmul<<<grid, block>>>(A, B, C, n);
  gemm_nt<<<dim3((n + 31) / 32, (n + 7) / 8), dim3(32, 8)>>>(X, W, b, Y, n, n, n);
  early<<<grid, block>>>(A, B, C, n);
  nested<<<grid, block>>>(A, B, C, mask, n);
  mixed<<<grid, block>>>(A, B, C, n);
}
// NOTSQUARE: launch #1 needs a square block of 8x8, 16x16 or 32x32 (compose with launch-config(block=16x16) first)
// EARLY: the kernel returns early; the tiled loop needs every thread of the block
// NESTED: no dot-product loop 'for (k = 0; k < K; ++k) acc += A[..] * B[..]' as the first loop inside the kernel's top-level bounds check
// MIXED: the operands of the dot product must be a row (depending on y only) and a column (depending on x only) of global arrays
// PARAM: parameter tile=32 is not one of {16}
