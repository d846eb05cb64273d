// Level 1, batch norm statistics in training mode on NCHW: one thread per
// channel loops over the whole batch and image (few threads, long loops),
// then a second kernel normalises.
#include "common.h"

__global__ void channelStats(const float* x, float* mean, float* invStd, int N, int C, int HW,
                             float eps) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < C) {
    double s = 0.0, sq = 0.0;
    for (int b = 0; b < N; ++b)
      for (int k = 0; k < HW; ++k) {
        float v = x[((size_t)b * C + c) * HW + k];
        s += v;
        sq += (double)v * v;
      }
    double cnt = (double)N * HW;
    double m = s / cnt;
    mean[c] = (float)m;
    invStd[c] = (float)(1.0 / sqrt(sq / cnt - m * m + eps));
  }
}

__global__ void normalize(const float* x, float* y, const float* mean, const float* invStd, int C,
                          int HW, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int c = (i / HW) % C;
    y[i] = (x[i] - mean[c]) * invStd[c];
  }
}

int main(int argc, char** argv) {
  int N = (int)argInt(argc, argv, "batch", 32, 2);
  int C = (int)argInt(argc, argv, "channels", 256, 16);
  int H = (int)argInt(argc, argv, "height", 32, 8);
  int W = (int)argInt(argc, argv, "width", 32, 8);
  int reps = (int)argInt(argc, argv, "reps", 3, 1);
  int HW = H * W;
  int n = N * C * HW;
  float* x = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  float* mean = deviceAlloc<float>(C);
  float* invStd = deviceAlloc<float>(C);
  fillUniform(x, n, 37, -1.0, 2.0);

  dim3 block(64);
  dim3 gridC((C + block.x - 1) / block.x);
  dim3 blockAll(256);
  dim3 gridAll((n + blockAll.x - 1) / blockAll.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    channelStats<<<gridC, block>>>(x, mean, invStd, N, C, HW, 1e-5f);
    normalize<<<gridAll, blockAll>>>(x, y, mean, invStd, C, HW, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 6.0 * n, "f32");
  cudaFree(x); cudaFree(y); cudaFree(mean); cudaFree(invStd);
  return 0;
}
