// Level 1, activation on a strided view: softplus of every `stride`-th
// element of a matrix column-major view (each thread jumps by `stride`).
#include "common.h"

__global__ void softplusStrided(const float* x, float* y, int rows, int cols) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < rows * cols) {
    int r = t % rows;
    int c = t / rows;
    // Row-major storage, but threads walk down columns: stride `cols`.
    float v = x[r * cols + c];
    y[r * cols + c] = logf(1.0f + expf(v));
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 4096, 256);
  int cols = (int)argInt(argc, argv, "cols", 4096, 256);
  int reps = (int)argInt(argc, argv, "reps", 10, 2);
  int n = rows * cols;
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  fillUniform(x, n, 11, -5.0, 5.0);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    softplusStrided<<<grid, block>>>(x, y, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 3.0 * n, "f32");
  cudaFree(x); cudaFree(y);
  return 0;
}
