// Level 1, transposed matrix-vector product y = A^T x in double: one thread
// per column of A (coalesced, but only `cols` threads).
#include "common.h"

__global__ void matvecT(const double* A, const double* x, double* y, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < cols) {
    double acc = 0.0;
    for (int r = 0; r < rows; ++r) acc += A[(size_t)r * cols + c] * x[r];
    y[c] = acc;
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 16384, 512);
  int cols = (int)argInt(argc, argv, "cols", 8192, 256);
  int reps = (int)argInt(argc, argv, "reps", 3, 1);
  size_t n = (size_t)rows * cols;
  double* A = deviceAlloc<double>(n);
  double* x = deviceAlloc<double>(rows);
  double* y = deviceAlloc<double>(cols);
  fillUniform(A, n, 55);
  fillUniform(x, rows, 56);

  dim3 block(128);
  dim3 grid((cols + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    matvecT<<<grid, block>>>(A, x, y, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, cols));
  printTime(ms);
  printFloor(reps * ((double)n + cols + rows) * sizeof(double), reps * 2.0 * n, "f64");
  cudaFree(A); cudaFree(x); cudaFree(y);
  return 0;
}
