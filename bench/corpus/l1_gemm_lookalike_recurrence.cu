// Level 1, looks like a GEMM but is not one: P[i] = alpha * A[i][0..i) * P[0..i)
// + beta * P[i], row after row, each row reading the rows the earlier launches
// wrote (a triangular recurrence, as in a forward substitution). The kernel
// has the shape of `C = alpha * A * B + beta * C` with B = C, so no GEMM
// substitution or tiling may reorder it. One thread per column, one launch
// per row.
#include "common.h"

__global__ void rowUpdate(const float* A, float* P, int i, int n, float alpha, float beta) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) {
    float acc = 0.0f;
    for (int k = 0; k < i; ++k) acc += A[(size_t)i * n + k] * P[(size_t)k * n + j];
    P[(size_t)i * n + j] = alpha * acc + beta * P[(size_t)i * n + j];
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1024, 128);
  float* A = deviceAlloc<float>((size_t)n * n);
  float* P = deviceAlloc<float>((size_t)n * n);
  fillUniform(A, (size_t)n * n, 101);
  fillUniform(P, (size_t)n * n, 102);

  int threads = 128;
  float alpha = 1.0f / (float)n;  // keeps the rows' growth bounded
  GpuTimer timer;
  timer.start();
  for (int i = 0; i < n; ++i) {
    rowUpdate<<<(n + threads - 1) / threads, threads>>>(A, P, i, n, alpha, 1.0f);
    CHECK_LAUNCH();
  }
  float ms = timer.stop();

  printChecksum(checksumOf(P, (size_t)n * n));
  printTime(ms);
  // The strict lower triangle of A and P read once, P written once.
  printFloor(((double)n * (n - 1) / 2 + 2.0 * n * n) * sizeof(float),
             (double)n * n * (n - 1) + 3.0 * n * n, "f32");
  cudaFree(A); cudaFree(P);
  return 0;
}
