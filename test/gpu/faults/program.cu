// The program the test-only faults (passes/Break.h) are proposed on through
// --tune (test/gpu/tune-faults.sh): an in-place scale whose stores move with
// threadIdx.x (off-by-one, partial-write, skip-work) and a float-atomic sum
// (race, skip-work). It prints checksums of both results.
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                                 \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

__global__ void fill(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 1.0f + (i % 97) * 0.01f;
}

__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = x[i] * s;
}

__global__ void sum_squares(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i] * x[i]);
}

int main() {
  const int n = 1 << 22;
  float *x, *out;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&out, sizeof(float)));
  CHECK(cudaMemset(out, 0, sizeof(float)));
  fill<<<(n + 255) / 256, 256>>>(x, n);
  scale<<<(n + 255) / 256, 256>>>(x, 0.5f, n);
  sum_squares<<<(n + 255) / 256, 256>>>(x, out, n);
  CHECK(cudaGetLastError());
  float *h = (float *)std::malloc(n * sizeof(float));
  float total = 0;
  CHECK(cudaMemcpy(h, x, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&total, out, sizeof(float), cudaMemcpyDeviceToHost));
  double check = 0;
  for (int i = 0; i < n; ++i)
    check += h[i] * (1 + i % 7);
  std::printf("scaled checksum=%.9e\n", check);
  std::printf("sum of squares=%.7e\n", total);
  std::free(h);
  return 0;
}
