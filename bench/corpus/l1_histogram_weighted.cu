// Level 1, weighted histogram of float samples in [0, 1): bin index from the
// sample, float atomicAdd of its weight to a global bin.
#include "common.h"

__global__ void weightedHist(const float* samples, const float* weights, float* hist, int n,
                             int bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int b = (int)(samples[i] * bins);
    if (b >= bins) b = bins - 1;
    atomicAdd(&hist[b], weights[i]);
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 24, 1 << 16);
  int bins = (int)argInt(argc, argv, "bins", 4096, 256);
  int reps = (int)argInt(argc, argv, "reps", 5, 1);
  float* samples = deviceAlloc<float>(n);
  float* weights = deviceAlloc<float>(n);
  float* hist = deviceAlloc<float>(bins);
  fillUniform(samples, n, 77, 0.0, 1.0);
  fillUniform(weights, n, 78, 0.0, 1.0);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaMemset(hist, 0, bins * sizeof(float)));
    weightedHist<<<grid, block>>>(samples, weights, hist, n, bins);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksumRounded(checksumOf(hist, bins), 5);
  printTime(ms);
  printFloor(reps * ((double)2 * n + bins) * sizeof(float), reps * 2.0 * n, "f32");
  cudaFree(samples); cudaFree(weights); cudaFree(hist);
  return 0;
}
