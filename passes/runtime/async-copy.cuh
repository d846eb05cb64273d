#ifndef CUDAL1_ASYNC_COPY
#define CUDAL1_ASYNC_COPY
#include <cstdio>
#include <cstdlib>
#include <cstring>
// cudal1 async-copy: a device-to-host copy through a pinned staging buffer
// on a non-blocking side stream. start(dst, src, bytes, origin) forks the
// side stream from `origin` and starts the copy; finish(origin) makes
// `origin` and the host wait for it and copies the staging buffer into dst.
// One per copy site (a static local), kept until the program ends.
struct Cudal1AsyncCopy {
  cudaStream_t stream = nullptr;
  cudaEvent_t forked = nullptr, done = nullptr;
  void *staging = nullptr;
  size_t capacity = 0;
  void *dst = nullptr;
  size_t bytes = 0;
  Cudal1AsyncCopy() {
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming), "event");
    check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "event");
  }
  static void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
      fprintf(stderr, "cudal1 async-copy: %s: %s\n", what, cudaGetErrorString(e));
      exit(1);
    }
  }
  void start(void *d, const void *src, size_t n, cudaStream_t origin) {
    if (n > capacity) {
      if (staging) check(cudaFreeHost(staging), "cudaFreeHost");
      check(cudaMallocHost(&staging, n), "cudaMallocHost");
      capacity = n;
    }
    check(cudaEventRecord(forked, origin), "fork");
    check(cudaStreamWaitEvent(stream, forked, 0), "fork");
    check(cudaMemcpyAsync(staging, src, n, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaEventRecord(done, stream), "record");
    dst = d;
    bytes = n;
  }
  void finish(cudaStream_t origin) {
    check(cudaStreamWaitEvent(origin, done, 0), "join");
    check(cudaEventSynchronize(done), "copy");
    if (bytes) memcpy(dst, staging, bytes);
  }
};
#endif
