#ifndef CUDAL1_PERSISTENT
#define CUDAL1_PERSISTENT
// cudal1 persistent: a host loop of launches runs as one kernel that loops
// on the device. The kernel gets the loop's values (the host variables it
// reads, the launches' invariant arguments and configurations) as
// parameters; these functions launch it, once, before the loop:
//   cudal1PersistentBlock: one block of the largest launch's threads,
//     __syncthreads() between the phases;
//   cudal1PersistentGrid: a cooperative launch of the blocks the largest
//     launch needs, grid.sync() between the phases;
//   cudal1PersistentOwner: the launches' own grid and block, no barrier.
// Each returns whether it launched: its cost rule (below) declines where
// the form would be slower than the loop (a launch larger than one block,
// more blocks than are resident at once), and the loop then runs its own
// launches, which the rewrite guards with the result.
// In the block and grid forms each thread runs the original threads
// (blockIdx, threadIdx) of a launch in a grid-stride loop over the launch's
// index space: cudal1PersistentCount and cudal1PersistentCoords.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

/// One launch of the loop body: its grid and block.
struct Cudal1PersistentLaunch {
  dim3 grid, block;
};

/// Keeps the kernel's parameter types out of deduction: the arguments
/// convert to them as a launch's arguments do.
template <class T> struct Cudal1PersistentArg {
  using type = T;
};

/// The threads of a launch (blocks times threads per block).
__host__ __device__ inline unsigned long long cudal1PersistentCount(dim3 grid, dim3 block) {
  return (unsigned long long)grid.x * grid.y * grid.z * block.x * block.y * block.z;
}

/// The original thread `v` (block-major, x fastest) of a launch of `grid` x
/// `block`: its threadIdx and blockIdx (32-bit arithmetic where it fits,
/// one division for 1-D blocks and grids).
__device__ inline void cudal1PersistentCoords(unsigned long long v, dim3 grid, dim3 block,
                                              uint3 &thread, uint3 &blockOf) {
  unsigned perBlock = block.x * block.y * block.z;
  unsigned long long b64 = v / perBlock;
  unsigned t = unsigned(v - b64 * perBlock);
  thread = block.y == 1 && block.z == 1
               ? make_uint3(t, 0, 0)
               : make_uint3(t % block.x, t / block.x % block.y, t / (block.x * block.y));
  if (grid.y == 1 && grid.z == 1) {
    blockOf = make_uint3(unsigned(b64), 0, 0);
  } else {
    unsigned b = unsigned(b64);
    blockOf = make_uint3(b % grid.x, b / grid.x % grid.y, b / (grid.x * grid.y));
  }
}

