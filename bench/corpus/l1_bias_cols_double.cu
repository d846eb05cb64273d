// Level 1, a per-column affine map of a row-major double matrix, written
// with a 1-D id that is split column-first (col = id / rows, row = id %
// rows): consecutive threads walk down a column, `cols` doubles apart.
#include "common.h"

__global__ void biasCols(const double* x, const double* scale, const double* bias, double* y,
                         int rows, int cols) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= rows * cols) return;
  int col = idx / rows;
  int row = idx % rows;
  y[row * cols + col] = scale[col] * x[row * cols + col] + bias[col];
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 2048, 128);
  int cols = (int)argInt(argc, argv, "cols", 4096, 128);
  int reps = (int)argInt(argc, argv, "reps", 10, 2);
  int n = rows * cols;
  double* x = deviceAlloc<double>(n);
  double* scale = deviceAlloc<double>(cols);
  double* bias = deviceAlloc<double>(cols);
  double* y = deviceAlloc<double>(n);
  fillUniform(x, n, 21, -1.0, 1.0);
  fillUniform(scale, cols, 22, 0.5, 1.5);
  fillUniform(bias, cols, 23, -0.5, 0.5);
  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    biasCols<<<grid, block>>>(x, scale, bias, y, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();
  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * (2.0 * n + 2.0 * cols) * sizeof(double), reps * 2.0 * n, "f64");
  cudaFree(x); cudaFree(scale); cudaFree(bias); cudaFree(y);
  return 0;
}
