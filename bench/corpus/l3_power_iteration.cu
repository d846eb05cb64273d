// Level 3, power iteration for the dominant eigenvalue of a dense matrix:
// y = A x (one thread per row), the norm of y on the host after a copy,
// x = y / |y| in a kernel.
#include "common.h"

__global__ void matvec(const float* A, const float* x, float* y, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) acc += A[(size_t)r * n + j] * x[j];
    y[r] = acc;
  }
}

__global__ void scale(const float* y, float* x, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = y[i] * s;
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 8192, 512);
  int iters = (int)argInt(argc, argv, "iters", 20, 5);
  size_t nn = (size_t)n * n;
  float* A = deviceAlloc<float>(nn);
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  fillUniform(A, nn, 137, 0.0, 1.0);
  fillUniform(x, n, 138, 0.5, 1.0);
  std::vector<float> hy(n);

  dim3 block(256);
  dim3 grid((n + 255) / 256);
  double lambda = 0;
  GpuTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    matvec<<<grid, block>>>(A, x, y, n);
    CHECK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
    double s = 0;
    for (int i = 0; i < n; ++i) s += (double)hy[i] * hy[i];
    lambda = sqrt(s);
    scale<<<grid, block>>>(y, x, n, (float)(1.0 / lambda));
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(lambda + checksumOf(x, n));
  printTime(ms);
  printFloor((double)iters * (nn + 3.0 * n) * sizeof(float), (double)iters * (2.0 * nn + 3.0 * n),
             "f32");
  cudaFree(A); cudaFree(x); cudaFree(y);
  return 0;
}
