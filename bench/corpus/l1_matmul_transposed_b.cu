// Level 1, matrix multiply with a transposed right operand: C = A * B^T
// (as in a linear layer, B stored out_features x in_features). Each thread
// reads a row of B, so neighbouring threads read addresses K floats apart.
#include "common.h"

__global__ void matmulBT(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[col * K + k];
    C[row * N + col] = acc;
  }
}

int main(int argc, char** argv) {
  int M = (int)argInt(argc, argv, "m", 2048, 128);
  int N = (int)argInt(argc, argv, "n", 2048, 128);
  int K = (int)argInt(argc, argv, "k", 1024, 64);
  float* A = deviceAlloc<float>((size_t)M * K);
  float* B = deviceAlloc<float>((size_t)N * K);
  float* C = deviceAlloc<float>((size_t)M * N);
  fillUniform(A, (size_t)M * K, 49);
  fillUniform(B, (size_t)N * K, 50);

  dim3 block(16, 16);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  GpuTimer timer;
  timer.start();
  matmulBT<<<grid, block>>>(A, B, C, M, N, K);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(C, (size_t)M * N));
  printTime(ms);
  printFloor(((double)M * K + (double)N * K + (double)M * N) * sizeof(float), 2.0 * M * N * K,
             "f32");
  cudaFree(A); cudaFree(B); cudaFree(C);
  return 0;
}
