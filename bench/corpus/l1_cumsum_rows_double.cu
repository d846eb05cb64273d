// Level 1, cumulative sum along rows (torch.cumsum(dim=1)) in double: one
// thread per row, sequential.
#include "common.h"

__global__ void cumsumRows(const double* x, double* y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    double run = 0.0;
    for (int j = 0; j < cols; ++j) {
      run += x[(size_t)r * cols + j];
      y[(size_t)r * cols + j] = run;
    }
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 16384, 256);
  int cols = (int)argInt(argc, argv, "cols", 2048, 128);
  int reps = (int)argInt(argc, argv, "reps", 4, 1);
  size_t n = (size_t)rows * cols;
  double* x = deviceAlloc<double>(n);
  double* y = deviceAlloc<double>(n);
  fillUniform(x, n, 75);

  dim3 block(128);
  dim3 grid((rows + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    cumsumRows<<<grid, block>>>(x, y, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(double), reps * (double)n, "f64");
  cudaFree(x); cudaFree(y);
  return 0;
}
