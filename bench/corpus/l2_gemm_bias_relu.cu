// Level 2, linear layer: Y = relu(X W^T + b) as three launches (naive GEMM,
// bias add, ReLU), each making a full pass over Y.
#include "common.h"

__global__ void gemmXWt(const float* X, const float* Wt, float* Y, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += X[row * K + k] * Wt[col * K + k];
    Y[row * N + col] = acc;
  }
}

__global__ void addBias(float* Y, const float* b, int M, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < M * N) Y[i] += b[i % N];
}

__global__ void reluInPlace(float* Y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) Y[i] = fmaxf(Y[i], 0.0f);
}

int main(int argc, char** argv) {
  int M = (int)argInt(argc, argv, "batch", 4096, 128);
  int K = (int)argInt(argc, argv, "in", 1024, 64);
  int N = (int)argInt(argc, argv, "out", 1024, 64);
  float* X = deviceAlloc<float>((size_t)M * K);
  float* W = deviceAlloc<float>((size_t)N * K);
  float* b = deviceAlloc<float>(N);
  float* Y = deviceAlloc<float>((size_t)M * N);
  fillUniform(X, (size_t)M * K, 89);
  fillUniform(W, (size_t)N * K, 90, -0.05, 0.05);
  fillUniform(b, N, 91, -0.1, 0.1);

  dim3 block2(16, 16);
  dim3 grid2((N + 15) / 16, (M + 15) / 16);
  dim3 block(256);
  dim3 grid((M * N + 255) / 256);
  GpuTimer timer;
  timer.start();
  gemmXWt<<<grid2, block2>>>(X, W, Y, M, N, K);
  addBias<<<grid, block>>>(Y, b, M, N);
  reluInPlace<<<grid, block>>>(Y, M * N);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(Y, (size_t)M * N));
  printTime(ms);
  printFloor(((double)M * K + (double)N * K + N + (double)M * N) * sizeof(float),
             2.0 * M * N * K + 2.0 * M * N, "f32");
  cudaFree(X); cudaFree(W); cudaFree(b); cudaFree(Y);
  return 0;
}
