// A program whose host code has a plan: the synchronization inside the loop
// can be dropped (test/cudal1-opt/apply-identity.test).
#include <cuda_runtime.h>

__global__ void sum(const float *x, float *acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(acc, x[i]);
}

__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= 2.0f;
}

int main() {
  float *x, *acc;
  int n = 1 << 20;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&acc, sizeof(float));
  for (int it = 0; it < 10; ++it) {
    scale<<<(n + 255) / 256, 256>>>(x, n);
    cudaDeviceSynchronize();
  }
  sum<<<(n + 255) / 256, 256>>>(x, acc, n);
  float h;
  cudaMemcpy(&h, acc, sizeof(float), cudaMemcpyDeviceToHost);
  return h > 0 ? 0 : 1;
}
