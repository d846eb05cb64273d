// Level 1, reduction: argmax of every row of a row-major matrix, one thread
// per row walking its row (neighbouring threads read addresses `cols` apart).
#include "common.h"

__global__ void argmaxRows(const float* x, int* idx, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float best = x[(size_t)r * cols];
    int bestJ = 0;
    for (int j = 1; j < cols; ++j) {
      float v = x[(size_t)r * cols + j];
      if (v > best) {
        best = v;
        bestJ = j;
      }
    }
    idx[r] = bestJ;
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 65536, 1024);
  int cols = (int)argInt(argc, argv, "cols", 1024, 128);
  int reps = (int)argInt(argc, argv, "reps", 6, 1);
  size_t n = (size_t)rows * cols;
  float* x = deviceAlloc<float>(n);
  int* idx = deviceAlloc<int>(rows);
  fillUniform(x, n, 16);

  dim3 block(128);
  dim3 grid((rows + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    argmaxRows<<<grid, block>>>(x, idx, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(idx, rows));
  printTime(ms);
  printFloor(reps * ((double)n * sizeof(float) + rows * sizeof(int)), reps * (double)n, "f32");
  cudaFree(x); cudaFree(idx);
  return 0;
}
