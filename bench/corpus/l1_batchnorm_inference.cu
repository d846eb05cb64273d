// Level 1, batch norm in inference mode on NCHW: per-channel running mean,
// variance, gain and bias; one thread per element, channel from the index.
#include "common.h"

__global__ void batchNormInfer(const float* x, float* y, const float* mean, const float* var,
                               const float* gamma, const float* beta, int N, int C, int HW,
                               float eps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N * C * HW) {
    int c = (i / HW) % C;
    y[i] = (x[i] - mean[c]) / sqrtf(var[c] + eps) * gamma[c] + beta[c];
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "batch", 32, 2);
  int C = (int)argInt(argc, argv, "channels", 128, 16);
  int H = (int)argInt(argc, argv, "height", 64, 16);
  int W = (int)argInt(argc, argv, "width", 64, 16);
  int reps = (int)argInt(argc, argv, "reps", 20, 2);
  int HW = H * W;
  int n = N * C * HW;
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  float* mean = deviceAlloc<float>(C);
  float* var = deviceAlloc<float>(C);
  float* gamma = deviceAlloc<float>(C);
  float* beta = deviceAlloc<float>(C);
  fillUniform(x, n, 32);
  fillUniform(mean, C, 33, -0.1, 0.1);
  fillUniform(var, C, 34, 0.5, 1.5);
  fillUniform(gamma, C, 35, 0.5, 1.5);
  fillUniform(beta, C, 36, -0.1, 0.1);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    batchNormInfer<<<grid, block>>>(x, y, mean, var, gamma, beta, N, C, HW, 1e-5f);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 4.0 * n, "f32");
  cudaFree(x); cudaFree(y); cudaFree(mean); cudaFree(var); cudaFree(gamma); cudaFree(beta);
  return 0;
}
