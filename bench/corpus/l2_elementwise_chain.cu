// Level 2, a chain of elementwise ops y = tanh((a + b) * c - 0.5) written as
// four kernels with temporaries (what eager framework code turns into).
#include "common.h"

__global__ void addK(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
__global__ void mulK(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * b[i];
}
__global__ void subScalarK(const float* a, float s, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] - s;
}
__global__ void tanhK(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tanhf(a[i]);
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 25, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 5, 1);
  float* a = deviceAlloc<float>(n);
  float* b = deviceAlloc<float>(n);
  float* c = deviceAlloc<float>(n);
  float* t1 = deviceAlloc<float>(n);
  float* t2 = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  fillUniform(a, n, 107);
  fillUniform(b, n, 108);
  fillUniform(c, n, 109);

  dim3 block(256);
  dim3 grid((n + 255) / 256);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    addK<<<grid, block>>>(a, b, t1, n);
    mulK<<<grid, block>>>(t1, c, t2, n);
    subScalarK<<<grid, block>>>(t2, 0.5f, t1, n);
    tanhK<<<grid, block>>>(t1, y, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  printFloor(reps * 4.0 * n * sizeof(float), reps * 4.0 * n, "f32");
  cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(t1); cudaFree(t2); cudaFree(y);
  return 0;
}
