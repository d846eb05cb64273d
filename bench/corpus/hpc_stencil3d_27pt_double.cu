// HPC, 3D 27-point stencil in double with weights by distance class
// (centre, face, edge, corner); threads walk x fastest, 2D blocks over (x, y)
// and the z planes on gridDim.z.
#include "common.h"

__global__ void stencil27(const double* in, double* out, int N, double w0, double w1, double w2,
                          double w3) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z;
  if (x >= N || y >= N) return;
  size_t i = ((size_t)z * N + y) * N + x;
  if (x == 0 || y == 0 || z == 0 || x == N - 1 || y == N - 1 || z == N - 1) {
    out[i] = in[i];
    return;
  }
  double acc = 0.0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int cls = abs(dx) + abs(dy) + abs(dz);
        double w = cls == 0 ? w0 : (cls == 1 ? w1 : (cls == 2 ? w2 : w3));
        acc += w * in[((size_t)(z + dz) * N + (y + dy)) * N + (x + dx)];
      }
  out[i] = acc;
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "n", 192, 24);
  int steps = (int)argInt(argc, argv, "steps", 20, 3);
  size_t n3 = (size_t)N * N * N;
  double* a = deviceAlloc<double>(n3);
  double* b = deviceAlloc<double>(n3);
  fillUniform(a, n3, 148);

  dim3 block(32, 4);
  dim3 grid((N + 31) / 32, (N + 3) / 4, N);
  GpuTimer timer;
  timer.start();
  for (int s = 0; s < steps; ++s) {
    stencil27<<<grid, block>>>(a, b, N, 0.4, 0.05, 0.02, 0.01);
    double* t = a; a = b; b = t;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(a, n3));
  printTime(ms);
  printFloor((double)steps * 2.0 * n3 * sizeof(double), (double)steps * 54.0 * n3, "f64");
  cudaFree(a); cudaFree(b);
  return 0;
}
