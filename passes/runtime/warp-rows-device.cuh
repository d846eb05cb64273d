#ifndef CUDAL1_WARP_ROWS
#define CUDAL1_WARP_ROWS
// cudal1 warp-rows: a row's partial values, one per lane of a group of LANES
// consecutive lanes (LANES divides 32, groups never straddle a warp), are
// combined with xor shuffles so that every lane of the group gets the total.
// `rows` holds the lanes that work on a row (a ballot of the row guard): a
// group is either wholly in it or wholly out, and only lanes in it call this.
// The lanes of the calling warp that exist (a block may end inside a warp;
// __activemask() would give the lanes that happen to be converged).
__device__ __forceinline__ unsigned cudal1LiveLanes() {
  unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned left = blockDim.x * blockDim.y * blockDim.z - (tid - tid % 32u);
  return left >= 32u ? 0xffffffffu : (1u << left) - 1u;
}
template <unsigned LANES, typename T>
__device__ __forceinline__ T cudal1RowSum(T v, unsigned rows) {
  for (unsigned off = LANES / 2; off > 0; off /= 2)
    v += __shfl_xor_sync(rows, v, off);
  return v;
}
template <unsigned LANES, typename T>
__device__ __forceinline__ T cudal1RowMax(T v, unsigned rows) {
  for (unsigned off = LANES / 2; off > 0; off /= 2) {
    T o = __shfl_xor_sync(rows, v, off);
    v = o > v ? o : v;
  }
  return v;
}
template <unsigned LANES, typename T>
__device__ __forceinline__ T cudal1RowMin(T v, unsigned rows) {
  for (unsigned off = LANES / 2; off > 0; off /= 2) {
    T o = __shfl_xor_sync(rows, v, off);
    v = o < v ? o : v;
  }
  return v;
}
// The vector part of a row loop (vector=yes): 16 bytes per load where the
// row's start is 16-byte aligned; the caller checks every buffer.
__device__ __forceinline__ bool cudal1Aligned16(const void *p) {
  return ((unsigned long long)p & 15u) == 0;
}
template <typename T> struct Cudal1Vec16;
template <> struct Cudal1Vec16<float> {
  typedef float4 type;
};
template <> struct Cudal1Vec16<double> {
  typedef double2 type;
};
template <typename T>
__device__ __forceinline__ typename Cudal1Vec16<T>::type cudal1Load16(const T *p) {
  return *reinterpret_cast<const typename Cudal1Vec16<T>::type *>(p);
}
#endif
