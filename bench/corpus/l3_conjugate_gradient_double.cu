// Level 3, iterative solver: conjugate gradient for the 2D Laplacian
// (matrix-free 5-point stencil) in double. Dot products leave per-block
// partial sums that the host copies back and adds; vector updates are
// separate kernels.
#include "common.h"

__global__ void laplacian(const double* p, double* Ap, int N) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < N && y < N) {
    int i = y * N + x;
    double v = 4.0 * p[i];
    if (x > 0) v -= p[i - 1];
    if (x < N - 1) v -= p[i + 1];
    if (y > 0) v -= p[i - N];
    if (y < N - 1) v -= p[i + N];
    Ap[i] = v;
  }
}

__global__ void dotPartial(const double* a, const double* b, double* partial, int n) {
  __shared__ double s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? a[i] * b[i] : 0.0;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

__global__ void axpy(double* y, const double* x, double alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += alpha * x[i];
}

__global__ void xpby(double* p, const double* r, double beta, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = r[i] + beta * p[i];
}

static double dot(const double* a, const double* b, double* partial, std::vector<double>& h,
                  int n) {
  int blocks = (n + 255) / 256;
  dotPartial<<<blocks, 256>>>(a, b, partial, n);
  CHECK(cudaMemcpy(h.data(), partial, blocks * sizeof(double), cudaMemcpyDeviceToHost));
  double s = 0;
  for (int k = 0; k < blocks; ++k) s += h[k];
  return s;
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "n", 2048, 128);
  int iters = (int)argInt(argc, argv, "iters", 100, 10);
  int n = N * N;
  double* x = deviceAlloc<double>(n);
  double* r = deviceAlloc<double>(n);
  double* p = deviceAlloc<double>(n);
  double* Ap = deviceAlloc<double>(n);
  int blocks = (n + 255) / 256;
  double* partial = deviceAlloc<double>(blocks);
  std::vector<double> h(blocks);
  CHECK(cudaMemset(x, 0, n * sizeof(double)));
  fillUniform(r, n, 136);  // b, and r = b - A*0
  CHECK(cudaMemcpy(p, r, n * sizeof(double), cudaMemcpyDeviceToDevice));

  dim3 block2(32, 8);
  dim3 grid2((N + 31) / 32, (N + 7) / 8);
  GpuTimer timer;
  timer.start();
  double rr = dot(r, r, partial, h, n);
  for (int it = 0; it < iters; ++it) {
    laplacian<<<grid2, block2>>>(p, Ap, N);
    double alpha = rr / dot(p, Ap, partial, h, n);
    axpy<<<blocks, 256>>>(x, p, alpha, n);
    axpy<<<blocks, 256>>>(r, Ap, -alpha, n);
    double rrNew = dot(r, r, partial, h, n);
    xpby<<<blocks, 256>>>(p, r, rrNew / rr, n);
    rr = rrNew;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(x, n));
  printTime(ms);
  // Fused ideal per iteration: read p, x, r, write Ap, x, r, p (7 vectors).
  printFloor((double)iters * 7.0 * n * sizeof(double), (double)iters * 19.0 * n, "f64");
  cudaFree(x); cudaFree(r); cudaFree(p); cudaFree(Ap); cudaFree(partial);
  return 0;
}
