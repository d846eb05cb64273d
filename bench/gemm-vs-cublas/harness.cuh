// bench/gemm-vs-cublas: what the variants' units (variant.cuh) and the
// timing driver (main.cu) share. A corpus program becomes a source of
// replayable launches: its timed region (GpuTimer start..stop) is captured
// as a CUDA graph and run once, its allocations are recorded and kept, and in
// the library variant each cuBLAS call the library pass emitted is recorded
// (the recognizer's shape, transposes and leading dimensions) and run. main.cu
// then times the GEMM kernel's launches and those calls side by side.
// Wrapper units are compiled with --default-stream per-thread, so that the
// program's <<<...>>> launches go to a stream that can be captured.
#pragma once
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include <cuda_runtime.h>

/// One cuBLAS GEMM of the library variant: row-major C (m x n) =
/// alpha * op(A) op(B) + beta * C, A m x k (transA: stored k x m), B k x n
/// (transB: stored n x k), C's rows n apart, as the recognizer described it.
struct BenchGemmCall {
  bool isDouble = false;
  bool transA = false, transB = false;
  long long m = 0, n = 0, k = 0;
  double alpha = 1, beta = 0;
  const void *a = nullptr, *b = nullptr;
  void *c = nullptr;
};

// Defined in main.cu: the program whose main is running records into it.
void benchRecordAlloc(void *p, size_t bytes);
void benchDeferFree(void *p);
void benchRecordRegion(cudaGraph_t graph);
void benchRecordGemm(const BenchGemmCall &call);
bool benchCapturing(); // false in the library variant: its region runs as written
void benchRegister(const char *variant, int (*mainArgs)(int, char **), int (*mainNoArgs)(),
                   bool capture);
void benchFail(const char *what, cudaError_t e, const char *file, int line);

/// Runs one recorded call on `stream` (main.cu times it; the library
/// variant's program runs it once where the kernel was launched).
cublasStatus_t benchRunGemm(cublasHandle_t h, const BenchGemmCall &call, cudaStream_t stream);

#define BENCH_CHECK(call)                                                                          \
  do {                                                                                             \
    cudaError_t benchErr_ = (call);                                                                \
    if (benchErr_ != cudaSuccess)                                                                  \
      benchFail(#call, benchErr_, __FILE__, __LINE__);                                             \
  } while (0)
