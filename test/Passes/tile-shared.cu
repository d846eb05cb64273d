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
// RUN: not cudal1-opt %s --plan '@triangular: tile-shared(tile=16)' 2>&1 | FileCheck %s --check-prefix=TRIANGULAR
//
// Register blocking: rb outputs per thread along y, blocks of 16x(16/rb), the same grid.
// RUN: cudal1-opt %s --plan '@matmul: tile-shared(tile=16, rb=2)' -o %t.rb2.cu
// RUN: grep -v "^ *// [A-Z0-9-]*:" %t.rb2.cu | FileCheck %s --check-prefix=RB2
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.rb2.o %t.rb2.cu %}
// RUN: cudal1-opt %s --plan '@#1: launch-config(block=32x32); @gemm_nt: tile-shared(tile=32, rb=4)' -o %t.rb4.cu
// RUN: grep -v "^ *// [A-Z0-9-]*:" %t.rb4.cu | FileCheck %s --check-prefix=RB4
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.rb4.o %t.rb4.cu %}
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=LIST
// RUN: not cudal1-opt %s --plan '@counted: tile-shared(tile=16, rb=2)' 2>&1 | FileCheck %s --check-prefix=COUNTED
// RUN: not cudal1-opt %s --plan '@viaPointer: tile-shared(tile=16)' 2>&1 | FileCheck %s --check-prefix=POINTER
// RUN: cudal1-opt %s --plan '@macroBlock: tile-shared(tile=16, rb=2)' -o - | grep -v "^ *// [A-Z0-9-]*:" | FileCheck %s --check-prefix=MACRO
// RUN: not cudal1-opt %s --plan '@matmul: tile-shared(tile=16, rb=3)' 2>&1 | FileCheck %s --check-prefix=RB3
// RUN: not cudal1-opt %s --plan '@movesParam: tile-shared(tile=16, rb=2)' 2>&1 | FileCheck %s --check-prefix=PARAMS
// Without rb (or rb=1) the output is the plain tiling.
// RUN: cudal1-opt %s --plan '@matmul: tile-shared(tile=16, rb=1)' -o %t.rb1.cu
// RUN: grep -v "^ *// [A-Z0-9-]*:" %t.rb1.cu | FileCheck %s

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
// RB2-LABEL: __global__ void matmul(
// RB2:      { // tile-shared(tile=16, rb=2): 16x16 tiles in shared memory; 16x8 threads, each computing 2 outputs (rows threadIdx.y + 8*i)
// RB2-NEXT:   float cudal1_acc[2];
// RB2-NEXT:   __shared__ float cudal1_tileA[16][16];
// RB2-NEXT:   __shared__ float cudal1_tileB[16][16];
// RB2-NEXT: #pragma unroll
// RB2-NEXT:   for (int cudal1_i = 0; cudal1_i < 2; ++cudal1_i) {
// RB2-NEXT:     float acc = 0.0f;
// RB2-NEXT:     cudal1_acc[cudal1_i] = acc;
// RB2-NEXT:   }
// RB2-NEXT:   for (int cudal1_t = 0; cudal1_t < n; cudal1_t += 16) {
// RB2-NEXT: #pragma unroll
// RB2-NEXT:     for (int cudal1_i = 0; cudal1_i < 2; ++cudal1_i) {
// RB2-NEXT:       const unsigned cudal1_ty = threadIdx.y + 8u * cudal1_i;
// RB2-NEXT:       int row = blockIdx.y * 16u + cudal1_ty;
// RB2-NEXT:       int col = blockIdx.x * blockDim.x + threadIdx.x;
// RB2-NEXT:       {
// RB2-NEXT:         int k = cudal1_t + threadIdx.x;
// RB2-NEXT:         cudal1_tileA[cudal1_ty][threadIdx.x] = (row < n) && k < n ? A[row * n + k] : float(0);
// RB2-NEXT:       }
// RB2-NEXT:       {
// RB2-NEXT:         int k = cudal1_t + cudal1_ty;
// RB2-NEXT:         cudal1_tileB[cudal1_ty][threadIdx.x] = (col < n) && k < n ? B[k * n + col] : float(0);
// RB2-NEXT:       }
// RB2-NEXT:     }
// RB2-NEXT:     __syncthreads();
// RB2-NEXT:     for (int cudal1_k = 0; cudal1_k < 16; ++cudal1_k) {
// RB2-NEXT:       const float cudal1_b = cudal1_tileB[cudal1_k][threadIdx.x];
// RB2-NEXT: #pragma unroll
// RB2-NEXT:       for (int cudal1_i = 0; cudal1_i < 2; ++cudal1_i)
// RB2-NEXT:         cudal1_acc[cudal1_i] += cudal1_tileA[threadIdx.y + 8 * cudal1_i][cudal1_k] * cudal1_b;
// RB2-NEXT:     }
// RB2-NEXT:     __syncthreads();
// RB2-NEXT:   }
// RB2-NEXT: #pragma unroll
// RB2-NEXT:   for (int cudal1_i = 0; cudal1_i < 2; ++cudal1_i) {
// RB2-NEXT:     const unsigned cudal1_ty = threadIdx.y + 8u * cudal1_i;
// RB2-NEXT:     int row = blockIdx.y * 16u + cudal1_ty;
// RB2-NEXT:     int col = blockIdx.x * blockDim.x + threadIdx.x;
// RB2-NEXT:     float acc = cudal1_acc[cudal1_i];
// RB2-NEXT:     if (row < n && col < n) {
// RB2-NEXT:       C[row * n + col] = acc;
// RB2-NEXT:     }
// RB2-NEXT:   }
// RB2-NEXT: }
// Only matmul's launch gets the smaller block; the grid is the same.
// RB2:      matmul<<<grid, dim3(16, 8)>>>(A, B, C, n);
// RB2-NEXT: gemm_nt<<<dim3((n + 31) / 32, (n + 7) / 8), dim3(32, 8)>>>
// RB2-NEXT: early<<<grid, block>>>
// LIST-LABEL: kernel matmul
// LIST:         tile-shared(tile=16, rb=1|2|4)
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
// RB4-LABEL: __global__ void gemm_nt(
// RB4:      { // tile-shared(tile=32, rb=4): 32x32 tiles in shared memory; 32x8 threads, each computing 4 outputs (rows threadIdx.y + 8*i)
// RB4:        for (int cudal1_i = 0; cudal1_i < 4; ++cudal1_i) {
// RB4-NEXT:     double s = 0.0;
// RB4:          cudal1_tileB[cudal1_ty][threadIdx.x] = (c < N) && k < K ? Wt[c * K + k] : double(0);
// RB4:          const double cudal1_b = cudal1_tileB[cudal1_k][threadIdx.x];
// RB4:            cudal1_acc[cudal1_i] += cudal1_tileA[threadIdx.y + 8 * cudal1_i][cudal1_k] * cudal1_b;
// RB4:          double s = cudal1_acc[cudal1_i];
// RB4-NEXT:     if (r < M && c < N) {
// RB4-NEXT:       Y[r * N + c] = s + bias[c];
// RB4:      gemm_nt<<<dim3({{.*}}), dim3(32, 8)>>>(X, W, b, Y, n, n, n);
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

