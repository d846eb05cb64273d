// Runs the kernels of tile-shared-flat-kernels.cu and their tiled versions
// on the CPU (emulate-cuda.h) and compares every element of the output, and
// the guard zone after it, bit for bit. Sizes that are not multiples of the
// tile, and grids that are exact, larger than needed (the blocks stride over
// the tiles) or too small (only the original threads' outputs are written).
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

template <typename T> static T valueAt(unsigned i) { return T(hashOf(i) % 2001) / T(1000) - T(1); }

int main() {
  const int sizes[][3] = {{37, 45, 29}, {1, 70, 3}, {50, 9, 64}};
  int failures = 0, compared = 0;
  for (const auto &sz : sizes) {
    int M = sz[0], N = sz[1], K = sz[2];
    const int big = 80 * 80 + 64;
    std::vector<float> A(big), B(big), C0(big);
    std::vector<double> dA(big), dB(big), dC0(big);
    for (int i = 0; i < big; ++i) {
      A[i] = valueAt<float>(i), B[i] = valueAt<float>(i + 77777), C0[i] = valueAt<float>(i + 31337);
      dA[i] = valueAt<double>(i), dB[i] = valueAt<double>(i + 77777);
      dC0[i] = valueAt<double>(i + 31337);
    }
    for (int kernel = 0; kernel < 3; ++kernel) {
      unsigned threads = kernel == 2 ? 64 : 256;
      unsigned exact = (M * N + threads - 1) / threads;
      for (unsigned blocks : {exact, exact + 3, exact > 1 ? exact / 2 : 1u}) {
        std::vector<float> want = C0, got = C0;
        std::vector<double> dWant = dC0, dGot = dC0;
        auto run = [&](bool isVariant, float *C, double *dC) {
          emulateLaunch(dim3(blocks), dim3(threads), [&] {
            if (kernel == 0)
              isVariant ? variant::flatProduct(A.data(), B.data(), C, M, N, K)
                        : orig::flatProduct(A.data(), B.data(), C, M, N, K);
            else if (kernel == 1)
              isVariant ? variant::flatRows(A.data(), B.data(), C, M, N, K, 0.5f)
                        : orig::flatRows(A.data(), B.data(), C, M, N, K, 0.5f);
            else
              isVariant ? variant::flatDouble(dA.data(), dB.data(), dC, M, N, K)
                        : orig::flatDouble(dA.data(), dB.data(), dC, M, N, K);
          });
        };
        run(false, want.data(), dWant.data());
        run(true, got.data(), dGot.data());
        ++compared;
        for (int i = 0; i < big; ++i)
          if (std::memcmp(&want[i], &got[i], sizeof(float)) != 0 ||
              std::memcmp(&dWant[i], &dGot[i], sizeof(double)) != 0) {
            std::printf("MISMATCH kernel %d M=%d N=%d K=%d blocks=%u at %d\n", kernel, M, N, K,
                        blocks, i);
            ++failures;
            break;
          }
      }
    }
  }
  std::printf("%d comparisons, %d mismatches\n", compared, failures);
  return failures != 0;
}
