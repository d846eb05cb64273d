// Level 1, elementwise on integers: y = (a * x + b) mod m, int32.
#include "common.h"

__global__ void affineMod(const int* x, int* y, int n, int a, int b, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (a * x[i] + b) % m;
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 25, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 20, 2);
  int* x = deviceAlloc<int>(n);
  int* y = deviceAlloc<int>(n);
  fillInt(x, n, 10, 1000);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    affineMod<<<grid, block>>>(x, y, n, 37, r, 1009);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(int), reps * 3.0 * n, "i32");
  cudaFree(x); cudaFree(y);
  return 0;
}
