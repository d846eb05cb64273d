// Level 1, norm: Euclidean norm of each row and normalisation of the row by
// it, double; two kernels (norms, then divide), one thread per row / element.
#include "common.h"

__global__ void rowNorms(const double* x, double* norms, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    double s = 0.0;
    for (int j = 0; j < cols; ++j) s += x[(size_t)r * cols + j] * x[(size_t)r * cols + j];
    norms[r] = sqrt(s);
  }
}

__global__ void divideRows(const double* x, const double* norms, double* y, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) y[i] = x[i] / norms[i / cols];
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 16384, 256);
  int cols = (int)argInt(argc, argv, "cols", 1024, 128);
  int reps = (int)argInt(argc, argv, "reps", 8, 1);
  int n = rows * cols;
  double* x = deviceAlloc<double>(n);
  double* y = deviceAlloc<double>(n);
  double* norms = deviceAlloc<double>(rows);
  fillUniform(x, n, 19);

  dim3 block(256);
  dim3 gridRows((rows + block.x - 1) / block.x);
  dim3 gridAll((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    rowNorms<<<gridRows, block>>>(x, norms, rows, cols);
    divideRows<<<gridAll, block>>>(x, norms, y, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(double), reps * 3.0 * n, "f64");
  cudaFree(x); cudaFree(y); cudaFree(norms);
  return 0;
}
