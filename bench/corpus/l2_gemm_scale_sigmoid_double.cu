// Level 2, in double: Y = sigmoid(alpha * (A B) + beta) where the GEMM, the
// scaling and the sigmoid are separate kernels with temporaries.
#include "common.h"

__global__ void gemm(const double* A, const double* B, double* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    double acc = 0.0;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

__global__ void scaleShift(const double* in, double* out, int n, double alpha, double beta) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * in[i] + beta;
}

__global__ void sigmoid(const double* in, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0 / (1.0 + exp(-in[i]));
}

int main(int argc, char** argv) {
  int M = (int)argInt(argc, argv, "m", 2048, 128);
  int N = (int)argInt(argc, argv, "n", 2048, 128);
  int K = (int)argInt(argc, argv, "k", 1024, 64);
  double* A = deviceAlloc<double>((size_t)M * K);
  double* B = deviceAlloc<double>((size_t)K * N);
  double* C = deviceAlloc<double>((size_t)M * N);
  double* T = deviceAlloc<double>((size_t)M * N);
  double* Y = deviceAlloc<double>((size_t)M * N);
  fillUniform(A, (size_t)M * K, 92);
  fillUniform(B, (size_t)K * N, 93);

  dim3 block2(16, 16);
  dim3 grid2((N + 15) / 16, (M + 15) / 16);
  dim3 block(256);
  dim3 grid((M * N + 255) / 256);
  GpuTimer timer;
  timer.start();
  gemm<<<grid2, block2>>>(A, B, C, M, N, K);
  scaleShift<<<grid, block>>>(C, T, M * N, 0.05, 0.1);
  sigmoid<<<grid, block>>>(T, Y, M * N);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(Y, (size_t)M * N));
  printTime(ms);
  printFloor(((double)M * K + (double)K * N + (double)M * N) * sizeof(double),
             2.0 * M * N * K + 5.0 * M * N, "f64");
  cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(T); cudaFree(Y);
  return 0;
}
