// Level 2, conv 3x3 (valid) -> ReLU -> 2x2 max pool, as three kernels.
#include "common.h"

__global__ void convValid(const float* x, const float* w, const float* bias, float* y, int Cin,
                          int Cout, int H, int W) {
  int Ho = H - 2, Wo = W - 2;
  int ox = blockIdx.x * blockDim.x + threadIdx.x;
  int oy = blockIdx.y * blockDim.y + threadIdx.y;
  int bco = blockIdx.z;
  int co = bco % Cout, b = bco / Cout;
  if (ox < Wo && oy < Ho) {
    float acc = bias[co];
    for (int ci = 0; ci < Cin; ++ci)
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx)
          acc += x[((b * Cin + ci) * H + oy + ky) * W + ox + kx] *
                 w[((co * Cin + ci) * 3 + ky) * 3 + kx];
    y[((b * Cout + co) * Ho + oy) * Wo + ox] = acc;
  }
}

__global__ void relu(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && y[i] < 0.0f) y[i] = 0.0f;
}

__global__ void maxPool2(const float* x, float* y, int planes, int H, int W) {
  int Ho = H / 2, Wo = W / 2;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < planes * Ho * Wo) {
    int ox = i % Wo, oy = (i / Wo) % Ho, p = i / (Wo * Ho);
    const float* q = x + (size_t)p * H * W + 2 * oy * W + 2 * ox;
    y[i] = fmaxf(fmaxf(q[0], q[1]), fmaxf(q[W], q[W + 1]));
  }
}

int main(int argc, char** argv) {
  int B = (int)argInt(argc, argv, "batch", 16, 1);
  int Cin = (int)argInt(argc, argv, "cin", 16, 3);
  int Cout = (int)argInt(argc, argv, "cout", 64, 4);
  int H = (int)argInt(argc, argv, "height", 130, 18);
  int W = (int)argInt(argc, argv, "width", 130, 18);
  int Ho = H - 2, Wo = W - 2;
  int nx = B * Cin * H * W, nc = B * Cout * Ho * Wo, np = B * Cout * (Ho / 2) * (Wo / 2);
  int nw = Cout * Cin * 9;
  float* x = deviceAlloc<float>(nx);
  float* w = deviceAlloc<float>(nw);
  float* bias = deviceAlloc<float>(Cout);
  float* c = deviceAlloc<float>(nc);
  float* p = deviceAlloc<float>(np);
  fillUniform(x, nx, 98);
  fillUniform(w, nw, 99, -0.15, 0.15);
  fillUniform(bias, Cout, 100, -0.1, 0.1);

  dim3 blockC(16, 16);
  dim3 gridC((Wo + 15) / 16, (Ho + 15) / 16, B * Cout);
  dim3 block(256);
  GpuTimer timer;
  timer.start();
  convValid<<<gridC, blockC>>>(x, w, bias, c, Cin, Cout, H, W);
  relu<<<(nc + 255) / 256, block>>>(c, nc);
  maxPool2<<<(np + 255) / 256, block>>>(c, p, B * Cout, Ho, Wo);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(p, np));
  printTime(ms);
  printFloor(((double)nx + nw + Cout + np) * sizeof(float), 2.0 * nc * Cin * 9 + 2.0 * nc, "f32");
  cudaFree(x); cudaFree(w); cudaFree(bias); cudaFree(c); cudaFree(p);
  return 0;
}
