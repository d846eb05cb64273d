#include "kern.cuh"

__global__ void inMain(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  FOR4(j) {
    if (i < n)
      a[i] *= 2.0f;
  }
  for (int k = 0; k < 8; ++k)
    if (i < n)
      a[i] += 0.5f;
}

int main() {
  float *a = nullptr, h[32] = {};
  for (int r = 0; r < 2; ++r) {
    inHeader<<<1, 32>>>(a, 32);
    inMain<<<1, 32>>>(a, 32);
  }
  cudaDeviceSynchronize();
  return checksum(h, 32);
}
