// HPC, 1D heat equation on a short rod over many time steps: one tiny launch
// per step (8 blocks of 256 threads), the two time levels swapped on the host.
// Launch-bound: each step's work is a few microseconds of launch overhead.
#include "common.h"

__global__ void heatStep(const float* u, float* v, int n, float r) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  // Insulated ends: the missing neighbour is the cell itself.
  float left = i > 0 ? u[i - 1] : u[i];
  float right = i < n - 1 ? u[i + 1] : u[i];
  v[i] = u[i] + r * (left - 2.0f * u[i] + right);
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 2048, 512);
  int steps = (int)argInt(argc, argv, "steps", 20000, 500);
  float* u = deviceAlloc<float>(n);
  float* v = deviceAlloc<float>(n);
  fillUniform(u, n, 151, 0.0, 1.0);
  CHECK(cudaMemset(v, 0, n * sizeof(float)));

  dim3 block(256);
  dim3 grid((n + 255) / 256);
  GpuTimer timer;
  timer.start();
  for (int s = 0; s < steps; ++s) {
    heatStep<<<grid, block>>>(u, v, n, 0.25f);
    float* t = u; u = v; v = t;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(u, n));
  printTime(ms);
  printFloor((double)steps * 2.0 * n * sizeof(float), (double)steps * 5.0 * n, "f32");
  cudaFree(u); cudaFree(v);
  return 0;
}
