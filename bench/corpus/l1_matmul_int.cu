// Level 1, integer matrix multiply (int32 accumulate), one thread per output.
#include "common.h"

__global__ void imatmul(const int* A, const int* B, int* C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    int acc = 0;
    for (int k = 0; k < n; ++k) acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 2048, 128);
  size_t nn = (size_t)n * n;
  int* A = deviceAlloc<int>(nn);
  int* B = deviceAlloc<int>(nn);
  int* C = deviceAlloc<int>(nn);
  fillInt(A, nn, 51, 16);
  fillInt(B, nn, 52, 16);

  dim3 block(32, 8);
  dim3 grid((n + block.x - 1) / block.x, (n + block.y - 1) / block.y);
  GpuTimer timer;
  timer.start();
  imatmul<<<grid, block>>>(A, B, C, n);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(C, nn));
  printTime(ms);
  printFloor(3.0 * nn * sizeof(int), 2.0 * nn * n, "i32");
  cudaFree(A); cudaFree(B); cudaFree(C);
  return 0;
}
