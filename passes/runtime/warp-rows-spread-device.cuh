#ifndef CUDAL1_WARP_ROWS_SPREAD
#define CUDAL1_WARP_ROWS_SPREAD
// cudal1 warp-rows, layout=spread: a row's group of LANES lanes is spread
// over the warp, 32 / LANES lanes apart (lane l works on row l % (32 / LANES)
// of the warp's rows), so that adjacent lanes keep adjacent rows, i.e. the
// adjacent addresses of a kernel that was coalesced already. The partial
// values combine with xor shuffles over the offsets 16 down to 32 / LANES.
// `rows`: the lanes that work on a row (as cudal1RowSum's).
template <unsigned LANES, typename T>
__device__ __forceinline__ T cudal1SpreadSum(T v, unsigned rows) {
  for (unsigned off = 16; off >= 32 / LANES; off /= 2)
    v += __shfl_xor_sync(rows, v, off);
  return v;
}
template <unsigned LANES, typename T>
__device__ __forceinline__ T cudal1SpreadMax(T v, unsigned rows) {
  for (unsigned off = 16; off >= 32 / LANES; off /= 2) {
    T o = __shfl_xor_sync(rows, v, off);
    v = o > v ? o : v;
  }
  return v;
}
template <unsigned LANES, typename T>
__device__ __forceinline__ T cudal1SpreadMin(T v, unsigned rows) {
  for (unsigned off = 16; off >= 32 / LANES; off /= 2) {
    T o = __shfl_xor_sync(rows, v, off);
    v = o < v ? o : v;
  }
  return v;
}
#endif
