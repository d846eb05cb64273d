// Level 1, softmax over the last dimension: one thread per row, three passes
// over the row (max, sum of exponentials, normalise).
#include "common.h"

__global__ void softmaxRows(const float* x, float* y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* in = x + (size_t)r * cols;
  float* out = y + (size_t)r * cols;
  float m = in[0];
  for (int j = 1; j < cols; ++j) m = fmaxf(m, in[j]);
  float s = 0.0f;
  for (int j = 0; j < cols; ++j) s += expf(in[j] - m);
  for (int j = 0; j < cols; ++j) out[j] = expf(in[j] - m) / s;
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 32768, 512);
  int cols = (int)argInt(argc, argv, "cols", 1024, 128);
  int reps = (int)argInt(argc, argv, "reps", 2, 1);
  size_t n = (size_t)rows * cols;
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  fillUniform(x, n, 24, -4.0, 4.0);

  dim3 block(128);
  dim3 grid((rows + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    softmaxRows<<<grid, block>>>(x, y, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 5.0 * n, "f32");
  cudaFree(x); cudaFree(y);
  return 0;
}
