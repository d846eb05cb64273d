// Level 1, gather with random indices: y[i] = x[idx[i]] * scale in double.
#include "common.h"

__global__ void gather(const double* x, const int* idx, double* y, int n, double scale) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[idx[i]] * scale;
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 24, 1 << 16);
  int src = (int)argInt(argc, argv, "src", 1 << 24, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 5, 1);
  double* x = deviceAlloc<double>(src);
  int* idx = deviceAlloc<int>(n);
  double* y = deviceAlloc<double>(n);
  fillUniform(x, src, 81);
  fillInt(idx, n, 82, src);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    gather<<<grid, block>>>(x, idx, y, n, 2.0);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * (double)n * (2 * sizeof(double) + sizeof(int)), reps * (double)n, "f64");
  cudaFree(x); cudaFree(idx); cudaFree(y);
  return 0;
}
