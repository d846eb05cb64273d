// Runs the kernels of tile-shared-spellings-kernels.cu and their tiled
// versions on the CPU (16 x 16 blocks) and compares every element of the
// output, and the guard zone after it, bit for bit. C starts from data: the
// in-place kernel reads it.
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

int main() {
  const int sizes[][3] = {{37, 45, 29}, {16, 16, 16}, {1, 70, 3}, {50, 9, 64}, {33, 33, 33}};
  int failures = 0, compared = 0;
  for (const auto &sz : sizes) {
    int M = sz[0], N = sz[1], K = sz[2];
    int big = 80 * 80 + 64;
    std::vector<float> A(big), B(big), C0(big);
    for (int i = 0; i < big; ++i) {
      A[i] = float(hashOf(i) % 2001) / 1000.0f - 1.0f;
      B[i] = float(hashOf(i + 77777) % 2001) / 1000.0f - 1.0f;
      C0[i] = float(hashOf(i + 31337) % 2001) / 1000.0f - 1.0f;
    }
    dim3 grid((N + 15) / 16, (M + 15) / 16), block(16, 16);
    for (int kernel = 0; kernel < 2; ++kernel) {
      std::vector<float> want = C0, got = C0;
      auto run = [&](bool isVariant, float *C) {
        if (kernel == 0)
          emulateLaunch(grid, block, [&] {
            isVariant ? variant::inPlace(M, N, K, 1.5f, 0.75f, A.data(), B.data(), C)
                      : orig::inPlace(M, N, K, 1.5f, 0.75f, A.data(), B.data(), C);
          });
        else
          emulateLaunch(grid, block, [&] {
            isVariant ? variant::scaled(A.data(), B.data(), C, M, N, K, 0.5f)
                      : orig::scaled(A.data(), B.data(), C, M, N, K, 0.5f);
          });
      };
      run(false, want.data());
      run(true, got.data());
      ++compared;
      for (int i = 0; i < big; ++i)
        if (std::memcmp(&want[i], &got[i], sizeof(float)) != 0) {
          std::printf("MISMATCH kernel %d M=%d N=%d K=%d at %d: %.9g vs %.9g\n", kernel, M, N, K, i,
                      want[i], got[i]);
          ++failures;
          break;
        }
    }
  }
  std::printf("%d comparisons, %d mismatches\n", compared, failures);
  return failures != 0;
}
