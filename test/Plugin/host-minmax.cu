// Host code calling ::max and ::min, which nvcc accepts (NVIDIA's samples
// transpose and simpleStreams do): the toolchain shim's overloads make
// clang-19 and cudal1's own parse accept it too (issue 19 item 7).
// REQUIRES: nvcc
// RUN: cudal1-clang++ -x cuda --cuda-gpu-arch=sm_90 -c %s -o %t.o
// RUN: cudal1-opt %s --list-transforms -- -x cuda | FileCheck %s
// CHECK: kernel clampAll
#include <cuda_runtime.h>

__global__ void clampAll(float *x, float hi, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = min(x[i], hi); // the device overload, as before
}

int main() {
  float a = 1.0f, b = 2.0f;
  int blocks = max(1, 4096 / 256);
  unsigned u = max(-1, 2u);              // compared as unsigned, as nvcc does
  double d = min(1.0f, 2.0);             // float and double: double
  long long l = max(3ll, 4ll);
  float *x = nullptr;
  clampAll<<<blocks, 256>>>(x, max(a, b), 4096);
  return (u > 2u && d == 1.0 && l == 4 && min(a, b) == a) ? 0 : 1;
}
