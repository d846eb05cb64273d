// Level 1, scaled transpose with a per-column bias, float: out = alpha * in^T
// + bias, as one thread per element with an early return; reads coalesced,
// writes strided by `rows` (no shared-memory tile).
#include "common.h"

__global__ void transposeScale(const float* in, const float* bias, float* out, float alpha,
                               int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  float v = alpha * in[r * cols + c];
  out[c * rows + r] = v + bias[c];
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 6144, 256);
  int cols = (int)argInt(argc, argv, "cols", 10240, 256);
  int reps = (int)argInt(argc, argv, "reps", 5, 1);
  size_t n = (size_t)rows * cols;
  float* in = deviceAlloc<float>(n);
  float* bias = deviceAlloc<float>(cols);
  float* out = deviceAlloc<float>(n);
  fillUniform(in, n, 62);
  fillUniform(bias, cols, 63);

  dim3 block(16, 16);
  dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    transposeScale<<<grid, block>>>(in, bias, out, 0.5f, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, n));
  printTime(ms);
  printFloor(reps * (2.0 * n + cols) * sizeof(float), reps * 2.0 * n, "f32");
  cudaFree(in); cudaFree(bias); cudaFree(out);
  return 0;
}
