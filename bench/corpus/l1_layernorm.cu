// Level 1, layer norm over the last dimension with gain and bias: one thread
// per row, two-pass mean and variance.
#include "common.h"

__global__ void layerNorm(const float* x, const float* gamma, const float* beta, float* y,
                          int rows, int cols, float eps) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float mean = 0.0f;
    for (int j = 0; j < cols; ++j) mean += x[r * cols + j];
    mean /= cols;
    float var = 0.0f;
    for (int j = 0; j < cols; ++j) {
      float d = x[r * cols + j] - mean;
      var += d * d;
    }
    var /= cols;
    float inv = 1.0f / sqrtf(var + eps);
    for (int j = 0; j < cols; ++j)
      y[r * cols + j] = (x[r * cols + j] - mean) * inv * gamma[j] + beta[j];
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 32768, 512);
  int cols = (int)argInt(argc, argv, "cols", 1024, 128);
  int reps = (int)argInt(argc, argv, "reps", 2, 1);
  int n = rows * cols;
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  float* gamma = deviceAlloc<float>(cols);
  float* beta = deviceAlloc<float>(cols);
  fillUniform(x, n, 27);
  fillUniform(gamma, cols, 28, 0.5, 1.5);
  fillUniform(beta, cols, 29, -0.1, 0.1);

  dim3 block(256);
  dim3 grid((rows + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    layerNorm<<<grid, block>>>(x, gamma, beta, y, rows, cols, 1e-5f);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 8.0 * n, "f32");
  cudaFree(x); cudaFree(y); cudaFree(gamma); cudaFree(beta);
  return 0;
}
