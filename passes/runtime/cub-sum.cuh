#ifndef CUDAL1_CUB_SUM
#define CUDAL1_CUB_SUM
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_reduce.cuh>
// cudal1 library: a recognized atomic sum `*out += sum f(x[i])` as a CUB
// reduction into scratch memory, then one single-thread kernel adds it to
// *out (stream-ordered, like the atomics it replaces). The scratch (CUB's
// temporary storage and the partial result) belongs to one call site and
// grows when needed; it is kept until the program ends.
struct Cudal1CubScratch {
  void *memory = nullptr;
  size_t bytes = 0;
  void *reserve(size_t need) {
    if (need > bytes) {
      if (memory) cudaFree(memory);
      check(cudaMalloc(&memory, need), "cudaMalloc");
      bytes = need;
    }
    return memory;
  }
  static void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
      fprintf(stderr, "cudal1 library: %s: %s\n", what, cudaGetErrorString(e));
      exit(1);
    }
  }
};
template <typename Out> struct Cudal1AsOut {
  template <typename In> __host__ __device__ Out operator()(const In &v) const { return (Out)v; }
};
template <typename Out> struct Cudal1Square {
  template <typename In> __host__ __device__ Out operator()(const In &v) const { return (Out)(v * v); }
};
template <typename Out> struct Cudal1Plus {
  __host__ __device__ Out operator()(const Out &a, const Out &b) const { return a + b; }
};
template <typename Out> __global__ void cudal1AddInto(Out *out, const Out *value) { *out += *value; }
template <typename In, typename Out, typename F>
void cudal1SumInto(Cudal1CubScratch &scratch, const In *x, long long n, Out *out, F f,
                   cudaStream_t stream) {
  if (n <= 0) return;
  using Plus = Cudal1Plus<Out>;
  size_t temp = 0;
  Cudal1CubScratch::check(cub::DeviceReduce::TransformReduce(nullptr, temp, x, (Out *)nullptr, n,
                                                             Plus(), f, Out(0), stream),
                          "cub::DeviceReduce::TransformReduce");
  size_t at = (temp + 255) / 256 * 256;
  char *base = (char *)scratch.reserve(at + sizeof(Out));
  Out *partial = (Out *)(base + at);
  Cudal1CubScratch::check(cub::DeviceReduce::TransformReduce(base, temp, x, partial, n, Plus(), f,
                                                             Out(0), stream),
                          "cub::DeviceReduce::TransformReduce");
  cudal1AddInto<<<1, 1, 0, stream>>>(out, partial);
}
#endif
