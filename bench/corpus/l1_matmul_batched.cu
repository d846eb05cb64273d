// Level 1, batched matrix multiply: C[b] = A[b] * B[b] for a batch of small
// square matrices, blockIdx.z picks the batch entry.
#include "common.h"

__global__ void bmm(const float* A, const float* B, float* C, int n) {
  int b = blockIdx.z;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  const float* a = A + (size_t)b * n * n;
  const float* bm = B + (size_t)b * n * n;
  if (row < n && col < n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += a[row * n + k] * bm[k * n + col];
    C[(size_t)b * n * n + row * n + col] = acc;
  }
}

int main(int argc, char** argv) {
  int batch = (int)argInt(argc, argv, "batch", 256, 4);
  int n = (int)argInt(argc, argv, "n", 256, 64);
  size_t total = (size_t)batch * n * n;
  float* A = deviceAlloc<float>(total);
  float* B = deviceAlloc<float>(total);
  float* C = deviceAlloc<float>(total);
  fillUniform(A, total, 47);
  fillUniform(B, total, 48);

  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (n + 15) / 16, batch);
  GpuTimer timer;
  timer.start();
  bmm<<<grid, block>>>(A, B, C, n);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(C, total));
  printTime(ms);
  printFloor(3.0 * total * sizeof(float), 2.0 * total * n, "f32");
  cudaFree(A); cudaFree(B); cudaFree(C);
  return 0;
}
