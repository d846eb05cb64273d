#include "demo.h"
#include <cstdio>
#include <cuda_runtime.h>

int main() {
  const int n = 1 << 20;
  float *x, *y, *acc;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess) {
    std::puts("no GPU");
    return 0;
  }
  cudaMalloc(&y, n * sizeof(float));
  cudaMalloc(&acc, sizeof(float));
  cudaMemset(x, 0, n * sizeof(float));
  cudaMemset(y, 0, n * sizeof(float));
  cudaMemset(acc, 0, sizeof(float));
  axpy(2.0f, x, y, n);
  run(y, acc, n);
  float h = -1;
  cudaMemcpy(&h, acc, sizeof(float), cudaMemcpyDeviceToHost);
  std::printf("sum=%g\n", h);
  return 0;
}
