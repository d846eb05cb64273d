// Level 2, a two-layer MLP block in double: H = tanh(X W1 + b1); Y = H W2 + b2,
// each GEMM, bias and activation its own kernel.
#include "common.h"

__global__ void gemm(const double* A, const double* B, double* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    double acc = 0.0;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

__global__ void biasAdd(double* C, const double* b, int M, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < M * N) C[i] += b[i % N];
}

__global__ void tanhK(double* C, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) C[i] = tanh(C[i]);
}

int main(int argc, char** argv) {
  int M = (int)argInt(argc, argv, "batch", 4096, 64);
  int D = (int)argInt(argc, argv, "in", 512, 64);
  int Hd = (int)argInt(argc, argv, "hidden", 1024, 64);
  int O = (int)argInt(argc, argv, "out", 256, 32);
  double* X = deviceAlloc<double>((size_t)M * D);
  double* W1 = deviceAlloc<double>((size_t)D * Hd);
  double* b1 = deviceAlloc<double>(Hd);
  double* W2 = deviceAlloc<double>((size_t)Hd * O);
  double* b2 = deviceAlloc<double>(O);
  double* H = deviceAlloc<double>((size_t)M * Hd);
  double* Y = deviceAlloc<double>((size_t)M * O);
  fillUniform(X, (size_t)M * D, 117);
  fillUniform(W1, (size_t)D * Hd, 118, -0.05, 0.05);
  fillUniform(b1, Hd, 119, -0.1, 0.1);
  fillUniform(W2, (size_t)Hd * O, 120, -0.05, 0.05);
  fillUniform(b2, O, 121, -0.1, 0.1);

  dim3 block2(16, 16);
  dim3 gridH((Hd + 15) / 16, (M + 15) / 16);
  dim3 gridO((O + 15) / 16, (M + 15) / 16);
  dim3 block(256);
  GpuTimer timer;
  timer.start();
  gemm<<<gridH, block2>>>(X, W1, H, M, Hd, D);
  biasAdd<<<(M * Hd + 255) / 256, block>>>(H, b1, M, Hd);
  tanhK<<<(M * Hd + 255) / 256, block>>>(H, M * Hd);
  gemm<<<gridO, block2>>>(H, W2, Y, M, O, Hd);
  biasAdd<<<(M * O + 255) / 256, block>>>(Y, b2, M, O);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(Y, (size_t)M * O));
  printTime(ms);
  printFloor(((double)M * D + (double)D * Hd + Hd + (double)Hd * O + O + (double)M * O) *
                 sizeof(double),
             2.0 * M * Hd * D + 2.0 * M * O * Hd + 3.0 * M * Hd + (double)M * O, "f64");
  cudaFree(X); cudaFree(W1); cudaFree(b1); cudaFree(W2); cudaFree(b2); cudaFree(H); cudaFree(Y);
  return 0;
}
