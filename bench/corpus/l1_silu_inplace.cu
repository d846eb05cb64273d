// Level 1, activation: SiLU (x * sigmoid(x)) applied in place, float.
// The host resets the input between repetitions with a copy.
#include "common.h"

__global__ void siluInPlace(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    x[i] = v / (1.0f + expf(-v));
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 24, 1 << 16);
  int reps = (int)argInt(argc, argv, "reps", 20, 2);
  float* orig = deviceAlloc<float>(n);
  float* x = deviceAlloc<float>(n);
  fillUniform(orig, n, 8, -4.0, 4.0);

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaMemcpy(x, orig, n * sizeof(float), cudaMemcpyDeviceToDevice));
    siluInPlace<<<grid, block>>>(x, n);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(x, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 4.0 * n, "f32");
  cudaFree(orig); cudaFree(x);
  return 0;
}
