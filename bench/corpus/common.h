// Shared by every corpus program: error checks, command-line sizes,
// deterministic inputs, the event timer and the three output lines
// (checksum=, gpu_ms=, floor:) that bench/run parses. See docs/Corpus.md.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                           \
  do {                                                                        \
    cudaError_t err_ = (call);                                                \
    if (err_ != cudaSuccess) {                                                \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,    \
              cudaGetErrorString(err_));                                      \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

#define CHECK_LAUNCH() CHECK(cudaGetLastError())

// Sizes come as name=value arguments; --quick selects small defaults (tests).
static bool hasFlag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], flag) == 0) return true;
  return false;
}

static long long argInt(int argc, char** argv, const char* name, long long def,
                        long long quickDef) {
  size_t len = strlen(name);
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=')
      return atoll(argv[i] + len + 1);
  return hasFlag(argc, argv, "--quick") ? quickDef : def;
}

// Deterministic inputs: a hash of (index, seed) mapped to [lo, hi].
__host__ __device__ inline unsigned int hashIndex(unsigned long long i, unsigned int seed) {
  unsigned int x = (unsigned int)(i ^ (i >> 32)) * 0x9E3779B1u + seed * 0x85EBCA77u;
  x ^= x >> 16; x *= 0x7FEB352Du;
  x ^= x >> 15; x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

__host__ __device__ inline double hashUniform(unsigned long long i, unsigned int seed) {
  return (hashIndex(i, seed) >> 8) * (1.0 / 16777216.0);  // [0, 1)
}

template <typename T>
__global__ void fillUniformKernel(T* p, size_t n, unsigned int seed, double lo, double hi) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = (T)(lo + (hi - lo) * hashUniform(i, seed));
}

__global__ void fillIntKernel(int* p, size_t n, unsigned int seed, int mod) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = (int)(hashIndex(i, seed) % (unsigned int)mod);
}

template <typename T>
static void fillUniform(T* d, size_t n, unsigned int seed, double lo = -1.0, double hi = 1.0) {
  fillUniformKernel<T><<<(unsigned int)((n + 255) / 256), 256>>>(d, n, seed, lo, hi);
  CHECK_LAUNCH();
}

static void fillInt(int* d, size_t n, unsigned int seed, int mod) {
  fillIntKernel<<<(unsigned int)((n + 255) / 256), 256>>>(d, n, seed, mod);
  CHECK_LAUNCH();
}

template <typename T>
static T* deviceAlloc(size_t n) {
  T* p = nullptr;
  CHECK(cudaMalloc(&p, n * sizeof(T)));
  return p;
}

struct GpuTimer {
  cudaEvent_t begin, end;
  GpuTimer() { CHECK(cudaEventCreate(&begin)); CHECK(cudaEventCreate(&end)); }
  void start() { CHECK(cudaDeviceSynchronize()); CHECK(cudaEventRecord(begin)); }
  float stop() {
    CHECK(cudaEventRecord(end));
    CHECK(cudaEventSynchronize(end));
    CHECK(cudaDeviceSynchronize());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, begin, end));
    return ms;
  }
};

// A position-weighted sum in double of a device array.
template <typename T>
static double checksumOf(const T* d, size_t n) {
  std::vector<T> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += (double)h[i] * (1.0 + (double)(i % 13) / 13.0);
  return s;
}

// Exact results (no atomics on floating point): all digits.
static void printChecksum(double v) { printf("checksum=%.15e\n", v); }

// Results whose summation order varies from run to run (floating-point
// atomics): only `digits` significant digits, so two runs agree.
static void printChecksumRounded(double v, int digits) { printf("checksum=%.*e\n", digits - 1, v); }

static void printTime(float ms) { printf("gpu_ms=%.4f\n", ms); }

// The least DRAM traffic and the operations (FMA = 2) of the whole timed
// region; dtype picks the arithmetic ceiling (f32, f64; i32 has none).
static void printFloor(double bytes, double flops, const char* dtype) {
  printf("floor: bytes=%.0f flops=%.0f dtype=%s\n", bytes, flops, dtype);
}
