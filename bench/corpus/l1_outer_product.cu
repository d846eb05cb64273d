// Level 1, rank-1 update A += alpha * x y^T, a 2D launch with x as the fast
// index on rows (threadIdx.x walks down a column: strided stores).
#include "common.h"

__global__ void ger(float* A, const float* x, const float* y, int rows, int cols, float alpha) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  int c = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) A[(size_t)r * cols + c] += alpha * x[r] * y[c];
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 8192, 256);
  int cols = (int)argInt(argc, argv, "cols", 8192, 256);
  int reps = (int)argInt(argc, argv, "reps", 5, 1);
  size_t n = (size_t)rows * cols;
  float* A = deviceAlloc<float>(n);
  float* x = deviceAlloc<float>(rows);
  float* y = deviceAlloc<float>(cols);
  fillUniform(A, n, 57);
  fillUniform(x, rows, 58);
  fillUniform(y, cols, 59);

  dim3 block(32, 8);
  dim3 grid((rows + block.x - 1) / block.x, (cols + block.y - 1) / block.y);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    ger<<<grid, block>>>(A, x, y, rows, cols, 0.01f);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(A, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(float), reps * 3.0 * n, "f32");
  cudaFree(A); cudaFree(x); cudaFree(y);
  return 0;
}
