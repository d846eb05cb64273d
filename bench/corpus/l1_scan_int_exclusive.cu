// Level 1, exclusive prefix sum of int32 (e.g. for stream compaction): every
// block's thread 0 scans its chunk sequentially, then the host scans the
// chunk totals and a second kernel adds them.
#include "common.h"

__global__ void chunkScan(const int* in, int* out, int* chunkTotals, int n, int chunk) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int begin = c * chunk;
  if (begin < n) {
    int end = min(begin + chunk, n);
    int run = 0;
    for (int i = begin; i < end; ++i) {
      out[i] = run;
      run += in[i];
    }
    chunkTotals[c] = run;
  }
}

__global__ void addChunkOffsets(int* out, const int* offsets, int n, int chunk) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += offsets[i / chunk];
}

int main(int argc, char** argv) {
  int n = (int)argInt(argc, argv, "n", 1 << 25, 1 << 16);
  int chunk = (int)argInt(argc, argv, "chunk", 256, 64);
  int reps = (int)argInt(argc, argv, "reps", 3, 1);
  int chunks = (n + chunk - 1) / chunk;
  int* in = deviceAlloc<int>(n);
  int* out = deviceAlloc<int>(n);
  int* totals = deviceAlloc<int>(chunks);
  fillInt(in, n, 74, 4);
  std::vector<int> h(chunks);

  dim3 block(128);
  dim3 gridChunks((chunks + block.x - 1) / block.x);
  dim3 gridAll((n + block.x - 1) / block.x);
  GpuTimer timer;
  timer.start();
  for (int r = 0; r < reps; ++r) {
    chunkScan<<<gridChunks, block>>>(in, out, totals, n, chunk);
    CHECK(cudaMemcpy(h.data(), totals, chunks * sizeof(int), cudaMemcpyDeviceToHost));
    int run = 0;
    for (int c = 0; c < chunks; ++c) {
      int t = h[c];
      h[c] = run;
      run += t;
    }
    CHECK(cudaMemcpy(totals, h.data(), chunks * sizeof(int), cudaMemcpyHostToDevice));
    addChunkOffsets<<<gridAll, block>>>(out, totals, n, chunk);
  }
  CHECK_LAUNCH();
  float ms = timer.stop();

  printChecksum(checksumOf(out, n));
  printTime(ms);
  printFloor(reps * 2.0 * n * sizeof(int), reps * (double)n, "i32");
  cudaFree(in); cudaFree(out); cudaFree(totals);
  return 0;
}
