// HPC, Monte Carlo estimate of pi with a counter-based hash generator: each
// thread draws `samples` points and adds its hits to a global counter.
#include "common.h"

__global__ void countHits(unsigned long long* hits, int threads, int samples) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < threads) {
    unsigned int local = 0;
    for (int s = 0; s < samples; ++s) {
      unsigned long long id = (unsigned long long)t * samples + s;
      float x = (float)hashUniform(id, 11u);
      float y = (float)hashUniform(id, 12u);
      if (x * x + y * y <= 1.0f) local++;
    }
    atomicAdd(hits, (unsigned long long)local);
  }
}

int main(int argc, char** argv) {
  int threads = (int)argInt(argc, argv, "threads", 1 << 20, 1 << 12);
  int samples = (int)argInt(argc, argv, "samples", 1024, 16);
  unsigned long long* hits = deviceAlloc<unsigned long long>(1);
  CHECK(cudaMemset(hits, 0, sizeof(unsigned long long)));

  dim3 block(256);
  dim3 grid((threads + 255) / 256);
  GpuTimer timer;
  timer.start();
  countHits<<<grid, block>>>(hits, threads, samples);
  CHECK_LAUNCH();
  float ms = timer.stop();

  unsigned long long h = 0;
  CHECK(cudaMemcpy(&h, hits, sizeof(h), cudaMemcpyDeviceToHost));
  printChecksum(4.0 * (double)h / ((double)threads * samples));
  printTime(ms);
  printFloor(8.0, (double)threads * samples * 5.0, "f32");
  cudaFree(hits);
  return 0;
}
