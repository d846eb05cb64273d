// Level 1, matrix transpose in double; threads indexed over the output, so
// writes are coalesced and reads are strided.
#include "common.h"

__global__ void transposeD(const double* in, double* out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;  // column of out = row of in
  int c = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 4096, 256);
  int cols = (int)argInt(argc, argv, "cols", 8192, 256);
  int reps = (int)argInt(argc, argv, "reps", 10, 1);
  size_t n = (size_t)rows * cols;
  double* in = deviceAlloc<double>(n);
  double* out = deviceAlloc<double>(n);
  fillUniform(in, n, 61);

  dim3 block(16, 16);
  dim3 grid((rows + block.x - 1) / block.x, (cols + block.y - 1) / block.y);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    transposeD<<<grid, block>>>(in, out, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(double), 0.0, "f64");
  cudaFree(in); cudaFree(out);
  return 0;
}
