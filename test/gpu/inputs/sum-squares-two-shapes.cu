// gpu/split-kernel-bundle's program: a float-atomic sum of squares (the
// corpus's l1_sum_squares_atomic) whose one launch site runs with two
// shapes each repetition, a long vector in 4096 blocks and a short one in
// 4, as a library kernel called on inputs of several sizes does. A plan
// that changes the launch is replayed with its remap applied to each
// captured launch on its own.
// Self-contained: the bundle builds it without the corpus's common.h.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));         \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void sumSquares(const float *x, float *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(total, x[i] * x[i]);
}

// The one launch site: launch-level plans are scoped to the kernel.
void sumOfSquares(const float *x, float *total, int n) {
  sumSquares<<<(n + 255) / 256, 256>>>(x, total, n);
}

__global__ void fill(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = float((i * 2654435761u) >> 8) * (1.0f / 16777216.0f);
}

int main() {
  const int n = 1 << 20, shortN = 1000, reps = 4;
  float *x, *total;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&total, 2 * sizeof(float)));
  fill<<<n / 256, 256>>>(x, n);
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaMemset(total, 0, 2 * sizeof(float)));
    sumOfSquares(x, total, n);
    sumOfSquares(x, total + 1, shortN);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0, h[2];
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaMemcpy(h, total, sizeof(h), cudaMemcpyDeviceToHost));
  std::printf("long=%.3e short=%.4e\ngpu_ms=%.4f\n", h[0], h[1], ms / reps);
  cudaFree(x);
  cudaFree(total);
  return 0;
}
