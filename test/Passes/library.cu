// library: a recognized GEMM/GEMV kernel launch becomes a cuBLAS call
// (row-major C = op(A) op(B) computed as column-major C^T = op(B)^T op(A)^T).
// RUN: cudal1-opt %s --list-transforms | FileCheck %s --check-prefix=LIST
// RUN: cudal1-opt %s --list-transforms=json | FileCheck %s --check-prefix=JSON
// RUN: cudal1-opt %s --plan '@#4: library; @#3: library; @#2: library; @#1: library; @#0: library' -o %t.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.cu | FileCheck %s
// RUN: %if nvcc %{ nvcc -arch=sm_90 -o %t.exe %t.cu -lcublas %}
// Negative cases: each reason is reported and nothing is written.
// RUN: not cudal1-opt %s --plan '@#5: library' -o %t.bad.cu 2>&1 | FileCheck %s --check-prefix=INT
// RUN: not test -e %t.bad.cu
// RUN: not cudal1-opt %s --plan '@#6: library' 2>&1 | FileCheck %s --check-prefix=GRID
// RUN: not cudal1-opt %s --plan '@#7: library' 2>&1 | FileCheck %s --check-prefix=STORE
// RUN: not cudal1-opt %s --plan '@#8: library' 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not cudal1-opt %s --plan '@#9: library' 2>&1 | FileCheck %s --check-prefix=ALIAS
// RUN: not cudal1-opt %s --plan '@#10: library' 2>&1 | FileCheck %s --check-prefix=BOUND
// Sums by CUB.
// (CUB's headers hold launches of their own: after one sum the launch ids
// change, so each sum is its own plan here.)
// RUN: cudal1-opt %s --plan '@#11: library' -o %t.sum.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.sum.cu | FileCheck %s --check-prefix=SUM
// RUN: %if nvcc %{ nvcc -arch=sm_90 -o %t.sum.exe %t.sum.cu %}
// RUN: cudal1-opt %s --plan '@#12: library' -o %t.sum2.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.sum2.cu | FileCheck %s --check-prefix=SUMWIDE
// RUN: not cudal1-opt %s --plan '@#13: library' 2>&1 | FileCheck %s --check-prefix=SUM2D
// RUN: not cudal1-opt %s --plan '@#14: library' 2>&1 | FileCheck %s --check-prefix=SUMSHAPE
// RUN: not cudal1-opt %s --plan '@#15: library' 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not cudal1-opt %s --plan '@#16: library' 2>&1 | FileCheck %s --check-prefix=CHANGED
// RUN: not cudal1-opt %s --plan '@#17: library' 2>&1 | FileCheck %s --check-prefix=CAST
// RUN: not cudal1-opt %s --plan '@#18: library' 2>&1 | FileCheck %s --check-prefix=EFFECT
// The block tree sum with one atomic per block.
// RUN: cudal1-opt %s --plan '@#19: library' -o %t.tree.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.tree.cu | FileCheck %s --check-prefix=TREE
// RUN: %if nvcc %{ nvcc -arch=sm_90 -o %t.tree.exe %t.tree.cu %}
// RUN: not cudal1-opt %s --plan '@#20: library' 2>&1 | FileCheck %s --check-prefix=TREEBIG
// RUN: not cudal1-opt %s --plan '@#21: library' 2>&1 | FileCheck %s --check-prefix=TREEODD
// RUN: not cudal1-opt %s --plan '@#22: library' 2>&1 | FileCheck %s --check-prefix=TREESHAPE
// Where the cuBLAS handle is made (handle=static, the default: before main;
// local: at the call's first execution; setup: before main, with cuBLAS's
// modules loaded eagerly and a warm-up call). Steps may mix them.
// RUN: cudal1-opt %s --plan '@#1: library(handle=static); @#0: library(handle=local)' -o %t.local.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.local.cu | FileCheck %s --check-prefix=HLOCAL
// RUN: %if nvcc %{ nvcc -arch=sm_90 -o %t.local.exe %t.local.cu -lcublas %}
// RUN: cudal1-opt %s --plan '@#0: library(handle=local)' -o %t.local1.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.local1.cu | FileCheck %s --check-prefix=HLONE
// RUN: cudal1-opt %s --plan '@#3: library(handle=setup); @#0: library(handle=setup)' -o %t.setup.cu
// RUN: grep -v "^ *// [A-Z-]*:" %t.setup.cu | FileCheck %s --check-prefix=HSETUP
// RUN: grep -c "^static Cudal1CublasSetup cudal1CublasSetup;" %t.setup.cu | FileCheck %s --check-prefix=ONCE
// RUN: %if nvcc %{ nvcc -arch=sm_90 -o %t.setup.exe %t.setup.cu -lcublas %}
// RUN: not cudal1-opt %s --plan '@#11: library(handle=local)' 2>&1 | FileCheck %s --check-prefix=HSUM
// RUN: not cudal1-opt %s --plan '@#0: library(handle=once)' 2>&1 | FileCheck %s --check-prefix=HVALUE
// RUN: not cudal1-opt %s --plan '@#0: library(handles=static)' 2>&1 | FileCheck %s --check-prefix=HKEY
#include <cuda_runtime.h>

