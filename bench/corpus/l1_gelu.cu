// Level 1, activation: GELU with the tanh approximation, float.
#include "common.h"

__device__ float geluTanh(float x) {
  const float c = 0.7978845608f;  // sqrt(2 / pi)
  float inner = c * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

__global__ void gelu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = geluTanh(x[i]);
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 25, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 20, 2);
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  fillUniform(x, n, 6, -3.0, 3.0);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    gelu<<<grid, block>>>(x, y, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 9.0 * n, "f32");
  cudaFree(x); cudaFree(y);
  return 0;
}
