// Level 1, matrix multiply with a 1-D thread mapping: one thread per output
// of C = A * B, the row and column derived as idx / N and idx % N, a flat
// grid of M * N threads in blocks of 256.
#include "common.h"

__global__ void matmulFlat(const float* A, const float* B, float* C, int M, int N, int K) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int row = idx / N;
  int col = idx % N;
  if (idx < M * N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

int main(int argc, char** argv) {
  int M = (int)argInt(argc, argv, "m", 2048, 128);
  int N = (int)argInt(argc, argv, "n", 1024, 128);
  int K = (int)argInt(argc, argv, "k", 1024, 64);
  float* A = deviceAlloc<float>((size_t)M * K);
  float* B = deviceAlloc<float>((size_t)K * N);
  float* C = deviceAlloc<float>((size_t)M * N);
  fillUniform(A, (size_t)M * K, 91);
  fillUniform(B, (size_t)K * N, 92);

  const int threads = 256;
  GpuTimer timer;
  timer.start();
  matmulFlat<<<(M * N + threads - 1) / threads, threads>>>(A, B, C, M, N, K);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(C, (size_t)M * N));
  printTime(ms);
  printFloor(((double)M * K + (double)K * N + (double)M * N) * sizeof(float), 2.0 * M * N * K,
             "f32");
  cudaFree(A); cudaFree(B); cudaFree(C);
  return 0;
}
