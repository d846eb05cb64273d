// library on GEMMs written in the spellings real code has (issue 18 item 3):
// accumulated in place (PolyBench), a scaled accumulator with swapped names
// and a transposed operand in double, a 1-D thread mapping; and kernels that
// look like one but are not.
// RUN: cudal1-opt %s --plan '@#2: library; @#1: library; @#0: library' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -o %t.exe %t.cu -lcublas %}
// RUN: not cudal1-opt %s --plan '@#3: library' 2>&1 | FileCheck %s --check-prefix=DEP
// RUN: not cudal1-opt %s --plan '@#4: library' 2>&1 | FileCheck %s --check-prefix=FLAT
// RUN: not cudal1-opt %s --plan '@#5: library' 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not cudal1-opt %s --plan '@#6: library' 2>&1 | FileCheck %s --check-prefix=LD
// RUN: cudal1-opt %s --plan '@#7: library' -o %t.tree.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.tree.cu | FileCheck %s --check-prefix=TREE
// RUN: cudal1-opt %s --plan '@#8: library' -o %t.flatout.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.flatout.cu | FileCheck %s --check-prefix=FLATOUT
// RUN: %if nvcc %{ nvcc -arch=sm_90 -o %t.flatout.exe %t.flatout.cu -lcublas %}
// RUN: not cudal1-opt %s --plan '@#9: library' 2>&1 | FileCheck %s --check-prefix=MIXED
#include <cuda_runtime.h>

// PolyBench gemm: C = alpha * A * B + beta * C, accumulated in C.
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

// Y = s * X * Wt^T: the column on y, the row on x, the factors reordered.
__global__ void scaledNT(const double *X, const double *Wt, double *Y, int rows, int cols,
                         int depth, double s) {
  int q = blockIdx.x * blockDim.x + threadIdx.x;
  int p = blockIdx.y * blockDim.y + threadIdx.y;
  if (p < cols && q < rows) {
    double sum = 0.0;
    for (int t = 0; t < depth; t++)
      sum = sum + Wt[p * depth + t] * X[q * depth + t] * s;
    Y[q * cols + p] = sum;
  }
}

// One thread per output along x: row = idx / N, col = idx % N.
__global__ void flatGemm(const float *A, const float *B, float *C, int M, int N, int K) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int row = idx / N;
  int col = idx % N;
  if (idx < M * N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

// The same written C[idx], row and column declared inside the check
// (bench/corpus/l1_matmul_tall_skinny.cu): idx is row * N + col.
__global__ void flatOut(const float *A, const float *B, float *C, int M, int N, int K) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < M * N) {
    int row = idx / N;
    int col = idx % N;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[idx] = acc;
  }
}

// C[idx] with the row by N but the column by M: not a product's element.
__global__ void flatMixed(const float *A, const float *B, float *C, int M, int N, int K) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < M * N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[(idx / N) * K + k] * B[k * N + idx % M];
    C[idx] = acc;
  }
}

// C's rows depend on each other: C[k][j] is read while C[i][j] is written.
__global__ void recurrence(const float *A, float *C, int M, int N, int K) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < M && j < N) {
    for (int k = 0; k < K; ++k)
      C[i * N + j] += A[i * K + k] * C[k * N + j];
  }
}

// Scaled inside the loop and again at the store.
__global__ void scaledTwice(const float *A, const float *B, float *C, int M, int N, int K,
                            float alpha) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += alpha * A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * acc;
  }
}

// B's rows are ldb apart: a sub-matrix, not the dense operand cuBLAS reads.
__global__ void strided(const float *A, const float *B, float *C, int M, int N, int K,
                        int ldb) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * ldb + col];
    C[row * N + col] = acc;
  }
}

// The block tree sum with other names and operand orders.
__global__ void reduceTree(const float *in, float *out, int n) {
  __shared__ float sdata[128];
  int gid = threadIdx.x + blockDim.x * blockIdx.x;
  sdata[threadIdx.x] = gid < n ? in[gid] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride)
      sdata[threadIdx.x] += sdata[stride + threadIdx.x];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    atomicAdd(out, sdata[0]);
}

// CHECK-LABEL: void run(
void run(int M, int N, int K) {
  double *a, *b, *c;
  float *A, *B, *C;
  cudaMalloc(&a, M * K * sizeof(double));
  cudaMalloc(&b, K * N * sizeof(double));
  cudaMalloc(&c, M * N * sizeof(double));
  cudaMalloc(&A, M * K * sizeof(float));
  cudaMalloc(&B, K * N * sizeof(float));
  cudaMalloc(&C, M * N * sizeof(float));
  dim3 block(32, 8);
  dim3 grid((N + 31) / 32, (M + 7) / 8);
  // CHECK: cudal1Gemm(cudal1Cublas, false, false, M, N, K, (double)(1.5), a, b, (double)(0.5), c, 0); /* cudal1 library: was gemm_kernel<<<...>>> */
  gemm_kernel<<<grid, block>>>(M, N, K, 1.5, 0.5, a, b, c);
  // CHECK-NEXT: cudal1Gemm(cudal1Cublas, false, true, N, M, K, (double)(2.0), a, b, (double)0, c, 0); /* cudal1 library: was scaledNT<<<...>>> */
  scaledNT<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(a, b, c, N, M, K, 2.0);
  // CHECK-NEXT: cudal1Gemm(cudal1Cublas, false, false, M, N, K, (float)1, A, B, (float)0, C, 0); /* cudal1 library: was flatGemm<<<...>>> */
  flatGemm<<<(M * N + 255) / 256, 256>>>(A, B, C, M, N, K);
  recurrence<<<grid, block>>>(A, C, M, N, K);
  flatGemm<<<(M + 255) / 256, 256>>>(A, B, C, M, N, K);
  scaledTwice<<<grid, block>>>(A, B, C, M, N, K, 2.0f);
  strided<<<grid, block>>>(A, B, C, M, N, K, N);
  // TREE: cudal1SumInto({{cudal1Cub[0-9]+}}, A, M, C, Cudal1AsOut<float>(), 0); /* cudal1 library: was reduceTree<<<...>>> */
  reduceTree<<<(M + 127) / 128, 128>>>(A, C, M);
  // FLATOUT: cudal1Gemm(cudal1Cublas, false, false, M, N, K, (float)1, A, B, (float)0, C, 0); /* cudal1 library: was flatOut<<<...>>> */
  flatOut<<<(M * N + 255) / 256, 256>>>(A, B, C, M, N, K);
  flatMixed<<<(M * N + 255) / 256, 256>>>(A, B, C, M, N, K);
  cudaDeviceSynchronize();
}

int main() {
  run(64, 48, 32);
  return 0;
}
// DEP: the output is also an operand
// FLAT: cannot prove the grid covers every output in x (expected grid.x = (M * N + b - 1) / b with b the block's constant size)
// TWICE: the product is scaled both inside and after the loop
// LD: the operand indices are not those of a row-major product
// MIXED: the operand indices are not those of a row-major product