// C = A * B, all row-major.
__global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

// Y = X * W^T (W stored N x K), as in a linear layer.
__global__ void linear(const float *X, const float *W, float *Y, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += X[row * K + k] * W[col * K + k];
    Y[row * N + col] = acc;
  }
}

// C = alpha * A^T B + beta * C in double, A stored K x M.
__global__ void dgemmTN(const double *A, const double *B, double *C, int M, int N, int K,
                        double alpha, double beta) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    double acc = 0.0;
    for (int k = 0; k < K; ++k)
      acc += A[(size_t)k * M + row] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = alpha * acc + beta * C[(size_t)row * N + col];
  }
}

// y = A x, A rows x cols.
__global__ void matvec(const float *A, const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float acc = 0.0f;
    for (int j = 0; j < cols; ++j)
      acc += A[(size_t)r * cols + j] * x[j];
    y[r] = acc;
  }
}

// y = 2 * A^T x in double, A stored cols x rows.
__global__ void matvecT(const double *A, const double *x, double *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    double acc = 0.0;
    for (int j = 0; j < cols; ++j)
      acc += x[j] * A[(size_t)j * rows + r];
    y[r] = 2.0 * acc;
  }
}

__global__ void matmulInt(const int *A, const int *B, int *C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    int acc = 0;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

__global__ void matmulRelu(const float *A, const float *B, float *C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = fmaxf(acc, 0.0f);
  }
}

// B's rows are K apart instead of N: not a product of the matrices the
// bounds describe.
__global__ void skewed(const float *A, const float *B, float *C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * K + col];
    C[row * N + col] = acc;
  }
}

// Only the upper half of the rows: not every output.
__global__ void halfRows(const float *A, const float *B, float *C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M / 2 && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

// CHECK: #include <cublas_v2.h>
// CHECK: static Cudal1Cublas cudal1Cublas;
// CHECK-LABEL: void products(
void products(int M, int N, int K, cudaStream_t st) {
  float *A, *B, *C, *X, *W, *Y, *v, *u;
  double *dA, *dB, *dC, *dv, *du;
  cudaMalloc(&A, M * K * sizeof(float));
  cudaMalloc(&B, K * N * sizeof(float));
  cudaMalloc(&C, M * N * sizeof(float));
  cudaMalloc(&X, M * K * sizeof(float));
  cudaMalloc(&W, N * K * sizeof(float));
  cudaMalloc(&Y, M * N * sizeof(float));
  cudaMalloc(&v, K * sizeof(float));
  cudaMalloc(&u, M * sizeof(float));
  cudaMalloc(&dA, K * M * sizeof(double));
  cudaMalloc(&dB, K * N * sizeof(double));
  cudaMalloc(&dC, M * N * sizeof(double));
  cudaMalloc(&dv, K * sizeof(double));
  cudaMalloc(&du, M * sizeof(double));
  dim3 block(16, 16);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  // CHECK: cudal1Gemm(cudal1Cublas, false, false, M, N, K, (float)1, A, B, (float)0, C, 0); /* cudal1 library: was matmul<<<...>>> */
  matmul<<<grid, block>>>(A, B, C, M, N, K);
  // CHECK-NEXT: cudal1Gemm(cudal1Cublas, false, true, M, N, K, (float)1, X, W, (float)0, Y, st);
  linear<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16), 0, st>>>(X, W, Y, M, N, K);
  // CHECK-NEXT: cudal1Gemm(cudal1Cublas, true, false, M, N, K, (double)(0.5), dA, dB, (double)(2.0), dC, 0);
  dgemmTN<<<grid, block>>>(dA, dB, dC, M, N, K, 0.5, 2.0);
  // CHECK-NEXT: cudal1Gemv(cudal1Cublas, false, M, K, (float)1, A, v, (float)0, u, 0);
  matvec<<<(M + 255) / 256, 256>>>(A, v, u, M, K);
  // CHECK-NEXT: cudal1Gemv(cudal1Cublas, true, M, K, (double)2.0, dA, dv, (double)0, du, 0);
  matvecT<<<(M + 127) / 128, 128>>>(dA, dv, du, M, K);
  cudaDeviceSynchronize();
}

