// Level 1, 1D convolution (cross-correlation) with several input and output
// channels, "valid" padding; one thread per output element.
#include "common.h"

__global__ void conv1d(const float* x, const float* w, float* y, int B, int Cin, int Cout, int L,
                       int K) {
  int Lout = L - K + 1;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < B * Cout * Lout) {
    int t = i % Lout;
    int co = (i / Lout) % Cout;
    int b = i / (Lout * Cout);
    float acc = 0.0f;
    for (int ci = 0; ci < Cin; ++ci)
      for (int k = 0; k < K; ++k)
        acc += x[(b * Cin + ci) * L + t + k] * w[(co * Cin + ci) * K + k];
    y[i] = acc;
  }
}

int main(int argc, char** argv) {
  int B = (int)argInt(argc, argv, "batch", 16, 2);
  int Cin = (int)argInt(argc, argv, "cin", 64, 8);
  int Cout = (int)argInt(argc, argv, "cout", 64, 8);
  int L = (int)argInt(argc, argv, "length", 16384, 1024);
  int K = (int)argInt(argc, argv, "kernel", 7, 7);
  int Lout = L - K + 1;
  size_t nx = (size_t)B * Cin * L, nw = (size_t)Cout * Cin * K, ny = (size_t)B * Cout * Lout;
  float* x = deviceAlloc<float>(nx);
  float* w = deviceAlloc<float>(nw);
  float* y = deviceAlloc<float>(ny);
  fillUniform(x, nx, 63);
  fillUniform(w, nw, 64, -0.2, 0.2);

  dim3 block(256);
  dim3 grid((unsigned)((ny + block.x - 1) / block.x));
  GpuTimer timer;
  timer.start();
  conv1d<<<grid, block>>>(x, w, y, B, Cin, Cout, L, K);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, ny));
  printTime(ms);
  printFloor((double)(nx + nw + ny) * sizeof(float), 2.0 * ny * Cin * K, "f32");
  cudaFree(x); cudaFree(w); cudaFree(y);
  return 0;
}
