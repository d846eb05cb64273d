// Level 1, matrix multiply in double: C = A * B, M x K times K x N, one thread
// per output, blocks of 32 x 8 threads.
#include "common.h"

__global__ void dgemmNaive(const double* A, const double* B, double* C, int M, int N, int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    double acc = 0.0;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
  }
}

int main(int argc, char** argv) {
  int M = (int)argInt(argc, argv, "m", 2048, 128);
  int N = (int)argInt(argc, argv, "n", 1024, 128);
  int K = (int)argInt(argc, argv, "k", 1024, 64);
  double* A = deviceAlloc<double>((size_t)M * K);
  double* B = deviceAlloc<double>((size_t)K * N);
  double* C = deviceAlloc<double>((size_t)M * N);
  fillUniform(A, (size_t)M * K, 43);
  fillUniform(B, (size_t)K * N, 44);

  dim3 block(32, 8);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  GpuTimer timer;
  timer.start();
  dgemmNaive<<<grid, block>>>(A, B, C, M, N, K);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(C, (size_t)M * N));
  printTime(ms);
  printFloor(((double)M * K + (double)K * N + (double)M * N) * sizeof(double),
             2.0 * M * N * K, "f64");
  cudaFree(A); cudaFree(B); cudaFree(C);
  return 0;
}
