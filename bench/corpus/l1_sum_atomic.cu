// Level 1, reduction: sum of a float vector. Each block reduces in shared
// memory, then thread 0 adds the block's sum to the result with atomicAdd.
#include "common.h"

__global__ void blockSumAtomic(const float* x, float* result, int n) {
  __shared__ float cache[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cache[threadIdx.x] = (i < n) ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) cache[threadIdx.x] += cache[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(result, cache[0]);
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 26, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 10, 2);
  float* x = deviceAlloc<float>(n);
  float* result = deviceAlloc<float>(reps);
  fillUniform(x, n, 13, 0.0, 1.0);
  CHECK(cudaMemset(result, 0, reps * sizeof(float)));

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    blockSumAtomic<<<grid, block>>>(x, result + r, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  std::vector<float> h(reps);
  CHECK(cudaMemcpy(h.data(), result, reps * sizeof(float), cudaMemcpyDeviceToHost));
  printChecksumRounded(h[0], 3);
  printTime(ms);
  printFloor(reps * (double)n * sizeof(float), reps * (double)n, "f32");
  cudaFree(x); cudaFree(result);
  return 0;
}
