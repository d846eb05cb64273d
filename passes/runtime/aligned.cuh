#ifndef CUDAL1_ALIGNED
#define CUDAL1_ALIGNED
// cudal1 vectorize: whether p may be accessed as vectors of `bytes` bytes.
__device__ __forceinline__ bool cudal1Aligned(const void *p, unsigned bytes) {
  return reinterpret_cast<unsigned long long>(p) % bytes == 0;
}
#endif
