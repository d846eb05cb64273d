/* cudal1-opt plan: @sumsq: warp-reduce */ // The float-atomic sum of 2^24 squares as a whole program (issue 15 item 2):
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

#ifndef CUDAL1_WARP_ATOMIC_ADD
#define CUDAL1_WARP_ATOMIC_ADD
// cudal1 warp-reduce: adds v over the lanes of the calling warp that exist
// (a block may end inside a warp) and lane 0 adds the sum to *addr. Every
// existing lane of the warp must call it.
template <typename T>
__device__ __forceinline__ void cudal1WarpAtomicAdd(T *addr, T v) {
  unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  unsigned lane = tid % 32u;
  unsigned left = threads - (tid - lane);
  unsigned live = left < 32u ? left : 32u;
  unsigned mask = live == 32u ? 0xffffffffu : (1u << live) - 1u;
  for (unsigned off = 16; off > 0; off /= 2) {
    T o = __shfl_down_sync(mask, v, off);
    if (lane + off < live)
      v += o;
  }
  if (lane == 0)
    atomicAdd(addr, v);
}
#endif
__global__ void sumsq(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float cudal1_partial = 0;
  if (i < n)
    cudal1_partial += x[i] * x[i];
  cudal1WarpAtomicAdd<float>(out, cudal1_partial);
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
