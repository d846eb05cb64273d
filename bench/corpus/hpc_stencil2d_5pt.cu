// HPC, 2D heat equation: explicit 5-point stencil on an N x N float grid for
// many steps, ping-ponging two buffers; fixed boundary values.
#include "common.h"

__global__ void heatStep(const float* in, float* out, int N, float alpha) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < N && y < N) {
    int i = y * N + x;
    if (x == 0 || y == 0 || x == N - 1 || y == N - 1) {
      out[i] = in[i];
    } else {
      out[i] = in[i] + alpha * (in[i - 1] + in[i + 1] + in[i - N] + in[i + N] - 4.0f * in[i]);
    }
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "n", 4096, 256);
  int steps = (int)argInt(argc, argv, "steps", 100, 10);
  size_t nn = (size_t)N * N;
  float* a = deviceAlloc<float>(nn);
  float* b = deviceAlloc<float>(nn);
  fillUniform(a, nn, 145, 0.0, 1.0);

  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (N + 15) / 16);
  GpuTimer timer;
  timer.start();
  for (int s = 0; s < steps; ++s) {
    heatStep<<<grid, block>>>(a, b, N, 0.2f);
    float* t = a; a = b; b = t;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(a, nn));
  printTime(ms);
  printFloor((double)steps * 2.0 * nn * sizeof(float), (double)steps * 7.0 * nn, "f32");
  cudaFree(a); cudaFree(b);
  return 0;
}