// A triangular product: the loop bound differs between the threads of a
// block, so the tiled loop's barriers would be divergent.
__global__ void triangular(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < row; ++k)
      acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}

// Tiling is legal; register blocking is not: the count would run once per
// thread of the smaller block instead of once per output.
// LIST-LABEL: kernel counted
// LIST:         tile-shared(tile=16, rb=1){{$}}
__global__ void counted(const float *A, const float *B, float *C, int *calls, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  // COUNTED: plan:1:11: error: step 1 (tile-shared): parameter rb=2 is not legal (rb: the statement at line [[# @LINE + 1]] before the bounds check would run once for rb outputs) at kernel 'counted'
  if (threadIdx.x == 0)
    atomicAdd(calls, 1);
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
      acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}

// Also launched through a pointer, with a block shape the tiles cannot know.
__global__ void viaPointer(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
      acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}

// The epilogue moves the output pointer: a thread computing two outputs
// would see the first one's move in the second.
__global__ void movesParam(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
      acc += A[row * n + k] * B[k * n + col];
    // PARAMS: parameter rb=2 is not legal (rb: the kernel changes (or takes the address of) its parameter 'C' at line [[# @LINE + 1]], which every output must see unchanged) at kernel 'movesParam'
    C += row * n;
    C[col] = acc;
  }
}

// The block shape is one whole macro invocation: its text is the file's
// (SQUARE_BLOCK), which the new block replaces (RewriteUtils.h, configRange).
__global__ void macroBlock(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
      acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}
#define SQUARE_BLOCK dim3(16, 16)

void run(const float *A, const float *B, float *C, const double *X, const double *W,
         const double *b, double *Y, const int *mask, int *calls, int n) {
  dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
  matmul<<<grid, block>>>(A, B, C, n);
  gemm_nt<<<dim3((n + 31) / 32, (n + 7) / 8), dim3(32, 8)>>>(X, W, b, Y, n, n, n);
  early<<<grid, block>>>(A, B, C, n);
  nested<<<grid, block>>>(A, B, C, mask, n);
  mixed<<<grid, block>>>(A, B, C, n);
  triangular<<<grid, block>>>(A, B, C, n);
  counted<<<grid, block>>>(A, B, C, calls, n);
  viaPointer<<<grid, block>>>(A, B, C, n);
  // POINTER: not legal at kernel 'viaPointer': the kernel is referenced outside a <<<>>> launch at line [[# @LINE + 1]]
  void (*later)(const float *, const float *, float *, int) = viaPointer;
  (void)later;
  macroBlock<<<grid, SQUARE_BLOCK>>>(A, B, C, n);
  movesParam<<<grid, block>>>(A, B, C, n);
}
// NOTSQUARE: launch #1 needs a square block of 8x8, 16x16 or 32x32 (compose with launch-config(block=16x16) first)
// EARLY: the kernel returns early; the tiled loop needs every thread of the block
// NESTED: no dot-product loop 'for (k = 0; k < K; ++k) acc += A[..] * B[..]' as the first loop inside the kernel's top-level bounds check
// MIXED: the operands of the dot product must be a row (depending on y only) and a column (depending on x only) of global arrays
// PARAM: parameter tile=32 is not one of {16}
// TRIANGULAR: plan:1:14: error: step 1 (tile-shared): not legal at kernel 'triangular': the loop bound must be the same for every thread of the block (the tiled loop has barriers), but it uses 'row'
// MACRO: macroBlock<<<grid, dim3(16, 8)>>>(A, B, C, n);
// RB3: parameter rb=3 is not one of {1, 2, 4} at kernel 'matmul'
