// Level 1, gather: embedding lookup out[t, :] = table[ids[t], :]; one thread
// per output element, row index loaded by every thread of the row.
#include "common.h"

__global__ void embeddingLookup(const float* table, const int* ids, float* out, int tokens,
                                int dim) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < tokens * dim) {
    int t = i / dim;
    int d = i % dim;
    out[i] = table[(size_t)ids[t] * dim + d];
  }
}

int main(int argc, char** argv) {
  int vocab = (int)argInt(argc, argv, "vocab", 100000, 1000);
  int dim = (int)argInt(argc, argv, "dim", 512, 64);
  int tokens = (int)argInt(argc, argv, "tokens", 65536, 512);
  int reps = (int)argInt(argc, argv, "reps", 10, 1);
  float* table = deviceAlloc<float>((size_t)vocab * dim);
  int* ids = deviceAlloc<int>(tokens);
  float* out = deviceAlloc<float>((size_t)tokens * dim);
  fillUniform(table, (size_t)vocab * dim, 79);
  fillInt(ids, tokens, 80, vocab);

  dim3 block(256);
  dim3 grid((tokens * dim + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    embeddingLookup<<<grid, block>>>(table, ids, out, tokens, dim);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, (size_t)tokens * dim));
  printTime(ms);
  printFloor(reps * (2.0 * tokens * dim * sizeof(float) + tokens * sizeof(int)), 0.0, "f32");
  cudaFree(table); cudaFree(ids); cudaFree(out);
  return 0;
}
