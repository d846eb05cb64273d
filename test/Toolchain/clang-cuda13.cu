// clang-19 compiles and links a real CUDA program against CUDA 13 through
// cudal1's generated CUDA path (fatbinary wrapper) and stub include dir.
// REQUIRES: nvcc
// RUN: cudal1-clang++ -x cuda --cuda-gpu-arch=sm_90 -O2 %s -o %t -L%cuda_root/lib64 -lcudart
// RUN: test -x %t
// The device image is in the binary: the fatbinary wrapper got sm_90 through.
// RUN: grep -c sm_90 %t | FileCheck %s --check-prefix=IMAGE
// IMAGE: {{[1-9]}}
// On a GPU machine the program also runs and checks its result.
// RUN: %if cuda-gpu %{ %t | FileCheck %s %} %else %{ true %}
// CHECK: ok 1048576
#include <cstdio>
#include <cuda_runtime.h>

__global__ void iota(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] = i;
}

int main() {
  const int n = 1 << 20;
  int *d = nullptr;
  if (cudaMalloc(&d, n * sizeof(int)) != cudaSuccess)
    return 1;
  iota<<<(n + 255) / 256, 256>>>(d, n);
  static int h[n];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  int good = 0;
  for (int i = 0; i < n; ++i)
    good += h[i] == i;
  printf("ok %d\n", good);
  return good == n ? 0 : 1;
}
