// Level 1, reduction over the first dimension: one thread per column, double.
#include "common.h"

__global__ void colSum(const double* x, double* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < cols) {
    double s = 0.0;
    for (int r = 0; r < rows; ++r) s += x[(size_t)r * cols + c];
    out[c] = s;
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 8192, 256);
  int cols = (int)argInt(argc, argv, "cols", 4096, 256);
  int reps = (int)argInt(argc, argv, "reps", 10, 1);
  size_t n = (size_t)rows * cols;
  double* x = deviceAlloc<double>(n);
  double* out = deviceAlloc<double>(cols);
  fillUniform(x, n, 18);

  dim3 block(256);
  dim3 grid((cols + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    colSum<<<grid, block>>>(x, out, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, cols));
  printTime(ms);
  printFloor(reps * ((double)n + cols) * sizeof(double), reps * (double)n, "f64");
  cudaFree(x); cudaFree(out);
  return 0;
}
