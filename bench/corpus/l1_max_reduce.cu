// Level 1, reduction: maximum of a float vector; block maxima go to a
// partials array that the host reduces after copying it back.
#include "common.h"

__global__ void blockMax(const float* x, float* partial, int n) {
  __shared__ float cache[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cache[threadIdx.x] = (i < n) ? x[i] : -INFINITY;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) cache[threadIdx.x] = fmaxf(cache[threadIdx.x], cache[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = cache[0];
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 26, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 10, 2);
  float* x = deviceAlloc<float>(n);
  fillUniform(x, n, 15, -100.0, 100.0);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  float* partial = deviceAlloc<float>(grid.x);
  std::vector<float> h(grid.x);
  float best = -INFINITY;
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    blockMax<<<grid, block>>>(x, partial, n);
    CHECK(cudaMemcpy(h.data(), partial, grid.x * sizeof(float), cudaMemcpyDeviceToHost));
    best = -INFINITY;
    for (unsigned b = 0; b < grid.x; ++b) best = fmaxf(best, h[b]);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(best);
  printTime(ms);
  printFloor(reps * (double)n * sizeof(float), reps * (double)n, "f32");
  cudaFree(x); cudaFree(partial);
  return 0;
}
