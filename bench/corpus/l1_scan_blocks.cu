// Level 1, inclusive prefix sum of a float vector in three kernels: a
// Hillis-Steele scan inside each block, a single thread scanning the block
// totals, and a pass that adds each block's offset.
#include "common.h"

#define BLOCK 512

__global__ void scanBlocks(const float* in, float* out, float* blockTotals, int n) {
  __shared__ float buf[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (int off = 1; off < blockDim.x; off *= 2) {
    float v = 0.0f;
    if (threadIdx.x >= off) v = buf[threadIdx.x - off];
    __syncthreads();
    buf[threadIdx.x] += v;
    __syncthreads();
  }
  if (i < n) out[i] = buf[threadIdx.x];
  if (threadIdx.x == blockDim.x - 1) blockTotals[blockIdx.x] = buf[threadIdx.x];
}

__global__ void scanTotals(float* totals, int m) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    float run = 0.0f;
    for (int b = 0; b < m; ++b) {
      float t = totals[b];
      totals[b] = run;  // exclusive: offset of block b
      run += t;
    }
  }
}

__global__ void addOffsets(float* out, const float* offsets, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += offsets[blockIdx.x];
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 25, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 3, 1);
  float* in = deviceAlloc<float>(n);
  float* out = deviceAlloc<float>(n);
  fillUniform(in, n, 73, 0.0, 1.0);

  dim3 block(BLOCK);
  dim3 grid((n + BLOCK - 1) / BLOCK);
  float* totals = deviceAlloc<float>(grid.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    scanBlocks<<<grid, block>>>(in, out, totals, n);
    scanTotals<<<1, 1>>>(totals, grid.x);
    addOffsets<<<grid, block>>>(out, totals, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * (double)n, "f32");
  cudaFree(in); cudaFree(out); cudaFree(totals);
  return 0;
}
