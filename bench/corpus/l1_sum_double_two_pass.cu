// Level 1, reduction: sum of a double vector in two passes: per-block partial
// sums to global memory, then one block sums the partials.
#include "common.h"

__global__ void partialSums(const double* x, double* partial, int n) {
  __shared__ double cache[512];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cache[tid] = (i < n) ? x[i] : 0.0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) cache[tid] += cache[tid + s];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = cache[0];
}

__global__ void finalSum(const double* partial, double* out, int m) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    double s = 0.0;
    for (int i = 0; i < m; ++i) s += partial[i];
    *out = s;
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 25, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 10, 2);
  double* x = deviceAlloc<double>(n);
  fillUniform(x, n, 14);

  dim3 block(512);
  dim3 grid((n + block.x - 1) / block.x);
  double* partial = deviceAlloc<double>(grid.x);
  double* out = deviceAlloc<double>(1);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    partialSums<<<grid, block>>>(x, partial, n);
    finalSum<<<1, 1>>>(partial, out, grid.x);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  double result = 0;
  CHECK(cudaMemcpy(&result, out, sizeof(double), cudaMemcpyDeviceToHost));
  printChecksum(result);
  printTime(ms);
  printFloor(reps * (double)n * sizeof(double), reps * (double)n, "f64");
  cudaFree(x); cudaFree(partial); cudaFree(out);
  return 0;
}
