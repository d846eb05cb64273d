// Level 1, matrix product with a transposed operand in double, written the
// other way round: Y = s * X * W^T (W stored N x K, as a linear layer keeps
// it), the output column on threadIdx.y and the row on threadIdx.x, the
// loop variable named t, the accumulator updated as sum = sum + w * x * s.
#include "common.h"

__global__ void linearScaled(const double* X, const double* W, double* Y, int rows, int cols,
                             int depth, double s) {
  int q = blockIdx.x * blockDim.x + threadIdx.x;  // the row of Y
  int p = blockIdx.y * blockDim.y + threadIdx.y;  // the column of Y
  if (p < cols && q < rows) {
    double sum = 0.0;
    for (int t = 0; t < depth; t++) sum = sum + W[p * depth + t] * X[q * depth + t] * s;
    Y[q * cols + p] = sum;
  }
}

int main(int argc, char** argv) {
  int M = (int)argInt(argc, argv, "m", 1024, 128);
  int N = (int)argInt(argc, argv, "n", 1024, 128);
  int K = (int)argInt(argc, argv, "k", 1024, 64);
  double* X = deviceAlloc<double>((size_t)M * K);
  double* W = deviceAlloc<double>((size_t)N * K);
  double* Y = deviceAlloc<double>((size_t)M * N);
  fillUniform(X, (size_t)M * K, 81);
  fillUniform(W, (size_t)N * K, 82);

  dim3 block(16, 16);
  dim3 grid((M + block.x - 1) / block.x, (N + block.y - 1) / block.y);
  GpuTimer timer;
  timer.start();
  linearScaled<<<grid, block>>>(X, W, Y, M, N, K, 0.125);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(Y, (size_t)M * N));
  printTime(ms);
  printFloor(((double)M * K + (double)N * K + (double)M * N) * sizeof(double),
             2.0 * M * N * K + (double)M * N, "f64");
  cudaFree(X); cudaFree(W); cudaFree(Y);
  return 0;
}
