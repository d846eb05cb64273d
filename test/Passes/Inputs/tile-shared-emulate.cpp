// Runs the original kernels of tile-shared-kernels.cu and their rewritten
// versions (ORIG_KERNELS / VARIANT_KERNELS: the cut-out kernel text) on the
// CPU, with the variant's block of 16 x 16/RB threads and the original grid,
// and compares every output element bit for bit, and the guard zone after C.
#include "emulate-cuda.h"

#include <cmath>
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
    std::vector<float> A(big), B(big), bias(8);
    for (int i = 0; i < big; ++i) {
      A[i] = float(hashOf(i) % 2001) / 1000.0f - 1.0f;
      B[i] = float(hashOf(i + 77777) % 2001) / 1000.0f - 1.0f;
    }
    for (int i = 0; i < 8; ++i)
      bias[i] = 0.25f * i - 1.0f;
    dim3 grid((N + 15) / 16, (M + 15) / 16);
    dim3 block(16, 16), vblock(16, 16 / RB);
    for (int kernel = 0; kernel < 3; ++kernel) {
      std::vector<float> want(big, 12345.0f), got(big, 12345.0f);
      auto run = [&](bool isVariant, float *C) {
        dim3 b = isVariant ? vblock : block;
        if (kernel == 0)
          emulateLaunch(grid, b, [&] {
            isVariant ? variant::square(A.data(), B.data(), C, N) : orig::square(A.data(), B.data(), C, N);
          });
        else if (kernel == 1)
          emulateLaunch(grid, b, [&] {
            isVariant ? variant::rect(A.data(), B.data(), bias.data(), C, M, N, K)
                      : orig::rect(A.data(), B.data(), bias.data(), C, M, N, K);
          });
        else
          emulateLaunch(grid, b, [&] {
            isVariant ? variant::direct(A.data(), B.data(), C, M, N, K)
                      : orig::direct(A.data(), B.data(), C, M, N, K);
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
  std::printf("rb=%d: %d comparisons, %d mismatches\n", RB, compared, failures);
  return failures != 0;
}
