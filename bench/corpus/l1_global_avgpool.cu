// Level 1, global average pooling NCHW -> NC: one thread per (n, c) plane.
#include "common.h"

__global__ void globalAvgPool(const float* x, float* y, int NC, int HW) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < NC) {
    float s = 0.0f;
    for (int k = 0; k < HW; ++k) s += x[(size_t)i * HW + k];
    y[i] = s / HW;
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "batch", 64, 2);
  int C = (int)argInt(argc, argv, "channels", 512, 16);
  int HW = (int)argInt(argc, argv, "hw", 1024, 64);
  int reps = (int)argInt(argc, argv, "reps", 10, 1);
  int NC = N * C;
  size_t nx = (size_t)NC * HW;
  float* x = deviceAlloc<float>(nx);
  float* y = deviceAlloc<float>(NC);
  fillUniform(x, nx, 72);

  dim3 block(128);
  dim3 grid((NC + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    globalAvgPool<<<grid, block>>>(x, y, NC, HW);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, NC));
  printTime(ms);
  printFloor(reps * (double)(nx + NC) * sizeof(float), reps * (double)nx, "f32");
  cudaFree(x); cudaFree(y);
  return 0;
}
