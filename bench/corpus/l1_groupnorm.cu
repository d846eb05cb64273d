// Level 1, group norm on NCHW: one thread per (sample, group) computes mean
// and variance, then one thread per element normalises.
#include "common.h"

__global__ void groupStats(const float* x, float* mean, float* rstd, int N, int G, int groupSize,
                           float eps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N * G) {
    const float* p = x + (size_t)i * groupSize;
    float s = 0.0f;
    for (int k = 0; k < groupSize; ++k) s += p[k];
    float m = s / groupSize;
    float v = 0.0f;
    for (int k = 0; k < groupSize; ++k) v += (p[k] - m) * (p[k] - m);
    mean[i] = m;
    rstd[i] = rsqrtf(v / groupSize + eps);
  }
}

__global__ void groupApply(const float* x, float* y, const float* mean, const float* rstd,
                           const float* gamma, const float* beta, int C, int HW, int groupSize,
                           int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int g = i / groupSize;  // (sample, group) index
    int c = (i / HW) % C;
    y[i] = (x[i] - mean[g]) * rstd[g] * gamma[c] + beta[c];
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "batch", 32, 2);
  int C = (int)argInt(argc, argv, "channels", 256, 32);
  int G = (int)argInt(argc, argv, "groups", 32, 8);
  int H = (int)argInt(argc, argv, "height", 32, 8);
  int W = (int)argInt(argc, argv, "width", 32, 8);
  int reps = (int)argInt(argc, argv, "reps", 5, 1);
  int HW = H * W;
  int n = N * C * HW;
  int groupSize = (C / G) * HW;
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  float* mean = deviceAlloc<float>(N * G);
  float* rstd = deviceAlloc<float>(N * G);
  float* gamma = deviceAlloc<float>(C);
  float* beta = deviceAlloc<float>(C);
  fillUniform(x, n, 38);
  fillUniform(gamma, C, 39, 0.5, 1.5);
  fillUniform(beta, C, 40, -0.5, 0.5);

  dim3 block(128);
  dim3 gridStats((N * G + block.x - 1) / block.x);
  dim3 gridAll((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    groupStats<<<gridStats, block>>>(x, mean, rstd, N, G, groupSize, 1e-5f);
    groupApply<<<gridAll, block>>>(x, y, mean, rstd, gamma, beta, C, HW, groupSize, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 7.0 * n, "f32");
  cudaFree(x); cudaFree(y); cudaFree(mean); cudaFree(rstd); cudaFree(gamma); cudaFree(beta);
  return 0;
}
