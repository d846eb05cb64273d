// Just enough CUDA to run host loops of launches and persistent's rewrites
// of them on the CPU (test/Passes/persistent-emulated.test): an original
// launch runs its threads one after another (the kernels have no barriers);
// a launch through the helper (cudaLaunchKernel, cudaLaunchCooperativeKernel)
// runs every thread of every block at once as a std::thread, with a real
// barrier per block (__syncthreads) and one for the grid (grid.sync). The
// emulated device has 4 multiprocessors holding 256 threads each: the
// largest loop's launch needs more blocks than are resident, so that the
// cost rule declines it, and, forced, form=grid clamps its grid and its
// threads run several original threads.
#pragma once
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include <cooperative_groups.h>

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }
inline thread_local uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;
inline thread_local std::barrier<> *emulatedBlockBarrier = nullptr;

#define __global__
#define __device__
#define __host__
inline void __syncthreads() { emulatedBlockBarrier->arrive_and_wait(); }

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
enum cudaDeviceAttr { cudaDevAttrCooperativeLaunch, cudaDevAttrMultiProcessorCount };
using cudaStream_t = void *;
inline const char *cudaGetErrorString(cudaError_t) { return "emulated error"; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaGetDevice(int *d) {
  *d = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int) {
  *v = a == cudaDevAttrMultiProcessorCount ? 4 : 1;
  return cudaSuccess;
}
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *, int block,
                                                                 size_t) {
  *n = block > 256 ? 1 : 256 / block;
  return cudaSuccess;
}
template <class T> cudaError_t cudaMalloc(T **p, size_t bytes) {
  *p = static_cast<T *>(std::malloc(bytes));
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *to, const void *from, size_t bytes, cudaMemcpyKind) {
  std::memcpy(to, from, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaFree(void *p) {
  std::free(p);
  return cudaSuccess;
}

/// An original launch: every thread in turn.
template <typename F> void emulateLaunch(dim3 grid, dim3 block, F kernel) {
  gridDim = grid;
  blockDim = block;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              blockIdx = make_uint3(bx, by, bz);
              threadIdx = make_uint3(tx, ty, tz);
              kernel();
            }
}

inline unsigned emulatedLaunches = 0, emulatedMaxThreads = 0;
inline dim3 emulatedLastGrid, emulatedLastBlock;

/// A launch through the helper: all threads at once, the kernel's
/// parameters unpacked from `args` (each thread gets its own copy).
template <class... P, size_t... I>
void emulateConcurrent(void (*kernel)(P...), dim3 grid, dim3 block, void **args,
                       std::index_sequence<I...>) {
  gridDim = grid;
  blockDim = block;
  ++emulatedLaunches;
  emulatedLastGrid = grid;
  emulatedLastBlock = block;
  unsigned perBlock = block.x * block.y * block.z, blocks = grid.x * grid.y * grid.z;
  if (perBlock * blocks > emulatedMaxThreads)
    emulatedMaxThreads = perBlock * blocks;
  std::barrier<> gridBarrier(perBlock * blocks);
  emulatedGridBarrier = &gridBarrier;
  std::vector<std::unique_ptr<std::barrier<>>> barriers;
  for (unsigned b = 0; b < blocks; ++b)
    barriers.push_back(std::make_unique<std::barrier<>>(perBlock));
  std::vector<std::thread> threads;
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < perBlock; ++t)
      threads.emplace_back([=, &barriers] {
        blockIdx = make_uint3(b % grid.x, b / grid.x % grid.y, b / (grid.x * grid.y));
        threadIdx = make_uint3(t % block.x, t / block.x % block.y, t / (block.x * block.y));
        emulatedBlockBarrier = barriers[b].get();
        kernel(*static_cast<P *>(args[I])...);
      });
  for (std::thread &t : threads)
    t.join();
}

template <class... P>
cudaError_t emulateHelperLaunch(void (*kernel)(P...), dim3 grid, dim3 block, void **args) {
  emulateConcurrent(kernel, grid, block, args, std::index_sequence_for<P...>{});
  return cudaSuccess;
}

// The helper's launches name its typed `kernel` parameter (the first
// argument is that kernel cast to const void *).
#define cudaLaunchKernel(f, grid, block, args, shared, stream)                                   \
  emulateHelperLaunch(kernel, grid, block, args)
#define cudaLaunchCooperativeKernel(f, grid, block, args, shared, stream)                        \
  emulateHelperLaunch(kernel, grid, block, args)
