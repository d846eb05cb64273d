// A program whose GPU time drifts (test/gpu/drift-check.sh): every run
// reads a run counter from the file its first argument names, writes it
// back one higher, and repeats its timed loop 1.03^runs times as often, so
// that over the interleaved rounds of a reproducibility check the
// original's last third of rounds is about 3x slower than its first third.
// With a second argument `fixed` the counter still advances but the loop
// count does not: the same program without drift.
//
// The plan the test checks is drop-sync of the loop's synchronization
// (@sync#0): a real gain (the launch latency after each synchronization,
// next to a kernel of some 20 us on the H200), but far smaller than the drift.
// It prints a checksum (the same in every run) and gpu_ms= (the loop's time).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                                 \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

__global__ void init(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 1.0f + (i % 101) * 0.25f;
}

// The same result every time it runs: the loop count changes the time only.
__global__ void step(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = sqrtf(x[i]) * 0.5f + 1.0f;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s COUNTER-FILE [fixed]\n", argv[0]);
    return 2;
  }
  long runs = 0;
  if (FILE *f = std::fopen(argv[1], "r")) {
    if (std::fscanf(f, "%ld", &runs) != 1)
      runs = 0;
    std::fclose(f);
  }
  FILE *f = std::fopen(argv[1], "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", argv[1]);
    return 1;
  }
  std::fprintf(f, "%ld\n", runs + 1);
  std::fclose(f);
  bool fixed = argc > 2 && std::strcmp(argv[2], "fixed") == 0;
  int reps = int(std::lround(30 * std::pow(1.03, fixed ? 0 : std::fmin(double(runs), 120.0))));

  const int n = 1 << 23;
  float *x, *y;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  init<<<(n + 255) / 256, 256>>>(x, n);
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, 0));
  for (int r = 0; r < reps; ++r) {
    step<<<(n + 255) / 256, 256>>>(x, y, n);
    CHECK(cudaDeviceSynchronize());
  }
  CHECK(cudaEventRecord(stop, 0));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  float *h = (float *)std::malloc(n * sizeof(float));
  CHECK(cudaMemcpy(h, y, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < n; ++i)
    sum += h[i] * (1 + i % 5);
  std::printf("checksum=%.9e\n", sum);
  std::printf("gpu_ms=%.4f\n", ms);
  std::free(h);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return 0;
}
