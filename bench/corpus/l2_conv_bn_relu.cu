// Level 2, conv 3x3 -> batch norm (inference) -> ReLU on NCHW, three kernels
// and two full-size temporaries.
#include "common.h"

__global__ void conv3x3(const float* x, const float* w, float* y, int B, int Cin, int Cout, int H,
                        int W) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < B * Cout * H * W) {
    int ox = i % W;
    int oy = (i / W) % H;
    int co = (i / (W * H)) % Cout;
    int b = i / (W * H * Cout);
    float acc = 0.0f;
    for (int ci = 0; ci < Cin; ++ci)
      for (int ky = -1; ky <= 1; ++ky)
        for (int kx = -1; kx <= 1; ++kx) {
          int iy = oy + ky, ix = ox + kx;
          if (iy >= 0 && iy < H && ix >= 0 && ix < W)
            acc += x[((b * Cin + ci) * H + iy) * W + ix] *
                   w[((co * Cin + ci) * 3 + ky + 1) * 3 + kx + 1];
        }
    y[i] = acc;
  }
}

__global__ void batchNorm(const float* x, float* y, const float* scale, const float* shift, int C,
                          int HW, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int c = (i / HW) % C;
    y[i] = x[i] * scale[c] + shift[c];
  }
}

__global__ void relu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

int main(int argc, char** argv) {
  int B = (int)argInt(argc, argv, "batch", 16, 1);
  int Cin = (int)argInt(argc, argv, "cin", 32, 4);
  int Cout = (int)argInt(argc, argv, "cout", 64, 4);
  int H = (int)argInt(argc, argv, "height", 128, 16);
  int W = (int)argInt(argc, argv, "width", 128, 16);
  int nx = B * Cin * H * W, ny = B * Cout * H * W, nw = Cout * Cin * 9;
  float* x = deviceAlloc<float>(nx);
  float* w = deviceAlloc<float>(nw);
  float* scale = deviceAlloc<float>(Cout);
  float* shift = deviceAlloc<float>(Cout);
  float* t1 = deviceAlloc<float>(ny);
  float* t2 = deviceAlloc<float>(ny);
  float* y = deviceAlloc<float>(ny);
  fillUniform(x, nx, 94);
  fillUniform(w, nw, 95, -0.1, 0.1);
  fillUniform(scale, Cout, 96, 0.5, 1.5);
  fillUniform(shift, Cout, 97, -0.2, 0.2);

  dim3 block(256);
  dim3 grid((ny + 255) / 256);
  GpuTimer timer;
  timer.start();
  conv3x3<<<grid, block>>>(x, w, t1, B, Cin, Cout, H, W);
  batchNorm<<<grid, block>>>(t1, t2, scale, shift, Cout, H * W, ny);
  relu<<<grid, block>>>(t2, y, ny);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, ny));
  printTime(ms);
  printFloor(((double)nx + nw + 2.0 * Cout + ny) * sizeof(float),
             2.0 * ny * Cin * 9 + 3.0 * ny, "f32");
  cudaFree(x); cudaFree(w); cudaFree(scale); cudaFree(shift);
  cudaFree(t1); cudaFree(t2); cudaFree(y);
  return 0;
}
