#ifndef CUDAL1_SIDE_STREAM
#define CUDAL1_SIDE_STREAM
// cudal1 streams: a non-blocking side stream for one launch. fork(origin)
// makes it wait for the work issued on `origin` so far and returns it;
// join(origin) makes `origin` wait for the work issued on it since. Created
// once per launch site (a static local) and kept until the program ends.
struct Cudal1SideStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t forked = nullptr, done = nullptr;
  Cudal1SideStream() {
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&forked, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  }
  cudaStream_t fork(cudaStream_t origin) {
    cudaEventRecord(forked, origin);
    cudaStreamWaitEvent(stream, forked, 0);
    return stream;
  }
  void join(cudaStream_t origin) {
    cudaEventRecord(done, stream);
    cudaStreamWaitEvent(origin, done, 0);
  }
};
#endif
