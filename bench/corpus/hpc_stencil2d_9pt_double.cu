// HPC, 2D 9-point (box) smoothing stencil in double over many steps, with
// a 1D launch and the 2D coordinates recovered by division.
#include "common.h"

__global__ void smooth9(const double* in, double* out, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N * N) {
    int x = i % N, y = i / N;
    if (x == 0 || y == 0 || x == N - 1 || y == N - 1) {
      out[i] = in[i];
      return;
    }
    double s = 0.0;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) s += in[(y + dy) * N + x + dx];
    out[i] = s / 9.0;
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "n", 4096, 256);
  int steps = (int)argInt(argc, argv, "steps", 40, 5);
  size_t nn = (size_t)N * N;
  double* a = deviceAlloc<double>(nn);
  double* b = deviceAlloc<double>(nn);
  fillUniform(a, nn, 146);

  dim3 block(256);
  dim3 grid((unsigned)((nn + 255) / 256));
  GpuTimer timer;
  timer.start();
  for (int s = 0; s < steps; ++s) {
    smooth9<<<grid, block>>>(a, b, N);
    double* t = a; a = b; b = t;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(a, nn));
  printTime(ms);
  printFloor((double)steps * 2.0 * nn * sizeof(double), (double)steps * 10.0 * nn, "f64");
  cudaFree(a); cudaFree(b);
  return 0;
}
