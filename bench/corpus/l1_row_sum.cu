// Level 1, reduction over the last dimension: one thread per row.
#include "common.h"

__global__ void rowSum(const float* x, float* out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int j = 0; j < cols; ++j) s += x[r * cols + j];
    out[r] = s;
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 32768, 512);
  int cols = (int)argInt(argc, argv, "cols", 2048, 128);
  int reps = (int)argInt(argc, argv, "reps", 6, 1);
  int n = rows * cols;
  float* x = deviceAlloc<float>(n);
  float* out = deviceAlloc<float>(rows);
  fillUniform(x, n, 17);

  dim3 block(256);
  dim3 grid((rows + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    rowSum<<<grid, block>>>(x, out, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, rows));
  printTime(ms);
  printFloor(reps * ((double)n + rows) * sizeof(float), reps * (double)n, "f32");
  cudaFree(x); cudaFree(out);
  return 0;
}
