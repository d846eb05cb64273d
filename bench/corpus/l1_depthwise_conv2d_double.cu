// Level 1, depthwise 2D convolution (one KxK filter per channel), double,
// valid padding; one thread per output element with a 1D launch.
#include "common.h"

__global__ void depthwise(const double* x, const double* w, double* y, int C, int H, int W,
                          int K) {
  int Ho = H - K + 1, Wo = W - K + 1;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < C * Ho * Wo) {
    int ox = i % Wo;
    int oy = (i / Wo) % Ho;
    int c = i / (Wo * Ho);
    double acc = 0.0;
    for (int ky = 0; ky < K; ++ky)
      for (int kx = 0; kx < K; ++kx)
        acc += x[(c * H + oy + ky) * W + ox + kx] * w[(c * K + ky) * K + kx];
    y[i] = acc;
  }
}

int main(int argc, char** argv) {
  int C = (int)argInt(argc, argv, "channels", 256, 8);
  int H = (int)argInt(argc, argv, "height", 256, 32);
  int W = (int)argInt(argc, argv, "width", 256, 32);
  int K = (int)argInt(argc, argv, "kernel", 5, 3);
  int reps = (int)argInt(argc, argv, "reps", 6, 1);
  int Ho = H - K + 1, Wo = W - K + 1;
  size_t nx = (size_t)C * H * W, nw = (size_t)C * K * K, ny = (size_t)C * Ho * Wo;
  double* x = deviceAlloc<double>(nx);
  double* w = deviceAlloc<double>(nw);
  double* y = deviceAlloc<double>(ny);
  fillUniform(x, nx, 68);
  fillUniform(w, nw, 69, -0.2, 0.2);

  dim3 block(256);
  dim3 grid((unsigned)((ny + block.x - 1) / block.x));
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    depthwise<<<grid, block>>>(x, w, y, C, H, W, K);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, ny));
  printTime(ms);
  printFloor(reps * (double)(nx + nw + ny) * sizeof(double), reps * 2.0 * ny * K * K, "f64");
  cudaFree(x); cudaFree(w); cudaFree(y);
  return 0;
}
