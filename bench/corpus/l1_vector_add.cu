// Level 1, elementwise: c = a + b on float vectors, repeated `reps` times.
#include "common.h"

__global__ void vectorAdd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 25, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 20, 2);
  float* a = deviceAlloc<float>(n);
  float* b = deviceAlloc<float>(n);
  float* c = deviceAlloc<float>(n);
  fillUniform(a, n, 1);
  fillUniform(b, n, 2);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    vectorAdd<<<grid, block>>>(a, b, c, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(c, n));
  printTime(ms);
  printFloor(reps * 3.0 * n * sizeof(float), reps * (double)n, "f32");
  cudaFree(a); cudaFree(b); cudaFree(c);
  return 0;
}
