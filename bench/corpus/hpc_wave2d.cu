// HPC, 2D wave equation with three time levels (previous, current, next)
// rotated on the host after every step.
#include "common.h"

__global__ void waveStep(const float* prev, const float* cur, float* next, int N, float c2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && y > 0 && x < N - 1 && y < N - 1) {
    int i = y * N + x;
    float lap = cur[i - 1] + cur[i + 1] + cur[i - N] + cur[i + N] - 4.0f * cur[i];
    next[i] = 2.0f * cur[i] - prev[i] + c2 * lap;
  }
}

__global__ void initPulse(float* u, int N) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < N && y < N) {
    float dx = (x - N / 2) / (0.05f * N), dy = (y - N / 3) / (0.05f * N);
    u[y * N + x] = expf(-(dx * dx + dy * dy));
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "n", 4096, 256);
  int steps = (int)argInt(argc, argv, "steps", 100, 10);
  size_t nn = (size_t)N * N;
  float* u0 = deviceAlloc<float>(nn);
  float* u1 = deviceAlloc<float>(nn);
  float* u2 = deviceAlloc<float>(nn);
  dim3 block(32, 4);
  dim3 grid((N + 31) / 32, (N + 3) / 4);
  initPulse<<<grid, block>>>(u0, N);
  initPulse<<<grid, block>>>(u1, N);
  CHECK(cudaMemset(u2, 0, nn * sizeof(float)));

  GpuTimer timer;
  timer.start();
  for (int s = 0; s < steps; ++s) {
    waveStep<<<grid, block>>>(u0, u1, u2, N, 0.2f);
    float* t = u0; u0 = u1; u1 = u2; u2 = t;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(u1, nn));
  printTime(ms);
  printFloor((double)steps * 3.0 * nn * sizeof(float), (double)steps * 9.0 * nn, "f32");
  cudaFree(u0); cudaFree(u1); cudaFree(u2);
  return 0;
}
