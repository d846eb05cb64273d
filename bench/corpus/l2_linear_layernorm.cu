// Level 2, linear layer followed by layer norm: naive GEMM, then one thread
// per row for the normalisation.
#include "common.h"

__global__ void linearBias(const float* X, const float* W, const float* b, float* Y, int M, int N,
                           int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = b[col];
    for (int k = 0; k < K; ++k) acc += X[row * K + k] * W[k * N + col];
    Y[row * N + col] = acc;
  }
}

__global__ void layerNormRows(const float* Y, float* Z, int M, int N, float eps) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < M) {
    float mean = 0.0f, sq = 0.0f;
    for (int j = 0; j < N; ++j) {
      mean += Y[r * N + j];
      sq += Y[r * N + j] * Y[r * N + j];
    }
    mean /= N;
    float var = sq / N - mean * mean;
    float inv = rsqrtf(var + eps);
    for (int j = 0; j < N; ++j) Z[r * N + j] = (Y[r * N + j] - mean) * inv;
  }
}

int main(int argc, char** argv) {
  int M = (int)argInt(argc, argv, "batch", 4096, 128);
  int K = (int)argInt(argc, argv, "in", 768, 64);
  int N = (int)argInt(argc, argv, "out", 768, 64);
  float* X = deviceAlloc<float>((size_t)M * K);
  float* W = deviceAlloc<float>((size_t)K * N);
  float* b = deviceAlloc<float>(N);
  float* Y = deviceAlloc<float>((size_t)M * N);
  float* Z = deviceAlloc<float>((size_t)M * N);
  fillUniform(X, (size_t)M * K, 104);
  fillUniform(W, (size_t)K * N, 105, -0.05, 0.05);
  fillUniform(b, N, 106, -0.1, 0.1);

  dim3 block2(16, 16);
  dim3 grid2((N + 15) / 16, (M + 15) / 16);
  dim3 block(128);
  dim3 grid((M + 127) / 128);
  GpuTimer timer;
  timer.start();
  linearBias<<<grid2, block2>>>(X, W, b, Y, M, N, K);
  layerNormRows<<<grid, block>>>(Y, Z, M, N, 1e-5f);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(Z, (size_t)M * N));
  printTime(ms);
  printFloor(((double)M * K + (double)K * N + N + (double)M * N) * sizeof(float),
             2.0 * M * N * K + 6.0 * M * N, "f32");
  cudaFree(X); cudaFree(W); cudaFree(b); cudaFree(Y); cudaFree(Z);
  return 0;
}
