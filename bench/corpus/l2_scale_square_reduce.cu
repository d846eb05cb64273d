// Level 2, a scaled norm: s = sum((alpha * x + beta)^2) as an elementwise
// kernel into a temporary followed by a reduction with one atomicAdd per
// block into a double accumulator.
#include "common.h"

__global__ void affine(const float* x, float* t, int n, float alpha, float beta) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) t[i] = alpha * x[i] + beta;
}

__global__ void sumSquares(const float* t, double* out, int n) {
  __shared__ double cache[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cache[threadIdx.x] = i < n ? (double)t[i] * t[i] : 0.0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) cache[threadIdx.x] += cache[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, cache[0]);
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 26, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 5, 1);
  float* x = deviceAlloc<float>(n);
  float* t = deviceAlloc<float>(n);
  double* out = deviceAlloc<double>(1);
  fillUniform(x, n, 116);

  dim3 block(256);
  dim3 grid((n + 255) / 256);
  double h = 0;
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaMemset(out, 0, sizeof(double)));
    affine<<<grid, block>>>(x, t, n, 2.0f, 0.25f);
    sumSquares<<<grid, block>>>(t, out, n);
    CHECK(cudaMemcpy(&h, out, sizeof(double), cudaMemcpyDeviceToHost));
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksumRounded(h, 10);
  printTime(ms);
  printFloor(reps * (double)n * sizeof(float), reps * 4.0 * n, "f32");
  cudaFree(x); cudaFree(t); cudaFree(out);
  return 0;
}