void refused(int M, int N, int K) {
  int *iA, *iB, *iC;
  float *A, *B, *C;
  cudaMalloc(&iA, M * K * sizeof(int));
  cudaMalloc(&iB, K * N * sizeof(int));
  cudaMalloc(&iC, M * N * sizeof(int));
  cudaMalloc(&A, M * K * sizeof(float));
  cudaMalloc(&B, K * N * sizeof(float));
  cudaMalloc(&C, M * N * sizeof(float));
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  matmulInt<<<grid, block>>>(iA, iB, iC, M, N, K);
  // A grid rounded down misses the last partial tiles.
  matmul<<<dim3(N / 16, M / 16), block>>>(A, B, C, M, N, K);
  matmulRelu<<<grid, block>>>(A, B, C, M, N, K);
  skewed<<<grid, block>>>(A, B, C, M, N, K);
  matmul<<<grid, block>>>(A, B, A, M, N, K);
  halfRows<<<grid, block>>>(A, B, C, M, N, K);
}

__global__ void sumSquares(const float *x, float *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(total, x[i] * x[i]);
}

__global__ void sumWide(const int *x, unsigned long long *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(total, (unsigned long long)x[i]);
}

// Adds only every other element: not the canonical sum.
__global__ void sumEven(const float *x, float *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(total, x[2 * i]);
}

// A flag in the bounds check that bounds no thread id: the product of
// some launches only.
__global__ void matmulIf(const float *A, const float *B, float *C, int M, int N, int K, bool on) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N && on) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

// SUM: #include <cub/device/device_reduce.cuh>
// SUM-LABEL: void sums(
void sums(int n, int reps) {
  float *x, *t;
  int *ix;
  unsigned long long *u;
  cudaMalloc(&x, 2 * n * sizeof(float));
  cudaMalloc(&t, reps * sizeof(float));
  cudaMalloc(&ix, n * sizeof(int));
  cudaMalloc(&u, sizeof(unsigned long long));
  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  for (int r = 0; r < reps; ++r) {
    // SUM: static Cudal1CubScratch [[S:cudal1Cub[0-9]+]];  // cudal1 library
    // SUM-NEXT: cudal1SumInto([[S]], x, n, t + r, Cudal1Square<float>(), 0); /* cudal1 library: was sumSquares<<<...>>> */
    sumSquares<<<grid, block>>>(x, t + r, n);
  }
  // SUMWIDE: cudal1SumInto({{cudal1Cub[0-9]+}}, ix, n, u, Cudal1AsOut<unsigned long long>(), 0); /* cudal1 library: was sumWide<<<...>>> */
  sumWide<<<(n + 255) / 256, 256>>>(ix, u, n);
  // Two rows of blocks add every element twice.
  sumSquares<<<dim3((n + 255) / 256, 2), 256>>>(x, t, n);
  sumEven<<<grid, block>>>(x, t, n);
  matmulIf<<<dim3((n + 15) / 16, (n + 15) / 16), dim3(16, 16)>>>(x, x, t, n, n, n, false);
}

// The grid was computed for another n: it may not cover the outputs.
void changed(float *x, float *t, int n) {
  dim3 grid2((n + 15) / 16, (n + 15) / 16);
  n *= 2;
  matmul<<<grid2, dim3(16, 16)>>>(x, x, t, n, n, n);
}

// Rounds each summand to float first: not (double)x[i].
__global__ void sumRounded(const double *x, double *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(total, (float)x[i]);
}

// An index declaration that writes a parameter.
__global__ void sumSkip(const float *x, float *total, int n) {
  int i = (n = n - 1, blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n)
    atomicAdd(total, x[i]);
}

void casts(const double *x, double *t, const float *f, float *ft, int n) {
  sumRounded<<<(n + 255) / 256, 256>>>(x, t, n);
  sumSkip<<<(n + 255) / 256, 256>>>(f, ft, n);
}

