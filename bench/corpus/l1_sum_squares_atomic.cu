// Level 1, reduction: sum of squares with one float atomicAdd per element
// (the textbook first attempt; it also loses precision once the sum is large).
#include "common.h"

__global__ void sumSquares(const float* x, float* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, x[i] * x[i]);
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 20, 1 << 14);
  int reps = (int)argInt(argc, argv, "reps", 4, 1);
  float* x = deviceAlloc<float>(n);
  float* total = deviceAlloc<float>(1);
  fillUniform(x, n, 21);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaMemset(total, 0, sizeof(float)));
    sumSquares<<<grid, block>>>(x, total, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  float h = 0;
  CHECK(cudaMemcpy(&h, total, sizeof(h), cudaMemcpyDeviceToHost));
  printChecksumRounded(h, 3);
  printTime(ms);
  printFloor(reps * (double)n * sizeof(float), reps * 2.0 * n, "f32");
  cudaFree(x); cudaFree(total);
  return 0;
}
