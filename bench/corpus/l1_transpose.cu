// Level 1, matrix transpose out = in^T, float; reads coalesced, writes
// strided by `rows` (no shared-memory tile).
#include "common.h"

__global__ void transpose(const float* in, float* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 8192, 256);
  int cols = (int)argInt(argc, argv, "cols", 8192, 256);
  int reps = (int)argInt(argc, argv, "reps", 5, 1);
  size_t n = (size_t)rows * cols;
  float* in = deviceAlloc<float>(n);
  float* out = deviceAlloc<float>(n);
  fillUniform(in, n, 60);

  dim3 block(32, 8);
  dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    transpose<<<grid, block>>>(in, out, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), 0.0, "f32");
  cudaFree(in); cudaFree(out);
  return 0;
}
