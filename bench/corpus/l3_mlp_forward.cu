// Level 3, MLP inference over several mini-batches: a host loop over
// batches and layers, each layer a naive GEMM plus a bias+ReLU kernel, with a
// cudaDeviceSynchronize after every layer.
#include "common.h"

__global__ void layerGemm(const float* in, const float* W, float* out, int batch, int inDim,
                          int outDim) {
  int b = blockIdx.y * blockDim.y + threadIdx.y;
  int o = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch && o < outDim) {
    float acc = 0.0f;
    for (int k = 0; k < inDim; ++k) acc += in[b * inDim + k] * W[k * outDim + o];
    out[b * outDim + o] = acc;
  }
}

__global__ void biasRelu(float* x, const float* bias, int batch, int dim, int applyRelu) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < batch * dim) {
    float v = x[i] + bias[i % dim];
    x[i] = (applyRelu && v < 0.0f) ? 0.0f : v;
  }
}

int main(int argc, char** argv) {
  int batches = (int)argInt(argc, argv, "batches", 8, 2);
  int batch = (int)argInt(argc, argv, "batch", 256, 32);
  int width = (int)argInt(argc, argv, "width", 1024, 128);
  int layers = (int)argInt(argc, argv, "layers", 4, 2);
  int outDim = 16;
  std::vector<int> dims(layers + 1, width);
  dims[layers] = outDim;

  std::vector<float*> W(layers), bias(layers);
  double paramCount = 0;
  for (int l = 0; l < layers; ++l) {
    W[l] = deviceAlloc<float>((size_t)dims[l] * dims[l + 1]);
    bias[l] = deviceAlloc<float>(dims[l + 1]);
    fillUniform(W[l], (size_t)dims[l] * dims[l + 1], 200 + l, -0.06, 0.06);
    fillUniform(bias[l], dims[l + 1], 300 + l, -0.1, 0.1);
    paramCount += (double)dims[l] * dims[l + 1] + dims[l + 1];
  }
  float* inputs = deviceAlloc<float>((size_t)batches * batch * width);
  float* outputs = deviceAlloc<float>((size_t)batches * batch * outDim);
  float* bufA = deviceAlloc<float>((size_t)batch * width);
  float* bufB = deviceAlloc<float>((size_t)batch * width);
  fillUniform(inputs, (size_t)batches * batch * width, 122);

  double flops = 0;
  GpuTimer timer;
  timer.start();
  for (int s = 0; s < batches; ++s) {
    const float* cur = inputs + (size_t)s * batch * width;
    for (int l = 0; l < layers; ++l) {
      float* out = (l == layers - 1) ? outputs + (size_t)s * batch * outDim
                                     : ((l % 2 == 0) ? bufA : bufB);
      dim3 block(16, 16);
      dim3 grid((dims[l + 1] + 15) / 16, (batch + 15) / 16);
      layerGemm<<<grid, block>>>(cur, W[l], out, batch, dims[l], dims[l + 1]);
      biasRelu<<<(batch * dims[l + 1] + 255) / 256, 256>>>(out, bias[l], batch, dims[l + 1],
                                                           l < layers - 1);
      CHECK(cudaDeviceSynchronize());
      flops += 2.0 * batch * dims[l] * dims[l + 1] + 2.0 * batch * dims[l + 1];
      cur = out;
    }
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(outputs, (size_t)batches * batch * outDim));
  printTime(ms);
  printFloor(((double)batches * batch * (width + outDim) + paramCount) * sizeof(float), flops,
             "f32");
  for (int l = 0; l < layers; ++l) { cudaFree(W[l]); cudaFree(bias[l]); }
  cudaFree(inputs); cudaFree(outputs); cudaFree(bufA); cudaFree(bufB);
  return 0;
}