inline void cudal1PersistentCheck(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cudal1 persistent: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

/// The largest launch's threads and the largest block's threads, over
/// [l, end) (recursive: the helper adds no host loop, so the host loop ids
/// of the rest of the file stay those --list-transforms gave).
inline void cudal1PersistentExtent(const Cudal1PersistentLaunch *l,
                                   const Cudal1PersistentLaunch *end, unsigned long long &threads,
                                   unsigned &block) {
  if (l == end)
    return;
  unsigned long long n = cudal1PersistentCount(l->grid, l->block);
  unsigned b = l->block.x * l->block.y * l->block.z;
  threads = n > threads ? n : threads;
  block = b > block ? b : block;
  cudal1PersistentExtent(l + 1, end, threads, block);
}

inline void cudal1PersistentExtent(std::initializer_list<Cudal1PersistentLaunch> launches,
                                   unsigned long long &threads, unsigned &block) {
  threads = 0;
  block = 1;
  cudal1PersistentExtent(launches.begin(), launches.end(), threads, block);
}

/// CUDAL1_PERSISTENT=always runs the persistent kernel whatever the cost
/// rule says (tests), =never runs the original launches; CUDAL1_PERSISTENT_LOG
/// (set) prints each decision on stderr.
inline bool cudal1PersistentDecide(const char *form, bool worth, const char *why, unsigned grid,
                                   unsigned block) {
  const char *mode = std::getenv("CUDAL1_PERSISTENT");
  bool run = worth;
  if (mode && std::strcmp(mode, "always") == 0)
    run = true;
  else if (mode && std::strcmp(mode, "never") == 0)
    run = false;
  if (std::getenv("CUDAL1_PERSISTENT_LOG")) {
    if (run)
      std::fprintf(stderr, "cudal1 persistent: form=%s on the device, %u blocks of %u threads%s\n",
                   form, grid, block, worth ? "" : " (CUDAL1_PERSISTENT=always)");
    else
      std::fprintf(stderr, "cudal1 persistent: form=%s not used, the original launches run (%s)\n",
                   form, worth ? "CUDAL1_PERSISTENT=never" : why);
  }
  return run;
}

/// form=block: one block whose threads (a multiple of 32) cover the largest
/// launch. The cost rule: only when that launch fits one block (1024
/// threads); otherwise nothing is launched and false returned, and the loop
/// runs its own launches. Forced, a larger launch runs in turn on 1024 threads.
template <class... P>
bool cudal1PersistentBlock(void (*kernel)(P...), cudaStream_t stream,
                           std::initializer_list<Cudal1PersistentLaunch> launches,
                           typename Cudal1PersistentArg<P>::type... args) {
  unsigned long long threads;
  unsigned block;
  cudal1PersistentExtent(launches, threads, block);
  unsigned t = threads >= 1024 ? 1024u : unsigned((threads + 31) / 32 * 32);
  if (t == 0)
    t = 32;
  if (!cudal1PersistentDecide("block", threads <= 1024,
                              "the largest launch has more threads than one block holds", 1, t))
    return false;
  void *params[] = {nullptr, (void *)&args...};
  cudal1PersistentCheck(cudaLaunchKernel((const void *)kernel, dim3(1), dim3(t), params + 1, 0,
                                         stream),
                        "launching the persistent kernel (form=block)");
  return true;
}

/// form=grid: a cooperative launch, blocks of the largest block, as many as
/// the largest launch needs. The cost rule: only when they are all resident
/// at once (occupancy query), so that no thread runs more than one original
/// thread per phase; otherwise false, and the loop runs its own launches.
/// Forced, the grid is clamped to the resident blocks (grid.sync() needs
/// them all running) and each thread runs several original threads.
template <class... P>
bool cudal1PersistentGrid(void (*kernel)(P...), cudaStream_t stream,
                          std::initializer_list<Cudal1PersistentLaunch> launches,
                          typename Cudal1PersistentArg<P>::type... args) {
  unsigned long long threads;
  unsigned block;
  cudal1PersistentExtent(launches, threads, block);
  int device = 0, cooperative = 0, sms = 0, perSm = 0;
  cudal1PersistentCheck(cudaGetDevice(&device), "cudaGetDevice");
  cudal1PersistentCheck(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device),
                        "cudaDeviceGetAttribute");
  cudal1PersistentCheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                        "cudaDeviceGetAttribute");
  cudal1PersistentCheck(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, (const void *)kernel, int(block), 0),
      "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  unsigned long long need = (threads + block - 1) / block;
  unsigned long long resident = (unsigned long long)perSm * (unsigned long long)sms;
  if (need == 0)
    need = 1;
  unsigned grid = unsigned(need < resident ? need : resident);
  if (!cooperative || resident == 0) {
    // No grid-wide barrier can be had: the original launches, even forced.
    if (std::getenv("CUDAL1_PERSISTENT_LOG"))
      std::fprintf(stderr, "cudal1 persistent: form=grid not used, the original launches run (%s)\n",
                   !cooperative ? "the device cannot launch cooperative kernels"
                                : "no block of the persistent kernel fits a multiprocessor");
    return false;
  }
  if (!cudal1PersistentDecide("grid", need <= resident,
                              "the largest launch needs more blocks than are resident at once",
                              grid, block))
    return false;
  void *params[] = {nullptr, (void *)&args...};
  cudal1PersistentCheck(cudaLaunchCooperativeKernel((const void *)kernel, dim3(grid), dim3(block),
                                                    params + 1, 0, stream),
                        "launching the persistent kernel (form=grid)");
  return true;
}

/// form=owner: the launches' own configuration; each thread runs its own
/// elements through every iteration, no barrier (always worth it: the same
/// threads do the same work, without a launch per iteration).
template <class... P>
bool cudal1PersistentOwner(void (*kernel)(P...), cudaStream_t stream, dim3 grid, dim3 block,
                           typename Cudal1PersistentArg<P>::type... args) {
  if (!cudal1PersistentDecide("owner", true, "", grid.x * grid.y * grid.z,
                              block.x * block.y * block.z))
    return false;
  void *params[] = {nullptr, (void *)&args...};
  cudal1PersistentCheck(
      cudaLaunchKernel((const void *)kernel, grid, block, params + 1, 0, stream),
      "launching the persistent kernel (form=owner)");
  return true;
}
#endif
