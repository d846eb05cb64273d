// A program for the reference-program rewrite (reference-program.test):
// kernels that promote, one that cannot (half precision), one launched from
// a macro, one in a namespace, one declared before it is defined.
#include <cstdio>
#include <cuda_fp16.h>

#define LAUNCH_SCALE(n, x) scale<<<((n) + 255) / 256, 256>>>(x, 2.0f, n)

__global__ void sumsq(const float *x, float *out, int n);

__device__ float sq(float v) { return v * v; }

__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= s;
}

__global__ void to_half(const float *x, __half *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = __float2half(x[i]);
}

namespace ops {
__global__ void axpy4(float a, const float4 *x, float4 *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i].x += a * x[i].x;
    y[i].y += a * sq(x[i].y);
  }
}
} // namespace ops

__global__ void sumsq(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, sq(x[i]));
}

int main() {
  const int n = 1 << 20;
  float *x, *sum;
  float4 *a, *b;
  __half *h;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&sum, sizeof(float));
  cudaMalloc(&a, n * sizeof(float4));
  cudaMalloc(&b, n * sizeof(float4));
  cudaMalloc(&h, n * sizeof(__half));
  cudaMemset(x, 0, n * sizeof(float));
  cudaMemset(sum, 0, sizeof(float));
  cudaStream_t st;
  cudaStreamCreate(&st);
  scale<<<(n + 255) / 256, 256, 0, st>>>(x, 0.5f,
                                         n);
  LAUNCH_SCALE(n, x);
  ops::axpy4<<<dim3((n + 255) / 256), dim3(256)>>>(0.25f, a, b, n);
  to_half<<<(n + 255) / 256, 256>>>(x, h, n);
  sumsq<<<(n + 255) / 256, 256>>>(x, sum, n);
  float s = 0;
  cudaMemcpy(&s, sum, sizeof(float), cudaMemcpyDeviceToHost);
  printf("sum=%.6e\n", s);
  return 0;
}
