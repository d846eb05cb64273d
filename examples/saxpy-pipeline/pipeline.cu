// The bundled example: a small, untuned CUDA program of the kind cudal1 is
// for. A host loop launches an element-wise chain (scale, bias + activation,
// axpy), a naive transpose and an atomic reduction, synchronizing each step.
// Build: nvcc -O3 -arch=sm_90 pipeline.cu -o pipeline    Run: ./pipeline [n]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));   \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= s;
}

__global__ void bias_relu(float *x, const float *bias, int n, int width) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] + bias[i % width];
    x[i] = v > 0.0f ? v : 0.0f;
  }
}

__global__ void axpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

__global__ void transpose(const float *in, float *out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[c * rows + r] = in[r * cols + c];
}

__global__ void sum_squares(const float *x, float *sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(sum, x[i] * x[i]);
}

__global__ void init(float *x, int n, unsigned seed) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    x[i] = (h & 0xffff) / 32768.0f - 1.0f;
  }
}

int main(int argc, char **argv) {
  const int width = 1024;
  int rows = argc > 1 ? atoi(argv[1]) : 4096;
  int n = rows * width;
  float *d_x, *d_y, *d_t, *d_bias, *d_sum;
  CHECK(cudaMalloc(&d_x, n * sizeof(float)));
  CHECK(cudaMalloc(&d_y, n * sizeof(float)));
  CHECK(cudaMalloc(&d_t, n * sizeof(float)));
  CHECK(cudaMalloc(&d_bias, width * sizeof(float)));
  CHECK(cudaMalloc(&d_sum, sizeof(float)));
  int threads = 256, blocks = (n + threads - 1) / threads;
  init<<<blocks, threads>>>(d_x, n, 1u);
  init<<<blocks, threads>>>(d_y, n, 2u);
  init<<<(width + 255) / 256, 256>>>(d_bias, width, 3u);
  CHECK(cudaMemset(d_sum, 0, sizeof(float)));

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  for (int step = 0; step < 10; ++step) {
    scale<<<blocks, threads>>>(d_x, 0.5f, n);
    bias_relu<<<blocks, threads>>>(d_x, d_bias, n, width);
    axpy<<<blocks, threads>>>(0.25f, d_x, d_y, n);
    CHECK(cudaDeviceSynchronize());
  }
  dim3 block(32, 8);
  dim3 grid((width + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
  transpose<<<grid, block>>>(d_y, d_t, rows, width);
  sum_squares<<<blocks, threads>>>(d_t, d_sum, n);
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f, sum = 0.0f;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaMemcpy(&sum, d_sum, sizeof(float), cudaMemcpyDeviceToHost));
  printf("checksum=%.6e\n", sum);
  printf("gpu_ms=%.3f\n", ms);
  cudaFree(d_x);
  cudaFree(d_y);
  cudaFree(d_t);
  cudaFree(d_bias);
  cudaFree(d_sum);
  return 0;
}
