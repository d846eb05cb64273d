// Level 1, matrix-vector product y = A x with A row-major: one thread per
// row, so a warp's loads are `cols` floats apart.
#include "common.h"

__global__ void matvec(const float* A, const float* x, float* y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float acc = 0.0f;
    for (int j = 0; j < cols; ++j) acc += A[(size_t)r * cols + j] * x[j];
    y[r] = acc;
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 16384, 512);
  int cols = (int)argInt(argc, argv, "cols", 8192, 256);
  int reps = (int)argInt(argc, argv, "reps", 3, 1);
  size_t n = (size_t)rows * cols;
  float* A = deviceAlloc<float>(n);
  float* x = deviceAlloc<float>(cols);
  float* y = deviceAlloc<float>(rows);
  fillUniform(A, n, 53);
  fillUniform(x, cols, 54);

  dim3 block(256);
  dim3 grid((rows + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    matvec<<<grid, block>>>(A, x, y, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(y, rows));
  printTime(ms);
  printFloor(reps * ((double)n + cols + rows) * sizeof(float), reps * 2.0 * n, "f32");
  cudaFree(A); cudaFree(x); cudaFree(y);
  return 0;
}
