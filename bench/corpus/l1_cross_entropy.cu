// Level 1, loss: cross entropy of logits against integer labels; one thread
// per row computes log-sum-exp, then the host averages the per-row losses.
#include "common.h"

__global__ void crossEntropyRows(const float* logits, const int* labels, float* loss, int rows,
                                 int classes) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    const float* z = logits + (size_t)r * classes;
    float m = z[0];
    for (int c = 1; c < classes; ++c) m = fmaxf(m, z[c]);
    float s = 0.0f;
    for (int c = 0; c < classes; ++c) s += expf(z[c] - m);
    loss[r] = logf(s) + m - z[labels[r]];
  }
}

int main(int argc, char** argv) {
  int rows = (int)argInt(argc, argv, "rows", 32768, 512);
  int classes = (int)argInt(argc, argv, "classes", 1000, 100);
  int reps = (int)argInt(argc, argv, "reps", 6, 1);
  size_t n = (size_t)rows * classes;
  float* logits = deviceAlloc<float>(n);
  int* labels = deviceAlloc<int>(rows);
  float* loss = deviceAlloc<float>(rows);
  fillUniform(logits, n, 87, -5.0, 5.0);
  fillInt(labels, rows, 88, classes);
  std::vector<float> h(rows);

  dim3 block(128);
  dim3 grid((rows + block.x - 1) / block.x);
  double mean = 0;
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    crossEntropyRows<<<grid, block>>>(logits, labels, loss, rows, classes);
    CHECK(cudaMemcpy(h.data(), loss, rows * sizeof(float), cudaMemcpyDeviceToHost));
    mean = 0;
    for (int i = 0; i < rows; ++i) mean += h[i];
    mean /= rows;
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(mean);
  printTime(ms);
  printFloor(reps * ((double)n * sizeof(float) + rows * 8.0), reps * 3.0 * n, "f32");
  cudaFree(logits); cudaFree(labels); cudaFree(loss);
  return 0;
}
