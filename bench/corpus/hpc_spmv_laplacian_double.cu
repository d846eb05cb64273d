// HPC, CSR SpMV in double on the 5-point Laplacian of an N x N grid (built on
// the host), used as a damped Richardson iteration x <- x + w (b - A x):
// SpMV kernel, then an update kernel, per iteration.
#include "common.h"

__global__ void spmv(const int* rowPtr, const int* col, const double* val, const double* x,
                     double* y, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    double s = 0.0;
    for (int k = rowPtr[r]; k < rowPtr[r + 1]; ++k) s += val[k] * x[col[k]];
    y[r] = s;
  }
}

__global__ void richardson(double* x, const double* b, const double* Ax, double w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += w * (b[i] - Ax[i]);
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "n", 2048, 128);
  int iters = (int)argInt(argc, argv, "iters", 50, 5);
  int n = N * N;
  std::vector<int> rowPtr(n + 1), col;
  std::vector<double> val;
  col.reserve((size_t)5 * n);
  val.reserve((size_t)5 * n);
  for (int y = 0; y < N; ++y)
    for (int x = 0; x < N; ++x) {
      int i = y * N + x;
      rowPtr[i] = (int)col.size();
      if (y > 0) { col.push_back(i - N); val.push_back(-1.0); }
      if (x > 0) { col.push_back(i - 1); val.push_back(-1.0); }
      col.push_back(i); val.push_back(4.0);
      if (x < N - 1) { col.push_back(i + 1); val.push_back(-1.0); }
      if (y < N - 1) { col.push_back(i + N); val.push_back(-1.0); }
    }
  rowPtr[n] = (int)col.size();
  int nnz = rowPtr[n];
  int* dRow = deviceAlloc<int>(n + 1);
  int* dCol = deviceAlloc<int>(nnz);
  double* dVal = deviceAlloc<double>(nnz);
  double* x = deviceAlloc<double>(n);
  double* b = deviceAlloc<double>(n);
  double* Ax = deviceAlloc<double>(n);
  CHECK(cudaMemcpy(dRow, rowPtr.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dCol, col.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dVal, val.data(), nnz * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(x, 0, n * sizeof(double)));
  fillUniform(b, n, 152);

  dim3 block(256);
  dim3 grid((n + 255) / 256);
  GpuTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    spmv<<<grid, block>>>(dRow, dCol, dVal, x, Ax, n);
    richardson<<<grid, block>>>(x, b, Ax, 0.2, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(x, n));
  printTime(ms);
  printFloor((double)iters * ((double)nnz * 12 + (n + 1) * 4.0 + 3.0 * n * 8),
             (double)iters * (2.0 * nnz + 3.0 * n), "f64");
  cudaFree(dRow); cudaFree(dCol); cudaFree(dVal); cudaFree(x); cudaFree(b); cudaFree(Ax);
  return 0;
}
