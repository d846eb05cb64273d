// HPC, all-pairs n-body in double with bodies stored as an array of structs;
// one kernel computes forces and updates velocities, a second moves bodies.
#include "common.h"

struct Body {
  double x, y, z, vx, vy, vz, mass;
};

__global__ void initBodies(Body* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    b[i].x = 2.0 * hashUniform(i, 160) - 1.0;
    b[i].y = 2.0 * hashUniform(i, 161) - 1.0;
    b[i].z = 2.0 * hashUniform(i, 162) - 1.0;
    b[i].vx = b[i].vy = b[i].vz = 0.0;
    b[i].mass = 0.5 + 0.5 * hashUniform(i, 163);
  }
}

__global__ void kick(Body* bodies, int n, double dt, double soft2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    double fx = 0, fy = 0, fz = 0;
    for (int j = 0; j < n; ++j) {
      double dx = bodies[j].x - bodies[i].x;
      double dy = bodies[j].y - bodies[i].y;
      double dz = bodies[j].z - bodies[i].z;
      double r2 = dx * dx + dy * dy + dz * dz + soft2;
      double s = bodies[j].mass / (r2 * sqrt(r2));
      fx += dx * s; fy += dy * s; fz += dz * s;
    }
    bodies[i].vx += dt * fx;
    bodies[i].vy += dt * fy;
    bodies[i].vz += dt * fz;
  }
}

__global__ void drift(Body* bodies, int n, double dt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    bodies[i].x += dt * bodies[i].vx;
    bodies[i].y += dt * bodies[i].vy;
    bodies[i].z += dt * bodies[i].vz;
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "bodies", 16384, 512);
  int steps = (int)argInt(argc, argv, "steps", 3, 2);
  Body* bodies = deviceAlloc<Body>(n);
  dim3 block(128);
  dim3 grid((n + 127) / 128);
  initBodies<<<grid, block>>>(bodies, n);
  CHECK_LAUNCH();

  GpuTimer timer;
  timer.start();
  for (int s = 0; s < steps; ++s) {
    kick<<<grid, block>>>(bodies, n, 1e-4, 1e-3);
    drift<<<grid, block>>>(bodies, n, 1e-4);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf((const double*)bodies, (size_t)n * 7));
  printTime(ms);
  printFloor((double)steps * 2.0 * n * sizeof(Body),
             (double)steps * (20.0 * (double)n * n + 9.0 * n), "f64");
  cudaFree(bodies);
  return 0;
}
