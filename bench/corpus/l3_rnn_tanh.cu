// Level 3, a vanilla tanh RNN over a long sequence with batch 1: one kernel
// per time step (one thread per hidden unit), synchronised every step.
#include "common.h"

__global__ void rnnStep(const float* W, const float* U, const float* b, const float* hPrev,
                        const float* xt, float* hNext, int H, int I) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < H) {
    float acc = b[j];
    for (int k = 0; k < H; ++k) acc += W[j * H + k] * hPrev[k];
    for (int k = 0; k < I; ++k) acc += U[j * I + k] * xt[k];
    hNext[j] = tanhf(acc);
  }
}

int main(int argc, char** argv) {
  int steps = (int)argInt(argc, argv, "steps", 2000, 100);
  int H = (int)argInt(argc, argv, "hidden", 1024, 128);
  int I = (int)argInt(argc, argv, "input", 256, 32);
  float* W = deviceAlloc<float>((size_t)H * H);
  float* U = deviceAlloc<float>((size_t)H * I);
  float* b = deviceAlloc<float>(H);
  float* x = deviceAlloc<float>((size_t)steps * I);
  float* hA = deviceAlloc<float>(H);
  float* hB = deviceAlloc<float>(H);
  fillUniform(W, (size_t)H * H, 140, -0.05, 0.05);
  fillUniform(U, (size_t)H * I, 141, -0.05, 0.05);
  fillUniform(b, H, 142, -0.1, 0.1);
  fillUniform(x, (size_t)steps * I, 143);
  CHECK(cudaMemset(hA, 0, H * sizeof(float)));

  dim3 block(128);
  dim3 grid((H + 127) / 128);
  GpuTimer timer;
  timer.start();
  for (int t = 0; t < steps; ++t) {
    rnnStep<<<grid, block>>>(W, U, b, hA, x + (size_t)t * I, hB, H, I);
    CHECK(cudaDeviceSynchronize());
    float* tmp = hA; hA = hB; hB = tmp;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(hA, H));
  printTime(ms);
  printFloor(((double)H * H + (double)H * I + H + (double)steps * I + H) * sizeof(float),
             (double)steps * (2.0 * H * (H + I) + 2.0 * H), "f32");
  cudaFree(W); cudaFree(U); cudaFree(b); cudaFree(x); cudaFree(hA); cudaFree(hB);
  return 0;
}
