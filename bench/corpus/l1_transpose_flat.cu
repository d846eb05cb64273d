// Level 1, matrix transpose out = in^T, float, written with a 1-D thread
// mapping: one thread per element, row = idx / cols, col = idx % cols; reads
// coalesced, writes strided by `rows` (no shared-memory tile). The shape is
// not a multiple of 32 in either dimension.
#include "common.h"

__global__ void transposeFlat(const float* in, float* out, int rows, int cols) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int r = idx / cols, c = idx % cols;
  if (idx < rows * cols) out[c * rows + r] = in[r * cols + c];
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 7000, 256);
  int cols = (int)argInt(argc, argv, "cols", 9000, 256);
  int reps = (int)argInt(argc, argv, "reps", 5, 1);
  size_t n = (size_t)rows * cols;
  float* in = deviceAlloc<float>(n);
  float* out = deviceAlloc<float>(n);
  fillUniform(in, n, 61);

  const int threads = 256;
  int blocks = (int)((n + threads - 1) / threads);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    transposeFlat<<<blocks, threads>>>(in, out, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), 0.0, "f32");
  cudaFree(in); cudaFree(out);
  return 0;
}
