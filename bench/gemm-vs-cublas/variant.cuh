// bench/gemm-vs-cublas: the prelude of every variant's wrapper unit (the
// derive script writes them: `#include "variant.cuh"`, then the variant's
// source inside a namespace of its own, its main renamed, and a registrar).
// Allocations are kept, frees deferred, the timed region captured (GpuTimer
// below), and in the library variant the cuBLAS helper replaced by one that
// records each call.
#pragma once
#include "harness.cuh"

// Allocations are recorded (the n-th allocation of every variant of one
// program is the same buffer: same sizes, same seeds) and never freed before
// the timing is done.
template <typename T> static cudaError_t cudal1BenchMalloc(T **p, size_t bytes) {
  cudaError_t e = cudaMalloc(reinterpret_cast<void **>(p), bytes);
  if (e == cudaSuccess)
    benchRecordAlloc(*p, bytes);
  return e;
}
static inline cudaError_t cudal1BenchFree(void *p) {
  benchDeferFree(p);
  return cudaSuccess;
}
#define cudaMalloc cudal1BenchMalloc
#define cudaFree cudal1BenchFree

// The corpus' own timer is renamed away; the one below has its interface.
// common.h in an anonymous namespace: every variant of a program includes it
// (its non-template kernels would be defined once per unit otherwise).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>
#define GpuTimer CorpusGpuTimerUnused
namespace {
#include "common.h"
}
#undef GpuTimer

/// The corpus timer's interface: start() begins capturing the program's
/// stream, stop() ends the capture, records the graph, runs it once (the
/// program goes on with its results) and returns that run's time.
struct GpuTimer {
  cudaEvent_t begin = nullptr, end = nullptr;
  bool capturing = false;
  GpuTimer() {
    BENCH_CHECK(cudaEventCreate(&begin));
    BENCH_CHECK(cudaEventCreate(&end));
  }
  void start() {
    BENCH_CHECK(cudaDeviceSynchronize());
    capturing = benchCapturing();
    if (capturing)
      BENCH_CHECK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal));
    else
      BENCH_CHECK(cudaEventRecord(begin, cudaStreamPerThread));
  }
  float stop() {
    if (capturing) {
      cudaGraph_t graph = nullptr;
      BENCH_CHECK(cudaStreamEndCapture(cudaStreamPerThread, &graph));
      cudaGraphExec_t exec = nullptr;
      BENCH_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      BENCH_CHECK(cudaEventRecord(begin, cudaStreamPerThread));
      BENCH_CHECK(cudaGraphLaunch(exec, cudaStreamPerThread));
      BENCH_CHECK(cudaEventRecord(end, cudaStreamPerThread));
      BENCH_CHECK(cudaEventSynchronize(end));
      BENCH_CHECK(cudaGraphExecDestroy(exec));
      benchRecordRegion(graph); // kept: main.cu launches its kernel nodes
    } else {
      BENCH_CHECK(cudaEventRecord(end, cudaStreamPerThread));
      BENCH_CHECK(cudaEventSynchronize(end));
    }
    BENCH_CHECK(cudaDeviceSynchronize());
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, begin, end));
    return ms;
  }
};

// The library variant: its helper (passes/runtime/cublas.cuh) is replaced by
// one with the same interface that records each GEMM and runs it on the
// program's stream. GEMV and CUB sums are not GEMM-like: refused loudly.
#ifdef CUDAL1_BENCH_LIBRARY
#define CUDAL1_CUBLAS
struct Cudal1Cublas {
  cublasHandle_t handle = nullptr;
  Cudal1Cublas() {
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
      fprintf(stderr, "gemm-vs-cublas: cublasCreate failed\n");
      exit(1);
    }
  }
};
struct Cudal1CublasSetup : Cudal1Cublas {};
template <typename T>
static void cudal1Gemm(Cudal1Cublas &h, bool transA, bool transB, long long m, long long n,
                       long long k, T alpha, const T *a, const T *b, T beta, T *c, cudaStream_t) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float or double");
  BenchGemmCall call;
  call.isDouble = sizeof(T) == 8;
  call.transA = transA;
  call.transB = transB;
  call.m = m;
  call.n = n;
  call.k = k;
  call.alpha = (double)alpha;
  call.beta = (double)beta;
  call.a = a;
  call.b = b;
  call.c = c;
  benchRecordGemm(call);
  if (benchRunGemm(h.handle, call, cudaStreamPerThread) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "gemm-vs-cublas: the library variant's cuBLAS call failed\n");
    exit(1);
  }
}
template <typename T>
static void cudal1Gemv(Cudal1Cublas &, bool, long long, long long, T, const T *, const T *, T, T *,
                       cudaStream_t) {
  fprintf(stderr, "gemm-vs-cublas: a GEMV is not a GEMM (not benchmarked)\n");
  exit(1);
}
#endif

/// The registrar of a wrapper unit: mains with and without arguments.
static inline void benchRegisterMain(const char *variant, int (*m)(int, char **), bool capture) {
  benchRegister(variant, m, nullptr, capture);
}
static inline void benchRegisterMain(const char *variant, int (*m)(), bool capture) {
  benchRegister(variant, nullptr, m, capture);
}
