// Just enough CUDA to run a kernel on the CPU with one std::thread per CUDA
// thread and a real barrier per block (blocks run one after another, so
// __shared__ arrays can be function-local statics). For checking rewrites
// whose correctness depends on barriers and thread mapping, not for speed.
#pragma once
#include <barrier>
#include <thread>
#include <vector>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};
inline thread_local dim3 threadIdx;
inline dim3 blockIdx, blockDim, gridDim;
inline std::barrier<> *blockBarrier;

#define __global__
#define __device__
#define __shared__ static
#define __restrict__ __restrict
inline void __syncthreads() { blockBarrier->arrive_and_wait(); }

template <typename F> void emulateLaunch(dim3 grid, dim3 block, F kernel) {
  gridDim = grid;
  blockDim = block;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        blockIdx = dim3(bx, by, bz);
        std::barrier<> barrier(block.x * block.y * block.z);
        blockBarrier = &barrier;
        std::vector<std::thread> threads;
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx)
              threads.emplace_back([=] {
                threadIdx = dim3(tx, ty, tz);
                kernel();
              });
        for (std::thread &t : threads)
          t.join();
      }
}
