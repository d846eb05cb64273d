// Runs the original kernels of stage-shared-kernels.cu and their rewritten
// versions (ORIG_KERNELS / VARIANT_KERNELS: the cut-out kernel text) on the
// CPU: the original with its launch's grid and block, the variant with the
// grid and block stage-shared derives (TILE, ROWS), on sizes that are not
// multiples of the tile; every element of the output buffer, including the
// guard zone after it and the elements no thread writes, must match bit for bit.
#include "emulate-cuda.h"

#include <cstdio>
#include <cstring>

namespace orig {
#include ORIG_KERNELS
}
namespace variant {
#include VARIANT_KERNELS
}

static unsigned hashOf(unsigned i) {
  i ^= i >> 16;
  i *= 0x7feb352dU;
  i ^= i >> 15;
  i *= 0x846ca68bU;
  return i ^ (i >> 16);
}

// What the rewritten launch computes: the original threads in TILE x TILE
// tiles, blocks of TILE x TILE/ROWS.
static dim3 tiledGrid(dim3 g, dim3 b) {
  return dim3((g.x * b.x + TILE - 1) / TILE, (g.y * b.y + TILE - 1) / TILE, g.z * b.z);
}

template <typename T> static int compare(const char *what, int rows, int cols,
                                         const std::vector<T> &want, const std::vector<T> &got) {
  for (size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&want[i], &got[i], sizeof(T)) != 0) {
      std::printf("MISMATCH %s rows=%d cols=%d at %zu: %.17g vs %.17g\n", what, rows, cols, i,
                  double(want[i]), double(got[i]));
      return 1;
    }
  return 0;
}

int main() {
  const int sizes[][2] = {{37, 45}, {32, 32}, {1, 70}, {50, 9}, {33, 65}, {16, 17}};
  int failures = 0, compared = 0;
  dim3 vblock(TILE, TILE / ROWS);
  for (const auto &sz : sizes) {
    int rows = sz[0], cols = sz[1];
    size_t n = size_t(rows) * cols, big = n + 64;
    std::vector<float> in(big), bias(rows);
    std::vector<double> inD(big);
    for (size_t i = 0; i < big; ++i) {
      in[i] = float(hashOf(unsigned(i)) % 2001) / 1000.0f - 1.0f;
      inD[i] = double(hashOf(unsigned(i) + 99991u) % 200001) / 1000.0 - 100.0;
    }
    for (int i = 0; i < rows; ++i)
      bias[i] = 0.25f * i - 1.0f;
    {
      dim3 block(32, 8), grid((cols + 31) / 32, (rows + 7) / 8);
      std::vector<float> want(big, 12345.0f), got(big, 12345.0f);
      emulateLaunch(grid, block, [&] { orig::transpose(in.data(), want.data(), rows, cols); });
      emulateLaunch(tiledGrid(grid, block), vblock,
                    [&] { variant::transpose(in.data(), got.data(), rows, cols); });
      failures += compare("transpose", rows, cols, want, got);
      ++compared;
    }
    {
      dim3 block(16, 16), grid((rows + 15) / 16, (cols + 15) / 16);
      std::vector<double> want(big, 12345.0), got(big, 12345.0);
      emulateLaunch(grid, block, [&] { orig::transposeD(inD.data(), want.data(), rows, cols); });
      emulateLaunch(tiledGrid(grid, block), vblock,
                    [&] { variant::transposeD(inD.data(), got.data(), rows, cols); });
      failures += compare("transposeD", rows, cols, want, got);
      ++compared;
    }
    {
      dim3 block(8, 32), grid((cols + 7) / 8, (rows + 31) / 32);
      std::vector<float> want(big, 12345.0f), got(big, 12345.0f);
      emulateLaunch(grid, block, [&] {
        orig::scaleT(in.data(), bias.data(), want.data(), 1.5f, rows, cols);
      });
      emulateLaunch(tiledGrid(grid, block), vblock, [&] {
        variant::scaleT(in.data(), bias.data(), got.data(), 1.5f, rows, cols);
      });
      failures += compare("scaleT", rows, cols, want, got);
      ++compared;
    }
    {
      dim3 block(16, 16), grid((cols + 15) / 16, (rows + 15) / 16);
      std::vector<float> want(big, 12345.0f), got(big, 12345.0f);
      emulateLaunch(grid, block, [&] { orig::derived(in.data(), want.data(), rows, cols); });
      emulateLaunch(tiledGrid(grid, block), vblock,
                    [&] { variant::derived(in.data(), got.data(), rows, cols); });
      failures += compare("derived", rows, cols, want, got);
      ++compared;
    }
  }
  std::printf("tile=%d rows=%d: %d comparisons, %d mismatches\n", TILE, ROWS, compared, failures);
  return failures != 0;
}
