#ifndef CUDAL1_WARP_ATOMIC_ADD
#define CUDAL1_WARP_ATOMIC_ADD
// cudal1 warp-reduce: adds v over the lanes of the calling warp that exist
// (a block may end inside a warp) and lane 0 adds the sum to *addr. Every
// existing lane of the warp must call it.
template <typename T>
__device__ __forceinline__ void cudal1WarpAtomicAdd(T *addr, T v) {
  unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  unsigned lane = tid % 32u;
  unsigned left = threads - (tid - lane);
  unsigned live = left < 32u ? left : 32u;
  unsigned mask = live == 32u ? 0xffffffffu : (1u << live) - 1u;
  for (unsigned off = 16; off > 0; off /= 2) {
    T o = __shfl_down_sync(mask, v, off);
    if (lane + off < live)
      v += o;
  }
  if (lane == 0)
    atomicAdd(addr, v);
}
#endif
