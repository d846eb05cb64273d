// Level 1, activation: logistic sigmoid in double precision.
#include "common.h"

__global__ void sigmoid(const double* x, double* y, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 1.0 / (1.0 + exp(-x[i]));
}

int main(int argc, char** argv) {
  long n = argInt(argc, argv, "n", 1 << 24, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 20, 2);
  double* x = deviceAlloc<double>(n);
  double* y = deviceAlloc<double>(n);
  fillUniform(x, n, 7, -6.0, 6.0);

  dim3 block(256);
  dim3 grid((unsigned)((n + block.x - 1) / block.x));
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    sigmoid<<<grid, block>>>(x, y, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(double), reps * 3.0 * n, "f64");
  cudaFree(x); cudaFree(y);
  return 0;
}
