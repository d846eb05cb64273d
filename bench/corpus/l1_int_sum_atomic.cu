// Level 1, reduction on integers: every thread adds its element to one
// counter with atomicAdd (no block-level reduction first).
#include "common.h"

__global__ void sumAtomic(const int* x, unsigned long long* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, (unsigned long long)x[i]);
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 24, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 2, 1);
  int* x = deviceAlloc<int>(n);
  unsigned long long* total = deviceAlloc<unsigned long long>(1);
  fillInt(x, n, 20, 100);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaMemset(total, 0, sizeof(unsigned long long)));
    sumAtomic<<<grid, block>>>(x, total, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  unsigned long long h = 0;
  CHECK(cudaMemcpy(&h, total, sizeof(h), cudaMemcpyDeviceToHost));
  printChecksum((double)h);
  printTime(ms);
  printFloor(reps * (double)n * sizeof(int), reps * (double)n, "i32");
  cudaFree(x); cudaFree(total);
  return 0;
}
