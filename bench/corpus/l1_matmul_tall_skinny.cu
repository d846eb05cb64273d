// Level 1, tall-skinny matrix multiply: C (M x N) = A (M x K) * B (K x N) with
// M large and N small; one thread per output, 1D launch.
#include "common.h"

__global__ void tallSkinny(const float* A, const float* B, float* C, int M, int N, int K) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < M * N) {
    int row = idx / N;
    int col = idx % N;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[idx] = acc;
  }
}

int main(int argc, char** argv) {
  int M = (int)argInt(argc, argv, "m", 262144, 4096);
  int N = (int)argInt(argc, argv, "n", 16, 16);
  int K = (int)argInt(argc, argv, "k", 256, 64);
  int reps = (int)argInt(argc, argv, "reps", 4, 1);
  float* A = deviceAlloc<float>((size_t)M * K);
  float* B = deviceAlloc<float>((size_t)K * N);
  float* C = deviceAlloc<float>((size_t)M * N);
  fillUniform(A, (size_t)M * K, 45);
  fillUniform(B, (size_t)K * N, 46);

  dim3 block(256);
  dim3 grid((M * N + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    tallSkinny<<<grid, block>>>(A, B, C, M, N, K);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(C, (size_t)M * N));
  printTime(ms);
  printFloor(reps * ((double)M * K + (double)K * N + (double)M * N) * sizeof(float),
             reps * 2.0 * M * N * K, "f32");
  cudaFree(A); cudaFree(B); cudaFree(C);
  return 0;
}
