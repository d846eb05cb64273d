// Level 2, scores = softmax(Q K^T / sqrt(d)) row-wise, GEMM then a one
// thread per row softmax in place.
#include "common.h"

__global__ void scores(const float* Q, const float* K, float* S, int n, int m, int d,
                       float scale) {
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && j < m) {
    float acc = 0.0f;
    for (int k = 0; k < d; ++k) acc += Q[i * d + k] * K[j * d + k];
    S[i * m + j] = acc * scale;
  }
}

__global__ void softmaxInPlace(float* S, int n, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float mx = -INFINITY;
    for (int j = 0; j < m; ++j) mx = fmaxf(mx, S[i * m + j]);
    float sum = 0.0f;
    for (int j = 0; j < m; ++j) {
      S[i * m + j] = expf(S[i * m + j] - mx);
      sum += S[i * m + j];
    }
    for (int j = 0; j < m; ++j) S[i * m + j] /= sum;
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "queries", 4096, 128);
  int m = (int)argInt(argc, argv, "keys", 4096, 128);
  int d = (int)argInt(argc, argv, "dim", 128, 32);
  float* Q = deviceAlloc<float>((size_t)n * d);
  float* K = deviceAlloc<float>((size_t)m * d);
  float* S = deviceAlloc<float>((size_t)n * m);
  fillUniform(Q, (size_t)n * d, 110);
  fillUniform(K, (size_t)m * d, 111);

  dim3 block2(16, 16);
  dim3 grid2((m + 15) / 16, (n + 15) / 16);
  dim3 block(128);
  dim3 grid((n + 127) / 128);
  GpuTimer timer;
  timer.start();
  scores<<<grid2, block2>>>(Q, K, S, n, m, d, 1.0f / sqrtf((float)d));
  softmaxInPlace<<<grid, block>>>(S, n, m);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(S, (size_t)n * m));
  printTime(ms);
  printFloor(((double)n * d + (double)m * d + (double)n * m) * sizeof(float),
             2.0 * n * m * d + 5.0 * n * m, "f32");
  cudaFree(Q); cudaFree(K); cudaFree(S);
  return 0;
}
