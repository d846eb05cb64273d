// tile-shared on matrix products in the spellings real code has (issue 18
// item 3): PolyBench's gemm accumulating in C in place, a scaled
// accumulator with swapped names and `sum = sum + ...`; and the kernels it
// must refuse, with their reasons.
// RUN: cudal1-opt %s --plan '@gemm_kernel: tile-shared(tile=16)' -o %t.cu
// RUN: grep -v "^ *// [A-Z0-9-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.o %t.cu %}
// RUN: cudal1-opt %s --plan '@scaled: tile-shared(tile=16, rb=2)' -o %t.rb.cu
// RUN: grep -v "^ *// [A-Z0-9-]*:" %t.rb.cu | FileCheck %s --check-prefix=SCALED
// RUN: %if nvcc %{ nvcc -arch=sm_90 -c -o %t.rb.o %t.rb.cu %}
// RUN: not cudal1-opt %s --plan '@gemm_kernel: tile-shared(tile=16, rb=2)' 2>&1 | FileCheck %s --check-prefix=INPLACE-RB
// RUN: not cudal1-opt %s --plan '@recurrence: tile-shared(tile=16)' 2>&1 | FileCheck %s --check-prefix=RECURRENCE
// RUN: not cudal1-opt %s --plan '@flat: tile-shared(tile=16)' 2>&1 | FileCheck %s --check-prefix=FLAT
// RUN: not cudal1-opt %s --plan '@moving: tile-shared(tile=16)' 2>&1 | FileCheck %s --check-prefix=MOVING

// CHECK-LABEL: __global__ void gemm_kernel(
// CHECK:      { // tile-shared(tile=16): 16x16 tiles of both operands in shared memory
// CHECK-NEXT:   double cudal1_acc = double(0);
// CHECK-NEXT:   if ((i < ni) && (j < nj)) {
// CHECK-NEXT:     c[i * nj + j] *= beta;
// CHECK-NEXT:     int k;
// CHECK-NEXT:     cudal1_acc = c[i * nj + j];
// CHECK-NEXT:   }
// CHECK:          int k = cudal1_t + threadIdx.x;
// CHECK-NEXT:     cudal1_tileA[threadIdx.y][threadIdx.x] = (i < ni) && k < nk ? a[i * nk + k] : double(0);
// CHECK:          int k = cudal1_t + threadIdx.y;
// CHECK-NEXT:     cudal1_tileB[threadIdx.y][threadIdx.x] = (j < nj) && k < nk ? b[k * nj + j] : double(0);
// CHECK:          cudal1_acc += alpha * cudal1_tileA[threadIdx.y][cudal1_k] * cudal1_tileB[cudal1_k][threadIdx.x];
// CHECK:        if ((i < ni) && (j < nj)) {
// CHECK-NEXT:     c[i * nj + j] = cudal1_acc;
// CHECK-NEXT:   }
__global__ void gemm_kernel(int ni, int nj, int nk, double alpha, double beta, double *a,
                            double *b, double *c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if ((i < ni) && (j < nj)) {
    c[i * nj + j] *= beta;
    int k;
    for (k = 0; k < nk; k++) {
      c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
    }
  }
}

// SCALED-LABEL: __global__ void scaled(
// SCALED: cudal1_acc[cudal1_i] += s * cudal1_tileA[threadIdx.y + 8 * cudal1_i][cudal1_k] * cudal1_b;
__global__ void scaled(const float *X, const float *W, float *Y, int M, int N, int K, float s) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < M && c < N) {
    float sum = 0.0f;
    for (int t = 0; t < K; t++)
      sum = sum + s * X[r * K + t] * W[t * N + c];
    Y[r * N + c] = sum;
  }
}

// C's rows are read while other threads sum into them: a recurrence.
__global__ void recurrence(const float *A, float *C, int M, int N, int K) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < M && j < N) {
    for (int k = 0; k < K; ++k)
      C[i * N + j] += A[i * K + k] * C[k * N + j];
  }
}

// A 1-D mapping: both operands follow x.
__global__ void flat(const float *A, const float *B, float *C, int M, int N, int K) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int row = idx / N, col = idx % N;
  if (idx < M * N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

// The element summed into moves with k: no single sum per thread.
__global__ void moving(const float *A, const float *B, float *C, int M, int N, int K) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < M && j < N) {
    for (int k = 0; k < K; ++k)
      C[i * N + k] += A[i * K + k] * B[k * N + j];
  }
}

void run(double *a, double *b, double *c, float *X, float *W, float *Y, int n) {
  dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
  gemm_kernel<<<grid, block>>>(n, n, n, 1.5, 0.5, a, b, c);
  scaled<<<grid, block>>>(X, W, Y, n, n, n, 2.0f);
  recurrence<<<grid, block>>>(X, Y, n, n, n);
  flat<<<grid, block>>>(X, W, Y, n, n, n);
  moving<<<grid, block>>>(X, W, Y, n, n, n);
}
// INPLACE-RB: parameter rb=2 is not legal (rb: the sum accumulates in place in global memory (only rb=1 keeps it in a register))
// RECURRENCE: the output C is also an operand: the sum reads elements other threads write (a recurrence)
// FLAT: a matrix product with a 1-D mapping: launch #3 has a grid that is not 1-D
// MOVING: the in-place sum's element moves with the loop counter
