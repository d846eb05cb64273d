// Level 1, RMS norm: one block per row, a shared-memory sum of squares, then
// every thread scales its columns.
#include "common.h"

__global__ void rmsNorm(const float* x, const float* weight, float* y, int cols, float eps) {
  __shared__ float partial[256];
  int row = blockIdx.x;
  float s = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    float v = x[row * cols + j];
    s += v * v;
  }
  partial[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int k = 0; k < blockDim.x; ++k) total += partial[k];
    partial[0] = rsqrtf(total / cols + eps);
  }
  __syncthreads();
  float scale = partial[0];
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    y[row * cols + j] = x[row * cols + j] * scale * weight[j];
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 16384, 256);
  int cols = (int)argInt(argc, argv, "cols", 4096, 256);
  int reps = (int)argInt(argc, argv, "reps", 10, 1);
  int n = rows * cols;
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  float* w = deviceAlloc<float>(cols);
  fillUniform(x, n, 30);
  fillUniform(w, cols, 31, 0.5, 1.5);

  dim3 block(256);
  dim3 grid(rows);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    rmsNorm<<<grid, block>>>(x, w, y, cols, 1e-6f);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 4.0 * n, "f32");
  cudaFree(x); cudaFree(y); cudaFree(w);
  return 0;
}
