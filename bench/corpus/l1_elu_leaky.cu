// Level 1, activation: ELU on one half of a buffer and leaky ReLU on the
// other, two kernels with a branch-heavy body.
#include "common.h"

__global__ void elu(const float* x, float* y, int n, float alpha) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = v > 0.0f ? v : alpha * (expf(v) - 1.0f);
  }
}

__global__ void leakyRelu(const float* x, float* y, int n, float slope) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = v > 0.0f ? v : slope * v;
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 25, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 20, 2);
  int half = n / 2;
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  fillUniform(x, n, 9, -2.0, 2.0);

  dim3 block(256);
  dim3 grid((half + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    elu<<<grid, block>>>(x, y, half, 1.0f);
    leakyRelu<<<grid, block>>>(x + half, y + half, n - half, 0.01f);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 2.0 * n, "f32");
  cudaFree(x); cudaFree(y);
  return 0;
}
