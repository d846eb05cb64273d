// HPC, particles as an array of structs: move, then count particles per
// cell of a uniform grid with an int atomicAdd per particle (a first step
// of a cell list); the host reads the counts every step to find the
// fullest cell.
#include "common.h"

struct Particle {
  float x, y, vx, vy;
  int cell;
  float charge;
};

__global__ void initParticles(Particle* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    p[i].x = (float)hashUniform(i, 170);
    p[i].y = (float)hashUniform(i, 171);
    p[i].vx = (float)hashUniform(i, 172) - 0.5f;
    p[i].vy = (float)hashUniform(i, 173) - 0.5f;
    p[i].charge = 1.0f;
    p[i].cell = 0;
  }
}

__global__ void moveAndBin(Particle* p, int* counts, int n, int cellsPerSide, float dt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = p[i].x + p[i].vx * dt;
    float y = p[i].y + p[i].vy * dt;
    x = x - floorf(x);  // periodic box
    y = y - floorf(y);
    p[i].x = x;
    p[i].y = y;
    int cx = min((int)(x * cellsPerSide), cellsPerSide - 1);
    int cy = min((int)(y * cellsPerSide), cellsPerSide - 1);
    int c = cy * cellsPerSide + cx;
    p[i].cell = c;
    atomicAdd(&counts[c], 1);
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "particles", 1 << 24, 1 << 14);
  int side = (int)argInt(argc, argv, "cells", 512, 32);
  int steps = (int)argInt(argc, argv, "steps", 10, 2);
  int ncells = side * side;
  Particle* p = deviceAlloc<Particle>(n);
  int* counts = deviceAlloc<int>(ncells);
  initParticles<<<(n + 255) / 256, 256>>>(p, n);
  CHECK_LAUNCH();
  std::vector<int> h(ncells);

  dim3 block(256);
  dim3 grid((n + 255) / 256);
  int fullest = 0;
  GpuTimer timer;
  timer.start();
  for (int s = 0; s < steps; ++s) {
    CHECK(cudaMemset(counts, 0, ncells * sizeof(int)));
    moveAndBin<<<grid, block>>>(p, counts, n, side, 1e-2f);
    CHECK(cudaMemcpy(h.data(), counts, ncells * sizeof(int), cudaMemcpyDeviceToHost));
    fullest = 0;
    for (int c = 0; c < ncells; ++c) fullest = h[c] > fullest ? h[c] : fullest;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(counts, ncells) + fullest);
  printTime(ms);
  // Needed per step: read x, y, vx, vy; write x, y, cell; the counts.
  printFloor((double)steps * (7.0 * n * 4 + ncells * 4.0), (double)steps * 8.0 * n, "f32");
  cudaFree(p); cudaFree(counts);
  return 0;
}
