// A program that builds only with its flags: -I inc (scale.h), -DFACTOR,
// -isystem sys (limits.h), -include pre.h.
#include "scale.h"
#include <bundle_limits.h>
#ifndef PRE_INCLUDED
#error pre.h was not included
#endif
#include <cstdio>

__global__ void scale(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] = SCALE_BY(a[i]);
}

int main() {
  float *a = nullptr;
  cudaMalloc(&a, LIMIT_N * sizeof(float));
  scale<<<(LIMIT_N + 255) / 256, 256>>>(a, LIMIT_N);
  cudaDeviceSynchronize();
  cudaFree(a);
  std::printf("done\n");
  return 0;
}
