// Level 1, row-wise cosine similarity of two matrices: one thread per row,
// three dot products in one loop.
#include "common.h"

__global__ void cosineRows(const float* a, const float* b, float* out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float ab = 0.0f, aa = 0.0f, bb = 0.0f;
    for (int j = 0; j < cols; ++j) {
      float x = a[r * cols + j], y = b[r * cols + j];
      ab += x * y;
      aa += x * x;
      bb += y * y;
    }
    out[r] = ab / (sqrtf(aa) * sqrtf(bb) + 1e-8f);
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 65536, 512);
  int cols = (int)argInt(argc, argv, "cols", 512, 64);
  int reps = (int)argInt(argc, argv, "reps", 6, 1);
  int n = rows * cols;
  float* a = deviceAlloc<float>(n);
  float* b = deviceAlloc<float>(n);
  float* out = deviceAlloc<float>(rows);
  fillUniform(a, n, 85);
  fillUniform(b, n, 86);

  dim3 block(256);
  dim3 grid((rows + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    cosineRows<<<grid, block>>>(a, b, out, rows, cols);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, rows));
  printTime(ms);
  printFloor(reps * (2.0 * n + rows) * sizeof(float), reps * 6.0 * n, "f32");
  cudaFree(a); cudaFree(b); cudaFree(out);
  return 0;
}
