// Level 3, iterative solver: Jacobi iterations for the 2D Poisson equation
// on an N x N grid; every `check` iterations the residual norm is reduced on
// the device (double atomicAdd) and copied to the host to test convergence.
#include "common.h"

__global__ void jacobiStep(const float* u, const float* f, float* unew, int N, float h2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < N - 1 && y > 0 && y < N - 1) {
    int i = y * N + x;
    unew[i] = 0.25f * (u[i - 1] + u[i + 1] + u[i - N] + u[i + N] + h2 * f[i]);
  }
}

__global__ void residualNorm(const float* u, const float* f, double* out, int N, float invH2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < N - 1 && y > 0 && y < N - 1) {
    int i = y * N + x;
    float r = f[i] - (4.0f * u[i] - u[i - 1] - u[i + 1] - u[i - N] - u[i + N]) * invH2;
    atomicAdd(out, (double)r * r);
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "n", 4096, 256);
  int iters = (int)argInt(argc, argv, "iters", 300, 20);
  int check = (int)argInt(argc, argv, "check", 50, 10);
  size_t nn = (size_t)N * N;
  float* u = deviceAlloc<float>(nn);
  float* unew = deviceAlloc<float>(nn);
  float* f = deviceAlloc<float>(nn);
  double* res = deviceAlloc<double>(1);
  CHECK(cudaMemset(u, 0, nn * sizeof(float)));
  CHECK(cudaMemset(unew, 0, nn * sizeof(float)));
  fillUniform(f, nn, 135, 0.0, 1.0);
  float h = 1.0f / (N - 1);

  dim3 block(32, 8);
  dim3 grid((N + 31) / 32, (N + 7) / 8);
  int done = 0, checks = 0;
  double lastRes = 0;
  GpuTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    jacobiStep<<<grid, block>>>(u, f, unew, N, h * h);
    float* tmp = u; u = unew; unew = tmp;
    done++;
    if ((it + 1) % check == 0) {
      CHECK(cudaMemset(res, 0, sizeof(double)));
      residualNorm<<<grid, block>>>(u, f, res, N, 1.0f / (h * h));
      CHECK(cudaMemcpy(&lastRes, res, sizeof(double), cudaMemcpyDeviceToHost));
      checks++;
      if (sqrt(lastRes) < 1e-12) break;
    }
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(u, nn));
  printTime(ms);
  printFloor((double)done * 3.0 * nn * sizeof(float) + checks * 2.0 * nn * sizeof(float),
             (double)done * 6.0 * nn + checks * 8.0 * nn, "f32");
  cudaFree(u); cudaFree(unew); cudaFree(f); cudaFree(res);
  return 0;
}
