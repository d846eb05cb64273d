// Level 1, matrix multiply: C = A * B for square float matrices, one thread
// per output element, row-major, no tiling.
#include "common.h"

__global__ void matmul(const float* A, const float* B, float* C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 2048, 128);
  size_t nn = (size_t)n * n;
  float* A = deviceAlloc<float>(nn);
  float* B = deviceAlloc<float>(nn);
  float* C = deviceAlloc<float>(nn);
  fillUniform(A, nn, 41);
  fillUniform(B, nn, 42);

  dim3 block(16, 16);
  dim3 grid((n + block.x - 1) / block.x, (n + block.y - 1) / block.y);
  GpuTimer timer;
  timer.start();
  matmul<<<grid, block>>>(A, B, C, n);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(C, nn));
  printTime(ms);
  printFloor(3.0 * nn * sizeof(float), 2.0 * nn * n, "f32");
  cudaFree(A); cudaFree(B); cudaFree(C);
  return 0;
}
