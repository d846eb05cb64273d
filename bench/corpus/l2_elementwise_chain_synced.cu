// Level 2, the chain y = relu((a + b) * s - c)^2 written as four kernels
// with a cudaDeviceSynchronize after every launch (what code ported from a
// debugging session looks like): fusion is refused while the syncs stand,
// so drop-sync is the gatekeeper of the expert's fused version.
#include "common.h"

__global__ void addK(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
__global__ void scaleSubK(const float* a, float s, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * s - c[i];
}
__global__ void reluK(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] > 0.0f ? a[i] : 0.0f;
}
__global__ void squareK(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * a[i];
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 24, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 10, 2);
  float* a = deviceAlloc<float>(n);
  float* b = deviceAlloc<float>(n);
  float* c = deviceAlloc<float>(n);
  float* t1 = deviceAlloc<float>(n);
  float* t2 = deviceAlloc<float>(n);
  float* t3 = deviceAlloc<float>(n);
  float* y = deviceAlloc<float>(n);
  fillUniform(a, n, 301);
  fillUniform(b, n, 302);
  fillUniform(c, n, 303, -0.5, 0.5);

  dim3 block(256);
  dim3 grid((n + 255) / 256);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    addK<<<grid, block>>>(a, b, t1, n);
    CHECK(cudaDeviceSynchronize());
    scaleSubK<<<grid, block>>>(t1, 1.5f, c, t2, n);
    CHECK(cudaDeviceSynchronize());
    reluK<<<grid, block>>>(t2, t3, n);
    CHECK(cudaDeviceSynchronize());
    squareK<<<grid, block>>>(t3, y, n);
    CHECK(cudaDeviceSynchronize());
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, n));
  printTime(ms);
  // The fused ideal reads a, b and c and writes y once per repetition;
  // flops: add, multiply and subtract, the comparison, the square.
  printFloor(reps * 4.0 * n * sizeof(float), reps * 5.0 * n, "f32");
  cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(t1); cudaFree(t2); cudaFree(t3); cudaFree(y);
  return 0;
}
