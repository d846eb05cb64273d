// Level 1, softmax over the first dimension (dim=0): one thread per column.
#include "common.h"

__global__ void softmaxCols(const float* x, float* y, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < cols) {
    float m = -INFINITY;
    for (int r = 0; r < rows; ++r) m = fmaxf(m, x[r * cols + c]);
    float s = 0.0f;
    for (int r = 0; r < rows; ++r) s += expf(x[r * cols + c] - m);
    for (int r = 0; r < rows; ++r) y[r * cols + c] = expf(x[r * cols + c] - m) / s;
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 2048, 128);
  int cols = (int)argInt(argc, argv, "cols", 16384, 512);
  int reps = (int)argInt(argc, argv, "reps", 5, 1);
  int n = rows * cols;
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  fillUniform(x, n, 26, -4.0, 4.0);

  dim3 block(256);
  dim3 grid((cols + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    softmaxCols<<<grid, block>>>(x, y, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 5.0 * n, "f32");
  cudaFree(x); cudaFree(y);
  return 0;
}
