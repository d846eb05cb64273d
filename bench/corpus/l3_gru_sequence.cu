// Level 3, a GRU layer run over a long sequence: per time step two small
// matrix products (input and hidden projections) and a gate kernel, with a
// cudaDeviceSynchronize after every step: thousands of tiny launches.
#include "common.h"

// out[b, j] = sum_k in[b, k] * W[k, j] + bias[j]; W is inDim x outDim.
__global__ void project(const float* in, const float* W, const float* bias, float* out, int batch,
                        int inDim, int outDim) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < batch * outDim) {
    int b = i / outDim, j = i % outDim;
    float acc = bias[j];
    for (int k = 0; k < inDim; ++k) acc += in[b * inDim + k] * W[k * outDim + j];
    out[i] = acc;
  }
}

__device__ float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

// gx, gh: batch x 3H, gate order r, z, n (PyTorch's convention).
__global__ void gruGates(const float* gx, const float* gh, float* h, int batch, int H) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < batch * H) {
    int b = i / H, j = i % H;
    const float* x3 = gx + b * 3 * H;
    const float* h3 = gh + b * 3 * H;
    float r = sigmoidf(x3[j] + h3[j]);
    float z = sigmoidf(x3[H + j] + h3[H + j]);
    float n = tanhf(x3[2 * H + j] + r * h3[2 * H + j]);
    h[i] = (1.0f - z) * n + z * h[i];
  }
}

int main(int argc, char** argv) {
  int steps = (int)argInt(argc, argv, "steps", 1000, 50);
  int batch = (int)argInt(argc, argv, "batch", 32, 4);
  int I = (int)argInt(argc, argv, "input", 128, 32);
  int H = (int)argInt(argc, argv, "hidden", 256, 64);
  float* x = deviceAlloc<float>((size_t)steps * batch * I);
  float* Wih = deviceAlloc<float>((size_t)I * 3 * H);
  float* Whh = deviceAlloc<float>((size_t)H * 3 * H);
  float* bih = deviceAlloc<float>(3 * H);
  float* bhh = deviceAlloc<float>(3 * H);
  float* gx = deviceAlloc<float>((size_t)batch * 3 * H);
  float* gh = deviceAlloc<float>((size_t)batch * 3 * H);
  float* h = deviceAlloc<float>((size_t)batch * H);
  fillUniform(x, (size_t)steps * batch * I, 123);
  fillUniform(Wih, (size_t)I * 3 * H, 124, -0.08, 0.08);
  fillUniform(Whh, (size_t)H * 3 * H, 125, -0.08, 0.08);
  fillUniform(bih, 3 * H, 126, -0.1, 0.1);
  fillUniform(bhh, 3 * H, 127, -0.1, 0.1);
  CHECK(cudaMemset(h, 0, (size_t)batch * H * sizeof(float)));

  dim3 block(128);
  dim3 gridG((batch * 3 * H + 127) / 128);
  dim3 gridH((batch * H + 127) / 128);
  GpuTimer timer;
  timer.start();
  for (int t = 0; t < steps; ++t) {
    project<<<gridG, block>>>(x + (size_t)t * batch * I, Wih, bih, gx, batch, I, 3 * H);
    project<<<gridG, block>>>(h, Whh, bhh, gh, batch, H, 3 * H);
    gruGates<<<gridH, block>>>(gx, gh, h, batch, H);
    CHECK(cudaDeviceSynchronize());
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(h, (size_t)batch * H));
  printTime(ms);
  double bytes = ((double)steps * batch * I + (double)(I + H) * 3 * H + 6.0 * H + batch * H) * 4;
  double flops = (double)steps * (2.0 * batch * (I + H) * 3 * H + 12.0 * batch * H);
  printFloor(bytes, flops, "f32");
  cudaFree(x); cudaFree(Wih); cudaFree(Whh); cudaFree(bih); cudaFree(bhh);
  cudaFree(gx); cudaFree(gh); cudaFree(h);
  return 0;
}
