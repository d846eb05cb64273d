// HPC, 3D 7-point Laplacian diffusion on an N^3 float grid, 3D thread blocks
// of 8x8x8, many steps.
#include "common.h"

__global__ void diffuse3d(const float* in, float* out, int N, float c) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < N && y < N && z < N) {
    size_t i = ((size_t)z * N + y) * N + x;
    if (x == 0 || y == 0 || z == 0 || x == N - 1 || y == N - 1 || z == N - 1) {
      out[i] = in[i];
    } else {
      size_t plane = (size_t)N * N;
      out[i] = in[i] + c * (in[i - 1] + in[i + 1] + in[i - N] + in[i + N] + in[i - plane] +
                            in[i + plane] - 6.0f * in[i]);
    }
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "n", 256, 32);
  int steps = (int)argInt(argc, argv, "steps", 50, 5);
  size_t n3 = (size_t)N * N * N;
  float* a = deviceAlloc<float>(n3);
  float* b = deviceAlloc<float>(n3);
  fillUniform(a, n3, 147, 0.0, 1.0);

  dim3 block(8, 8, 8);
  dim3 grid((N + 7) / 8, (N + 7) / 8, (N + 7) / 8);
  GpuTimer timer;
  timer.start();
  for (int s = 0; s < steps; ++s) {
    diffuse3d<<<grid, block>>>(a, b, N, 0.1f);
    float* t = a; a = b; b = t;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(a, n3));
  printTime(ms);
  printFloor((double)steps * 2.0 * n3 * sizeof(float), (double)steps * 9.0 * n3, "f32");
  cudaFree(a); cudaFree(b);
  return 0;
}
