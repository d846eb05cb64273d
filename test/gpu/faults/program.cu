// The program the test-only faults (passes/Break.h) are proposed on through
// --tune (test/gpu/tune-faults.sh): an in-place scale whose stores move with
// threadIdx.x (off-by-one, partial-write, skip-work) and a float-atomic sum
// (race, skip-work). It prints checksums of both results.
//
// Its reads must not wait for a non-blocking stream, or break(kind=side-stream)
// is no fault of it (docs/passes/break.md). The results are copied by
// cudaMemcpyAsync on the legacy stream (cudaStreamLegacy: stream 0 whatever
// --default-stream says) into pinned memory and joined by
// cudaStreamSynchronize on it; neither waits for a cudaStreamNonBlocking
// stream, as the pageable cudaMemcpy of before did on the H200. Every kernel
// is loaded at context creation (CUDA_MODULE_LOADING=EAGER): the first launch
// of a lazily loaded kernel may synchronize the context, which would join the
// side stream too. Pinned memory is allocated before the first launch and
// freed after the last read, since cudaMallocHost and cudaFreeHost may
// synchronize.
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
  // Before the first CUDA call: the driver reads it when it creates the context.
  setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  const int n = 1 << 22;
  float *x, *out, *h;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&out, sizeof(float)));
  // The results and the sum share one pinned block: h[n] is the sum.
  CHECK(cudaMallocHost(&h, (n + 1) * sizeof(float)));
  CHECK(cudaMemset(out, 0, sizeof(float)));
  fill<<<(n + 255) / 256, 256>>>(x, n);
  scale<<<(n + 255) / 256, 256>>>(x, 0.5f, n);
  sum_squares<<<(n + 255) / 256, 256>>>(x, out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(h, x, n * sizeof(float), cudaMemcpyDeviceToHost, cudaStreamLegacy));
  CHECK(cudaMemcpyAsync(h + n, out, sizeof(float), cudaMemcpyDeviceToHost, cudaStreamLegacy));
  CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  double check = 0;
  for (int i = 0; i < n; ++i)
    check += h[i] * (1 + i % 7);
  float total = h[n];
  std::printf("scaled checksum=%.9e\n", check);
  std::printf("sum of squares=%.7e\n", total);
  CHECK(cudaFreeHost(h));
  return 0;
}
