// Level 1, activation: hardtanh (clamp to [lo, hi]) in double, via fmin/fmax
// in a templated kernel.
#include "common.h"

template <typename T>
__global__ void clampKernel(const T* x, T* y, int n, T lo, T hi) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    T v = x[i];
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    y[i] = v;
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 24, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 20, 2);
  double* x = deviceAlloc<double>(n);
  double* y = deviceAlloc<double>(n);
  fillUniform(x, n, 12, -2.0, 2.0);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    clampKernel<double><<<grid, block>>>(x, y, n, -1.0, 1.0);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(double), reps * 2.0 * n, "f64");
  cudaFree(x); cudaFree(y);
  return 0;
}
