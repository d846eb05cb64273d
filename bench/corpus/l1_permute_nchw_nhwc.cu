// Level 1, layout change NCHW -> NHWC for int32 tensors; one thread per output
// element, all four coordinates recovered with divisions.
#include "common.h"

__global__ void nchwToNhwc(const int* in, int* out, int N, int C, int H, int W) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N * C * H * W) {
    int c = i % C;
    int w = (i / C) % W;
    int h = (i / (C * W)) % H;
    int b = i / (C * W * H);
    out[i] = in[((b * C + c) * H + h) * W + w];
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "batch", 64, 2);
  int C = (int)argInt(argc, argv, "channels", 64, 8);
  int H = (int)argInt(argc, argv, "height", 64, 16);
  int W = (int)argInt(argc, argv, "width", 64, 16);
  int reps = (int)argInt(argc, argv, "reps", 20, 1);
  int n = N * C * H * W;
  int* in = deviceAlloc<int>(n);
  int* out = deviceAlloc<int>(n);
  fillInt(in, n, 62, 1 << 20);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    nchwToNhwc<<<grid, block>>>(in, out, N, C, H, W);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(int), 0.0, "i32");
  cudaFree(in); cudaFree(out);
  return 0;
}
