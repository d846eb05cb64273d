// Level 2, bias + dropout (hash mask, fixed seed) + residual add, three
// kernels; the mask is materialised as bytes in between.
#include "common.h"

__global__ void addBias(const float* x, const float* b, float* y, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) y[i] = x[i] + b[i % cols];
}

__global__ void makeMask(unsigned char* mask, int n, unsigned int seed, float p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) mask[i] = hashUniform(i, seed) >= p ? 1 : 0;
}

__global__ void dropoutAdd(const float* y, const unsigned char* mask, const float* residual,
                           float* out, int n, float keepScale) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = residual[i] + (mask[i] ? y[i] * keepScale : 0.0f);
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 16384, 256);
  int cols = (int)argInt(argc, argv, "cols", 1024, 128);
  int reps = (int)argInt(argc, argv, "reps", 10, 1);
  int n = rows * cols;
  float p = 0.1f;
  float* x = deviceAlloc<float>(n);
  float* b = deviceAlloc<float>(cols);
  float* res = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  float* out = deviceAlloc<float>(n);
  unsigned char* mask = deviceAlloc<unsigned char>(n);
  fillUniform(x, n, 112);
  fillUniform(b, cols, 113, -0.1, 0.1);
  fillUniform(res, n, 114);

  dim3 block(256);
  dim3 grid((n + 255) / 256);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    addBias<<<grid, block>>>(x, b, y, rows, cols);
    makeMask<<<grid, block>>>(mask, n, 1234u + r, p);
    dropoutAdd<<<grid, block>>>(y, mask, res, out, n, 1.0f / (1.0f - p));
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, n));
  printTime(ms);
  printFloor(reps * 3.0 * n * sizeof(float), reps * 4.0 * n, "f32");
  cudaFree(x); cudaFree(b); cudaFree(res); cudaFree(y); cudaFree(out); cudaFree(mask);
  return 0;
}
