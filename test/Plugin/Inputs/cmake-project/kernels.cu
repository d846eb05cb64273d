// Tuned in the test: `sum`'s atomics become a warp reduction.
#include "demo.h"

__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= s;
}

__global__ void sum(const float *x, float *acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(acc, x[i]);
}

void run(float *x, float *acc, int n) {
  scale<<<(n + DEMO_BLOCK - 1) / DEMO_BLOCK, DEMO_BLOCK>>>(x, 2.0f, n);
  sum<<<(n + DEMO_BLOCK - 1) / DEMO_BLOCK, DEMO_BLOCK>>>(x, acc, n);
}
