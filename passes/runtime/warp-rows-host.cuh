#ifndef CUDAL1_WARP_ROWS_GRID
#define CUDAL1_WARP_ROWS_GRID
// cudal1 warp-rows: the grid of a launch whose rows now take `lanes` threads
// each, in blocks of `block` threads: as many row groups along x as the
// original launch had threads along x (its y and z are kept).
inline dim3 cudal1WarpRowsGrid(dim3 grid, dim3 block, unsigned lanes, unsigned threads) {
  unsigned long long need = (unsigned long long)grid.x * block.x * lanes;
  unsigned long long blocks = (need + threads - 1) / threads;
  grid.x = (unsigned)(blocks < 2147483647ull ? blocks : 2147483647ull);
  return grid;
}
#endif
