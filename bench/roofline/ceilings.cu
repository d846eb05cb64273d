// Measures the H200 ceilings that bench/run divides each corpus program's
// floor by: device-to-device copy bandwidth and cuBLAS SGEMM / DGEMM rates,
// in the same session as the corpus run. Prints one `ceiling:` line.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                 \
  do {                                                                              \
    cudaError_t e_ = (call);                                                        \
    if (e_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)
#define CHECK_BLAS(call)                                                            \
  do {                                                                              \
    cublasStatus_t s_ = (call);                                                     \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
      fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__, __LINE__, #call, (int)s_); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

namespace {

__global__ void fill(float* p, size_t n, float v) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v * (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f * v;
}
__global__ void fillD(double* p, size_t n, double v) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v * (double)((i * 2654435761u) % 1000) / 1000.0 - 0.5 * v;
}

// Median of `reps` timings of `work`, after two warm-ups.
template <typename F>
float medianMs(int reps, F work) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int w = 0; w < 2; ++w) work();
  CHECK(cudaDeviceSynchronize());
  float t[64];
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(a));
    work();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&t[r], a, b));
  }
  for (int i = 0; i < reps; ++i)
    for (int j = i + 1; j < reps; ++j)
      if (t[j] < t[i]) { float x = t[i]; t[i] = t[j]; t[j] = x; }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return t[reps / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));

  // 1. Copy bandwidth: bytes read + written per second, 2 GiB buffers.
  size_t bytes = quick ? (64u << 20) : (2ull << 30);
  void *src, *dst;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMemset(src, 1, bytes));
  float copyMs = medianMs(quick ? 3 : 11, [&] {
    CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
  });
  double bwGBs = 2.0 * bytes / (copyMs * 1e-3) / 1e9;
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));

  // 2. GEMM rates: square n x n, no tensor-op math for fp32 (default mode).
  cublasHandle_t h;
  CHECK_BLAS(cublasCreate(&h));
  int n = quick ? 1024 : 8192;
  size_t nn = (size_t)n * n;
  float *A, *B, *C;
  CHECK(cudaMalloc(&A, nn * sizeof(float)));
  CHECK(cudaMalloc(&B, nn * sizeof(float)));
  CHECK(cudaMalloc(&C, nn * sizeof(float)));
  fill<<<(unsigned)((nn + 255) / 256), 256>>>(A, nn, 1.0f);
  fill<<<(unsigned)((nn + 255) / 256), 256>>>(B, nn, 1.0f);
  float one = 1.0f, zero = 0.0f;
  float sMs = medianMs(quick ? 3 : 7, [&] {
    CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n));
  });
  double sgemmGflops = 2.0 * nn * n / (sMs * 1e-3) / 1e9;
  CHECK(cudaFree(A));
  CHECK(cudaFree(B));
  CHECK(cudaFree(C));

  double *dA, *dB, *dC;
  CHECK(cudaMalloc(&dA, nn * sizeof(double)));
  CHECK(cudaMalloc(&dB, nn * sizeof(double)));
  CHECK(cudaMalloc(&dC, nn * sizeof(double)));
  fillD<<<(unsigned)((nn + 255) / 256), 256>>>(dA, nn, 1.0);
  fillD<<<(unsigned)((nn + 255) / 256), 256>>>(dB, nn, 1.0);
  double oneD = 1.0, zeroD = 0.0;
  float dMs = medianMs(quick ? 3 : 7, [&] {
    CHECK_BLAS(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &oneD, dA, n, dB, n, &zeroD, dC, n));
  });
  double dgemmGflops = 2.0 * nn * n / (dMs * 1e-3) / 1e9;
  CHECK(cudaFree(dA));
  CHECK(cudaFree(dB));
  CHECK(cudaFree(dC));
  CHECK_BLAS(cublasDestroy(h));

  printf("gpu: %s (sm_%d%d, %d SMs, %.0f MiB)\n", prop.name, prop.major, prop.minor,
         prop.multiProcessorCount, prop.totalGlobalMem / 1048576.0);
  printf("ceiling: bw_gbs=%.1f sgemm_gflops=%.1f dgemm_gflops=%.1f\n", bwGBs, sgemmGflops,
         dgemmGflops);
  return 0;
}
