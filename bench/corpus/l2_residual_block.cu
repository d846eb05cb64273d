// Level 2, residual block on a feature matrix: y = relu(x + W2 relu(W1 x)),
// per token, as GEMM, ReLU, GEMM, add, ReLU kernels.
#include "common.h"

__global__ void linear(const float* in, const float* W, float* out, int tokens, int inDim,
                       int outDim) {
  int t = blockIdx.y * blockDim.y + threadIdx.y;
  int o = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < tokens && o < outDim) {
    float acc = 0.0f;
    for (int k = 0; k < inDim; ++k) acc += in[t * inDim + k] * W[k * outDim + o];
    out[t * outDim + o] = acc;
  }
}

__global__ void relu(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = fmaxf(x[i], 0.0f);
}

__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  int tokens = (int)argInt(argc, argv, "tokens", 8192, 256);
  int dim = (int)argInt(argc, argv, "dim", 512, 64);
  int hidden = (int)argInt(argc, argv, "hidden", 1024, 128);
  float* x = deviceAlloc<float>((size_t)tokens * dim);
  float* W1 = deviceAlloc<float>((size_t)dim * hidden);
  float* W2 = deviceAlloc<float>((size_t)hidden * dim);
  float* h = deviceAlloc<float>((size_t)tokens * hidden);
  float* f = deviceAlloc<float>((size_t)tokens * dim);
  float* y = deviceAlloc<float>((size_t)tokens * dim);
  fillUniform(x, (size_t)tokens * dim, 101);
  fillUniform(W1, (size_t)dim * hidden, 102, -0.05, 0.05);
  fillUniform(W2, (size_t)hidden * dim, 103, -0.05, 0.05);

  dim3 block2(32, 8);
  dim3 gridH((hidden + 31) / 32, (tokens + 7) / 8);
  dim3 gridD((dim + 31) / 32, (tokens + 7) / 8);
  dim3 block(256);
  int nh = tokens * hidden, nd = tokens * dim;
  GpuTimer timer;
  timer.start();
  linear<<<gridH, block2>>>(x, W1, h, tokens, dim, hidden);
  relu<<<(nh + 255) / 256, block>>>(h, nh);
  linear<<<gridD, block2>>>(h, W2, f, tokens, hidden, dim);
  add<<<(nd + 255) / 256, block>>>(x, f, y, nd);
  relu<<<(nd + 255) / 256, block>>>(y, nd);
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, nd));
  printTime(ms);
  printFloor((2.0 * nd + 2.0 * dim * hidden) * sizeof(float), 4.0 * tokens * dim * hidden,
             "f32");
  cudaFree(x); cudaFree(W1); cudaFree(W2); cudaFree(h); cudaFree(f); cudaFree(y);
  return 0;
}
