// Level 1, histogram of int32 values into `bins` bins with one global
// atomicAdd per element (no shared-memory privatisation).
#include "common.h"

__global__ void histogram(const int* data, unsigned int* hist, int n, int bins, int maxValue) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int b = (int)((long long)data[i] * bins / maxValue);
    atomicAdd(&hist[b], 1u);
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 26, 1 << 16);
  int bins = (int)argInt(argc, argv, "bins", 256, 64);
  int reps = (int)argInt(argc, argv, "reps", 3, 1);
  int maxValue = 1 << 20;
  int* data = deviceAlloc<int>(n);
  unsigned int* hist = deviceAlloc<unsigned int>(bins);
  fillInt(data, n, 76, maxValue);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaMemset(hist, 0, bins * sizeof(unsigned int)));
    histogram<<<grid, block>>>(data, hist, n, bins, maxValue);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(hist, bins));
  printTime(ms);
  printFloor(reps * ((double)n * sizeof(int) + bins * sizeof(int)), reps * 2.0 * n, "i32");
  cudaFree(data); cudaFree(hist);
  return 0;
}
