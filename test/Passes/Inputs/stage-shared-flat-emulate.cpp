// Runs the kernels of stage-shared-flat-kernels.cu and their 1-D staged
// versions on the CPU (emulate-cuda.h) with the same launch (the 1-D form
// keeps it), and compares every element of the output, including the ones no
// thread writes and a guard zone after the buffer, bit for bit. Shapes that
// are not multiples of the tile (and a 1-row, a 1-column matrix), with grids
// that are exact, larger than needed and too small (only the original
// threads' elements may be written).
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

template <typename T>
static int compare(const char *what, int H, int W, unsigned blocks, const std::vector<T> &want,
                   const std::vector<T> &got) {
  for (size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&want[i], &got[i], sizeof(T)) != 0) {
      std::printf("MISMATCH %s H=%d W=%d blocks=%u at %zu: %.17g vs %.17g\n", what, H, W, blocks,
                  i, double(want[i]), double(got[i]));
      return 1;
    }
  return 0;
}

int main() {
  const int shapes[][2] = {{37, 45}, {1, 70}, {50, 9}, {70, 1}};
  int failures = 0, compared = 0;
  for (const auto &sh : shapes) {
    int H = sh[0], W = sh[1];
    size_t n = size_t(H) * W, big = n + 64;
    std::vector<float> in(big), bias(W);
    std::vector<double> inD(big);
    for (size_t i = 0; i < big; ++i) {
      in[i] = float(hashOf(unsigned(i)) % 2001) / 1000.0f - 1.0f;
      inD[i] = double(hashOf(unsigned(i) + 99991u) % 200001) / 1000.0 - 100.0;
    }
    for (int i = 0; i < W; ++i)
      bias[i] = 0.25f * i - 1.0f;
    for (unsigned kernel = 0; kernel < 3; ++kernel) {
      unsigned threads = kernel == 0 ? 256 : kernel == 1 ? 128 : 1024;
      unsigned exact = unsigned((n + threads - 1) / threads);
      for (unsigned blocks : {exact, exact + 1, exact > 1 ? exact / 2 : 1u}) {
        dim3 grid(blocks), block(threads);
        if (kernel == 1) {
          std::vector<double> want(big, 12345.0), got(big, 12345.0);
          emulateLaunch(grid, block, [&] { orig::flatGather(inD.data(), want.data(), H, W); });
          emulateLaunch(grid, block, [&] { variant::flatGather(inD.data(), got.data(), H, W); });
          failures += compare("flatGather", H, W, blocks, want, got);
        } else {
          std::vector<float> want(big, 12345.0f), got(big, 12345.0f);
          auto run = [&](bool v, float *o) {
            emulateLaunch(grid, block, [&] {
              if (kernel == 0)
                v ? variant::flatTranspose(in.data(), o, H, W)
                  : orig::flatTranspose(in.data(), o, H, W);
              else
                v ? variant::flatScale(in.data(), bias.data(), o, 1.5f, H, W)
                  : orig::flatScale(in.data(), bias.data(), o, 1.5f, H, W);
            });
          };
          run(false, want.data());
          run(true, got.data());
          failures += compare(kernel == 0 ? "flatTranspose" : "flatScale", H, W, blocks, want, got);
        }
        ++compared;
      }
    }
  }
  std::printf("tile=%d: %d comparisons, %d mismatches\n", TILE, compared, failures);
  return failures != 0;
}
