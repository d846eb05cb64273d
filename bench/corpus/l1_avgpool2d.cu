// Level 1, 2D average pooling NCHW, 2x2 window, stride 2; 1D launch over
// outputs.
#include "common.h"

__global__ void avgPool2x2(const float* x, float* y, int NC, int H, int W) {
  int Ho = H / 2, Wo = W / 2;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < NC * Ho * Wo) {
    int ox = i % Wo;
    int oy = (i / Wo) % Ho;
    int nc = i / (Wo * Ho);
    const float* p = x + (size_t)nc * H * W;
    y[i] = 0.25f * (p[(2 * oy) * W + 2 * ox] + p[(2 * oy) * W + 2 * ox + 1] +
                    p[(2 * oy + 1) * W + 2 * ox] + p[(2 * oy + 1) * W + 2 * ox + 1]);
  }
}

int main(int argc, char** argv) {
  int NC = (int)argInt(argc, argv, "planes", 2048, 16);
  int H = (int)argInt(argc, argv, "height", 128, 32);
  int W = (int)argInt(argc, argv, "width", 128, 32);
  int reps = (int)argInt(argc, argv, "reps", 30, 1);
  size_t nx = (size_t)NC * H * W, ny = (size_t)NC * (H / 2) * (W / 2);
  float* x = deviceAlloc<float>(nx);
  float* y = deviceAlloc<float>(ny);
  fillUniform(x, nx, 71);

  dim3 block(256);
  dim3 grid((unsigned)((ny + block.x - 1) / block.x));
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    avgPool2x2<<<grid, block>>>(x, y, NC, H, W);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, ny));
  printTime(ms);
  printFloor(reps * (double)(nx + ny) * sizeof(float), reps * 4.0 * ny, "f32");
  cudaFree(x); cudaFree(y);
  return 0;
}
