// Level 1, 2D max pooling NCHW, window 3, stride 2, no padding.
#include "common.h"

__global__ void maxPool(const float* x, float* y, int NC, int H, int W, int win, int stride) {
  int Ho = (H - win) / stride + 1, Wo = (W - win) / stride + 1;
  int ox = blockIdx.x * blockDim.x + threadIdx.x;
  int oy = blockIdx.y * blockDim.y + threadIdx.y;
  int nc = blockIdx.z;
  if (ox < Wo && oy < Ho && nc < NC) {
    float m = -INFINITY;
    for (int ky = 0; ky < win; ++ky)
      for (int kx = 0; kx < win; ++kx)
        m = fmaxf(m, x[((size_t)nc * H + oy * stride + ky) * W + ox * stride + kx]);
    y[((size_t)nc * Ho + oy) * Wo + ox] = m;
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "batch", 32, 2);
  int C = (int)argInt(argc, argv, "channels", 64, 4);
  int H = (int)argInt(argc, argv, "height", 224, 32);
  int W = (int)argInt(argc, argv, "width", 224, 32);
  int reps = (int)argInt(argc, argv, "reps", 5, 1);
  int win = 3, stride = 2;
  int Ho = (H - win) / stride + 1, Wo = (W - win) / stride + 1;
  size_t nx = (size_t)N * C * H * W, ny = (size_t)N * C * Ho * Wo;
  float* x = deviceAlloc<float>(nx);
  float* y = deviceAlloc<float>(ny);
  fillUniform(x, nx, 70);

  dim3 block(16, 16);
  dim3 grid((Wo + 15) / 16, (Ho + 15) / 16, N * C);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    maxPool<<<grid, block>>>(x, y, N * C, H, W, win, stride);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, ny));
  printTime(ms);
  printFloor(reps * (double)(nx + ny) * sizeof(float), reps * 9.0 * ny, "f32");
  cudaFree(x); cudaFree(y);
  return 0;
}
