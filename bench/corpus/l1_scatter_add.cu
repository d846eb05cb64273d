// Level 1, scatter-add (index_add): out[idx[i], :] += src[i, :] with a float
// atomicAdd per element.
#include "common.h"

__global__ void scatterAdd(const float* src, const int* idx, float* out, int n, int dim) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n * dim) {
    int row = i / dim;
    int d = i % dim;
    atomicAdd(&out[idx[row] * dim + d], src[i]);
  }
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 262144, 4096);
  int dim = (int)argInt(argc, argv, "dim", 128, 32);
  int targets = (int)argInt(argc, argv, "targets", 16384, 512);
  int reps = (int)argInt(argc, argv, "reps", 12, 1);
  float* src = deviceAlloc<float>((size_t)n * dim);
  int* idx = deviceAlloc<int>(n);
  float* out = deviceAlloc<float>((size_t)targets * dim);
  fillUniform(src, (size_t)n * dim, 83);
  fillInt(idx, n, 84, targets);

  dim3 block(256);
  dim3 grid((n * dim + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaMemset(out, 0, (size_t)targets * dim * sizeof(float)));
    scatterAdd<<<grid, block>>>(src, idx, out, n, dim);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  // Sum of absolute values: the signed total cancels and would amplify the
  // run-to-run differences of the atomic order.
  std::vector<float> h((size_t)targets * dim);
  CHECK(cudaMemcpy(h.data(), out, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double s = 0;
  for (size_t i = 0; i < h.size(); ++i) s += fabs((double)h[i]);
  printChecksumRounded(s, 5);
  printTime(ms);
  printFloor(reps * ((double)n * dim * sizeof(float) + n * sizeof(int) +
                     (double)targets * dim * sizeof(float)),
             reps * (double)n * dim, "f32");
  cudaFree(src); cudaFree(idx); cudaFree(out);
  return 0;
}
