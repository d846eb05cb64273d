// What a CUDA process pays before its first kernel (driver load, context),
// and whether another process that holds a context meanwhile makes that
// cheaper (bench/startup/run).
//   probe            one context, one tiny kernel, exits
//   probe --hold S   holds a context for S seconds (prints "holding" first)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <thread>

__global__ void touch(int *p) { p[threadIdx.x] = threadIdx.x; }

int main(int argc, char **argv) {
  int *p = nullptr;
  if (cudaMalloc(&p, 256 * sizeof(int)) != cudaSuccess) {
    std::fprintf(stderr, "probe: no CUDA device\n");
    return 1;
  }
  touch<<<1, 256>>>(p);
  if (cudaDeviceSynchronize() != cudaSuccess)
    return 1;
  if (argc == 3 && std::strcmp(argv[1], "--hold") == 0) {
    std::printf("holding\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(std::atoi(argv[2])));
  }
  cudaFree(p);
  return 0;
}
