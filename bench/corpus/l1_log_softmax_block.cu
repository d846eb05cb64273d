// Level 1, log-softmax over rows: one block per row, shared-memory tree
// reductions for the maximum and the sum, double precision.
#include "common.h"

#define THREADS 256

__global__ void logSoftmax(const double* x, double* y, int cols) {
  __shared__ double red[THREADS];
  const double* in = x + (size_t)blockIdx.x * cols;
  double* out = y + (size_t)blockIdx.x * cols;
  int t = threadIdx.x;

  double m = -1e300;
  for (int j = t; j < cols; j += blockDim.x) m = fmax(m, in[j]);
  red[t] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s) red[t] = fmax(red[t], red[t + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();

  double sum = 0.0;
  for (int j = t; j < cols; j += blockDim.x) sum += exp(in[j] - m);
  red[t] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  double logSum = log(red[0]);
  for (int j = t; j < cols; j += blockDim.x) out[j] = in[j] - m - logSum;
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 16384, 256);
  int cols = (int)argInt(argc, argv, "cols", 2048, 256);
  int reps = (int)argInt(argc, argv, "reps", 10, 1);
  size_t n = (size_t)rows * cols;
  double* x = deviceAlloc<double>(n);
  double* y = deviceAlloc<double>(n);
  fillUniform(x, n, 25, -3.0, 3.0);

  dim3 block(THREADS);
  dim3 grid(rows);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    logSoftmax<<<grid, block>>>(x, y, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(double), reps * 5.0 * n, "f64");
  cudaFree(x); cudaFree(y);
  return 0;
}
