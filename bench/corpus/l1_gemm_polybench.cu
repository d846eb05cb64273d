// Level 1, PolyBench-style gemm in double: C = alpha * A * B + beta * C,
// accumulated in C in global memory (C[i][j] *= beta, then C[i][j] +=
// alpha * A[i][k] * B[k][j] for every k), one thread per output, 32 x 8 blocks.
#include "common.h"

__global__ void gemm_kernel(int ni, int nj, int nk, double alpha, double beta, double* a,
                            double* b, double* c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;

  if ((i < ni) && (j < nj)) {
    c[i * nj + j] *= beta;
    int k;
    for (k = 0; k < nk; k++) {
      c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
    }
  }
}

int main(int argc, char** argv) {
  int NI = (int)argInt(argc, argv, "ni", 1024, 128);
  int NJ = (int)argInt(argc, argv, "nj", 1024, 128);
  int NK = (int)argInt(argc, argv, "nk", 1024, 64);
  double alpha = 32412.0, beta = 2123.0;  // PolyBench's constants
  double* A = deviceAlloc<double>((size_t)NI * NK);
  double* B = deviceAlloc<double>((size_t)NK * NJ);
  double* C = deviceAlloc<double>((size_t)NI * NJ);
  fillUniform(A, (size_t)NI * NK, 71);
  fillUniform(B, (size_t)NK * NJ, 72);
  fillUniform(C, (size_t)NI * NJ, 73);

  dim3 block(32, 8);
  dim3 grid((NJ + block.x - 1) / block.x, (NI + block.y - 1) / block.y);
  GpuTimer timer;
  timer.start();
  gemm_kernel<<<grid, block>>>(NI, NJ, NK, alpha, beta, A, B, C);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(C, (size_t)NI * NJ));
  printTime(ms);
  // C is read and written once; 2 flops per multiply-add plus the scaling.
  printFloor(((double)NI * NK + (double)NK * NJ + 2.0 * NI * NJ) * sizeof(double),
             2.0 * NI * NJ * NK + (double)NI * NJ, "f64");
  cudaFree(A); cudaFree(B); cudaFree(C);
  return 0;
}