__global__ void blockSum(const float *x, float *result, int n) {
  __shared__ float cache[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cache[tid] = (i < n) ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      cache[tid] += cache[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(result, cache[0]);
}

// Pairs elements one apart in the last step twice: not the tree.
__global__ void blockSumOff(const float *x, float *result, int n) {
  __shared__ float cache[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cache[threadIdx.x] = (i < n) ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s)
      cache[threadIdx.x] += cache[threadIdx.x + s + 1];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    atomicAdd(result, cache[0]);
}

// TREE-LABEL: void trees(
void trees(const float *x, float *r, int n) {
  // TREE: static Cudal1CubScratch [[S:cudal1Cub[0-9]+]];  // cudal1 library
  // TREE-NEXT: cudal1SumInto([[S]], x, n, r, Cudal1AsOut<float>(), 0); /* cudal1 library: was blockSum<<<...>>> */
  blockSum<<<(n + 255) / 256, 256>>>(x, r, n);
  // A block larger than the shared array; a block that is no power of two.
  blockSum<<<(n + 511) / 512, 512>>>(x, r, n);
  blockSum<<<(n + 95) / 96, 96>>>(x, r, n);
  blockSumOff<<<(n + 255) / 256, 256>>>(x, r, n);
}

int main() {
  products(64, 48, 32, 0);
  return 0;
}
// LIST: launch #0 matmul
// LIST: library  [link -lcublas]
// JSON: "links": [
// JSON-NEXT: "cublas"
// INT: the element type is int (cuBLAS: float or double)
// GRID: cannot prove the grid covers every output in x (expected grid.x = (N + b - 1) / b with b the block's constant size)
// STORE: the store must be 'C[..] = acc', 'alpha * acc' or 'alpha * acc + beta * C[..]'
// INDEX: the operand indices are not those of a row-major product
// ALIAS: the output argument is not a variable distinct from the operands
// BOUND: bound check {{.*}} is not 'global id < parameter'
// SUM2D: the launch's grid or block is not one-dimensional
// SUMSHAPE: the summand does not read x at the global thread id
// FLAG: the bounds check must be comparisons 'a < b' joined by &&
// CHANGED: cannot prove the grid covers every output in x {{.*}}; 'n' changes in the function
// CAST: the summand is cast to another type than the target's
// EFFECT: not a GEMM/GEMV or the canonical atomic sum
// TREEBIG: the block tree sum needs a constant block size that is a power of two no larger than its shared array (256)
// TREEODD: the block tree sum needs a constant block size that is a power of two
// TREESHAPE: not a GEMM/GEMV, an atomic sum or the block tree sum with one atomicAdd per block
// HLOCAL: struct Cudal1Cublas {
// HLOCAL: static Cudal1Cublas cudal1Cublas; // cudal1 library: made before main
// HLOCAL-LABEL: void products(
// HLOCAL: static Cudal1Cublas [[H:cudal1Blas[0-9]+]]; // cudal1 library: handle made at the first call
// HLOCAL-NEXT: cudal1Gemm([[H]], false, false, M, N, K, (float)1, A, B, (float)0, C, 0); /* cudal1 library: was matmul<<<...>>> */
// HLOCAL-NEXT: cudal1Gemm(cudal1Cublas, false, true, M, N, K, (float)1, X, W, (float)0, Y, st); /* cudal1 library: was linear<<<...>>> */
// HLOCAL-NEXT: dgemmTN<<<grid, block>>>
// HLONE: struct Cudal1Cublas {
// HLONE-NOT: static Cudal1Cublas cudal1Cublas;
// HLONE-NOT: Cudal1CublasSetup cudal1CublasSetup;
// HLONE: static Cudal1Cublas [[H:cudal1Blas[0-9]+]]; // cudal1 library: handle made at the first call
// HLONE-NEXT: cudal1Gemm([[H]], false, false,
// HLONE-NOT: static Cudal1Cublas cudal1Cublas;
// HSETUP: Cudal1EagerLoading() { setenv("CUDA_MODULE_LOADING", "EAGER", 0); }
// HSETUP: struct Cudal1CublasSetup : Cudal1EagerLoading, Cudal1Cublas {
// HSETUP-NOT: static Cudal1Cublas cudal1Cublas;
// HSETUP: static Cudal1CublasSetup cudal1CublasSetup; // cudal1 library: cuBLAS set up before main
// HSETUP-NOT: static Cudal1Cublas cudal1Cublas;
// HSETUP-LABEL: void products(
// HSETUP: cudal1Gemm(cudal1CublasSetup, false, false, M, N, K, (float)1, A, B, (float)0, C, 0); /* cudal1 library: was matmul<<<...>>> */
// HSETUP: cudal1Gemv(cudal1CublasSetup, false, M, K, (float)1, A, v, (float)0, u, 0); /* cudal1 library: was matvec<<<...>>> */
// ONCE: {{^1$}}
// HSUM: handle=local: the launch becomes a CUB sum, which has no cuBLAS handle
// HVALUE: parameter handle=once is not one of {static, local, setup}
// HKEY: unknown parameter 'handles'
