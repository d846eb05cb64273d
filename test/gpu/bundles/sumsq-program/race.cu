// A wrong variant (race): the atomic replaced by a plain read-modify-write.
// The float-atomic sum of 2^24 squares as a whole program (issue 15 item 2):
// every thread adds its square to one float with atomicAdd, so the sum
// loses the small addends once it is large; the program prints the sum and
// the GPU time of the kernel. Build: nvcc -O3 -arch=sm_90 original.cu
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned h = (unsigned)i * 2654435761u;
    h ^= h >> 15;
    x[i] = (h & 0xffffff) / 16777216.0f;
  }
}

__global__ void sumsq(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    *out += x[i] * x[i]; // race: a lost-update read-modify-write
}

int main() {
  const int n = 1 << 24;
  float *x, *sum;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&sum, sizeof(float)) != cudaSuccess) {
    fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  fill<<<(n + 255) / 256, 256>>>(x, n);
  cudaMemset(sum, 0, sizeof(float));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  sumsq<<<(n + 255) / 256, 256>>>(x, sum, n);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0, s = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaMemcpy(&s, sum, sizeof(float), cudaMemcpyDeviceToHost);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
    return 1;
  }
  printf("sum of squares: %.6e\n", s);
  printf("gpu_ms=%.4f\n", ms);
  return 0;
}
