// Level 2, z = x + gelu(layernorm(x)) over rows, in double: statistics kernel,
// normalise kernel, GELU kernel, add kernel.
#include "common.h"

__global__ void rowStats(const double* x, double* mean, double* rstd, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    double s = 0.0, sq = 0.0;
    for (int j = 0; j < cols; ++j) {
      double v = x[(size_t)r * cols + j];
      s += v;
      sq += v * v;
    }
    double m = s / cols;
    mean[r] = m;
    rstd[r] = 1.0 / sqrt(sq / cols - m * m + 1e-6);
  }
}

__global__ void normalize(const double* x, const double* mean, const double* rstd, double* y,
                          int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) y[i] = (x[i] - mean[i / cols]) * rstd[i / cols];
}

__global__ void geluErf(double* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5 * y[i] * (1.0 + erf(y[i] * 0.7071067811865476));
}

__global__ void residual(const double* x, const double* y, double* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 16384, 256);
  int cols = (int)argInt(argc, argv, "cols", 1024, 128);
  int reps = (int)argInt(argc, argv, "reps", 4, 1);
  int n = rows * cols;
  double* x = deviceAlloc<double>(n);
  double* y = deviceAlloc<double>(n);
  double* z = deviceAlloc<double>(n);
  double* mean = deviceAlloc<double>(rows);
  double* rstd = deviceAlloc<double>(rows);
  fillUniform(x, n, 115);

  dim3 block(256);
  dim3 gridRows((rows + 255) / 256);
  dim3 grid((n + 255) / 256);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    rowStats<<<gridRows, block>>>(x, mean, rstd, rows, cols);
    normalize<<<grid, block>>>(x, mean, rstd, y, rows, cols);
    geluErf<<<grid, block>>>(y, n);
    residual<<<grid, block>>>(x, y, z, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(z, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(double), reps * 12.0 * n, "f64");
  cudaFree(x); cudaFree(y); cudaFree(z); cudaFree(mean); cudaFree(rstd);
  return 0;
}
