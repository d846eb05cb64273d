// Level 1, direct 2D convolution NCHW with a 3x3 filter, stride 1, zero
// padding 1; one thread per output pixel of one output channel.
#include "common.h"

__global__ void conv2d3x3(const float* x, const float* w, const float* bias, float* y, int B,
                          int Cin, int Cout, int H, int W) {
  int ox = blockIdx.x * blockDim.x + threadIdx.x;
  int oy = blockIdx.y * blockDim.y + threadIdx.y;
  int bc = blockIdx.z;  // b * Cout + co
  int co = bc % Cout;
  int b = bc / Cout;
  if (ox < W && oy < H) {
    float acc = bias[co];
    for (int ci = 0; ci < Cin; ++ci)
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) {
          int iy = oy + ky - 1, ix = ox + kx - 1;
          if (iy >= 0 && iy < H && ix >= 0 && ix < W)
            acc += x[((b * Cin + ci) * H + iy) * W + ix] * w[((co * Cin + ci) * 3 + ky) * 3 + kx];
        }
    y[((b * Cout + co) * H + oy) * W + ox] = acc;
  }
}

int main(int argc, char** argv) {
  int B = (int)argInt(argc, argv, "batch", 8, 1);
  int Cin = (int)argInt(argc, argv, "cin", 64, 4);
  int Cout = (int)argInt(argc, argv, "cout", 64, 4);
  int H = (int)argInt(argc, argv, "height", 128, 32);
  int W = (int)argInt(argc, argv, "width", 128, 32);
  size_t nx = (size_t)B * Cin * H * W, nw = (size_t)Cout * Cin * 9, ny = (size_t)B * Cout * H * W;
  float* x = deviceAlloc<float>(nx);
  float* w = deviceAlloc<float>(nw);
  float* bias = deviceAlloc<float>(Cout);
  float* y = deviceAlloc<float>(ny);
  fillUniform(x, nx, 65);
  fillUniform(w, nw, 66, -0.1, 0.1);
  fillUniform(bias, Cout, 67, -0.1, 0.1);

  dim3 block(16, 16);
  dim3 grid((W + 15) / 16, (H + 15) / 16, B * Cout);
  GpuTimer timer;
  timer.start();
  conv2d3x3<<<grid, block>>>(x, w, bias, y, B, Cin, Cout, H, W);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, ny));
  printTime(ms);
  printFloor((double)(nx + nw + Cout + ny) * sizeof(float), 2.0 * ny * Cin * 9, "f32");
  cudaFree(x); cudaFree(w); cudaFree(bias); cudaFree(y);
  return 0;
}
