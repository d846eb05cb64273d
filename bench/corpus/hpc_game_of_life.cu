// HPC, Conway's game of life on a periodic int grid: one thread per cell
// counts its eight neighbours with modulo wrap-around.
#include "common.h"

__global__ void lifeStep(const int* in, int* out, int N) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < N && y < N) {
    int alive = 0;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0) continue;
        int xx = (x + dx + N) % N, yy = (y + dy + N) % N;
        alive += in[yy * N + xx];
      }
    int self = in[y * N + x];
    out[y * N + x] = (alive == 3 || (alive == 2 && self)) ? 1 : 0;
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "n", 8192, 256);
  int steps = (int)argInt(argc, argv, "steps", 30, 5);
  size_t nn = (size_t)N * N;
  int* a = deviceAlloc<int>(nn);
  int* b = deviceAlloc<int>(nn);
  fillInt(a, nn, 149, 2);

  dim3 block(32, 8);
  dim3 grid((N + 31) / 32, (N + 7) / 8);
  GpuTimer timer;
  timer.start();
  for (int s = 0; s < steps; ++s) {
    lifeStep<<<grid, block>>>(a, b, N);
    int* t = a; a = b; b = t;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(a, nn));
  printTime(ms);
  printFloor((double)steps * 2.0 * nn * sizeof(int), (double)steps * 10.0 * nn, "i32");
  cudaFree(a); cudaFree(b);
  return 0;
}
