// HPC, particle update in structure-of-arrays layout: gravity, drag and
// reflection at the walls of the unit box, many steps, one kernel per step.
#include "common.h"

__global__ void updateParticles(float* x, float* y, float* z, float* vx, float* vy, float* vz,
                                int n, float dt, float drag) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    vz[i] -= 9.81f * dt;
    vx[i] *= (1.0f - drag * dt);
    vy[i] *= (1.0f - drag * dt);
    vz[i] *= (1.0f - drag * dt);
    x[i] += vx[i] * dt;
    y[i] += vy[i] * dt;
    z[i] += vz[i] * dt;
    if (x[i] < 0.0f) { x[i] = -x[i]; vx[i] = -vx[i]; }
    if (x[i] > 1.0f) { x[i] = 2.0f - x[i]; vx[i] = -vx[i]; }
    if (y[i] < 0.0f) { y[i] = -y[i]; vy[i] = -vy[i]; }
    if (y[i] > 1.0f) { y[i] = 2.0f - y[i]; vy[i] = -vy[i]; }
    if (z[i] < 0.0f) { z[i] = -z[i]; vz[i] = -vz[i]; }
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "particles", 1 << 24, 1 << 14);
  int steps = (int)argInt(argc, argv, "steps", 10, 2);
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  float* z = deviceAlloc<float>(n);
  float* vx = deviceAlloc<float>(n);
  float* vy = deviceAlloc<float>(n);
  float* vz = deviceAlloc<float>(n);
  fillUniform(x, n, 164, 0.0, 1.0); fillUniform(y, n, 165, 0.0, 1.0);
  fillUniform(z, n, 166, 0.0, 1.0); fillUniform(vx, n, 167); fillUniform(vy, n, 168);
  fillUniform(vz, n, 169);

  dim3 block(256);
  dim3 grid((n + 255) / 256);
  GpuTimer timer;
  timer.start();
  for (int s = 0; s < steps; ++s) {
    updateParticles<<<grid, block>>>(x, y, z, vx, vy, vz, n, 1e-3f, 0.1f);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(x, n) + checksumOf(y, n) + checksumOf(z, n));
  printTime(ms);
  printFloor((double)steps * 12.0 * n * sizeof(float), (double)steps * 16.0 * n, "f32");
  cudaFree(x); cudaFree(y); cudaFree(z); cudaFree(vx); cudaFree(vy); cudaFree(vz);
  return 0;
}
