// Level 1, elementwise: y = alpha * x + y in double, in place, repeated.
#include "common.h"

__global__ void daxpy(int n, double alpha, const double* x, double* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 24, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 20, 2);
  double* x = deviceAlloc<double>(n);
  double* y = deviceAlloc<double>(n);
  fillUniform(x, n, 3);
  fillUniform(y, n, 4);

  dim3 block(512);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    daxpy<<<grid, block>>>(n, 0.5, x, y);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 3.0 * n * sizeof(double), reps * 2.0 * n, "f64");
  cudaFree(x); cudaFree(y);
  return 0;
}
