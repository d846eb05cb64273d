// Level 1, activation: out = max(x, 0), float.
#include "common.h"

__global__ void relu(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (x[i] > 0.0f)
      out[i] = x[i];
    else
      out[i] = 0.0f;
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 25, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 30, 2);
  float* x = deviceAlloc<float>(n);
  float* out = deviceAlloc<float>(n);
  fillUniform(x, n, 5);

  dim3 block(128);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    relu<<<grid, block>>>(x, out, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * (double)n, "f32");
  cudaFree(x); cudaFree(out);
  return 0;
}
