// Level 3, an LSTM layer over a sequence in double: per step one kernel for
// the four gate pre-activations, one for the cell update, then a copy of
// h_t back to the host (the output sequence is collected on the host).
#include "common.h"

// gates[b, g] = x_t[b] . Wx[:, g] + h[b] . Wh[:, g] + bias[g], g in [0, 4H).
__global__ void lstmGates(const double* xt, const double* h, const double* Wx, const double* Wh,
                          const double* bias, double* gates, int batch, int I, int H) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int G = 4 * H;
  if (i < batch * G) {
    int b = i / G, g = i % G;
    double acc = bias[g];
    for (int k = 0; k < I; ++k) acc += xt[b * I + k] * Wx[k * G + g];
    for (int k = 0; k < H; ++k) acc += h[b * H + k] * Wh[k * G + g];
    gates[i] = acc;
  }
}

__global__ void lstmCell(const double* gates, double* c, double* h, int batch, int H) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < batch * H) {
    int b = i / H, j = i % H;
    const double* g = gates + b * 4 * H;
    double in = 1.0 / (1.0 + exp(-g[j]));
    double f = 1.0 / (1.0 + exp(-g[H + j]));
    double cand = tanh(g[2 * H + j]);
    double o = 1.0 / (1.0 + exp(-g[3 * H + j]));
    c[i] = f * c[i] + in * cand;
    h[i] = o * tanh(c[i]);
  }
}

int main(int argc, char** argv) {
  int steps = (int)argInt(argc, argv, "steps", 400, 30);
  int batch = (int)argInt(argc, argv, "batch", 16, 2);
  int I = (int)argInt(argc, argv, "input", 64, 16);
  int H = (int)argInt(argc, argv, "hidden", 256, 32);
  double* x = deviceAlloc<double>((size_t)steps * batch * I);
  double* Wx = deviceAlloc<double>((size_t)I * 4 * H);
  double* Wh = deviceAlloc<double>((size_t)H * 4 * H);
  double* bias = deviceAlloc<double>(4 * H);
  double* gates = deviceAlloc<double>((size_t)batch * 4 * H);
  double* c = deviceAlloc<double>((size_t)batch * H);
  double* h = deviceAlloc<double>((size_t)batch * H);
  fillUniform(x, (size_t)steps * batch * I, 128);
  fillUniform(Wx, (size_t)I * 4 * H, 129, -0.1, 0.1);
  fillUniform(Wh, (size_t)H * 4 * H, 130, -0.1, 0.1);
  fillUniform(bias, 4 * H, 131, -0.1, 0.1);
  CHECK(cudaMemset(c, 0, (size_t)batch * H * sizeof(double)));
  CHECK(cudaMemset(h, 0, (size_t)batch * H * sizeof(double)));
  std::vector<double> outputs((size_t)steps * batch * H);

  dim3 block(256);
  dim3 gridG((batch * 4 * H + 255) / 256);
  dim3 gridC((batch * H + 255) / 256);
  GpuTimer timer;
  timer.start();
  for (int t = 0; t < steps; ++t) {
    lstmGates<<<gridG, block>>>(x + (size_t)t * batch * I, h, Wx, Wh, bias, gates, batch, I, H);
    lstmCell<<<gridC, block>>>(gates, c, h, batch, H);
    CHECK(cudaMemcpy(outputs.data() + (size_t)t * batch * H, h, (size_t)batch * H * sizeof(double),
                     cudaMemcpyDeviceToHost));
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  double s = 0;
  for (size_t i = 0; i < outputs.size(); ++i) s += outputs[i] * (1.0 + (double)(i % 13) / 13.0);
  printChecksum(s);
  printTime(ms);
  double bytes = ((double)steps * batch * (I + H) + (double)(I + H) * 4 * H + 4.0 * H) * 8;
  double flops = (double)steps * (2.0 * batch * (I + H) * 4 * H + 20.0 * batch * H);
  printFloor(bytes, flops, "f64");
  cudaFree(x); cudaFree(Wx); cudaFree(Wh); cudaFree(bias); cudaFree(gates); cudaFree(c); cudaFree(h);
  return 0;
}
