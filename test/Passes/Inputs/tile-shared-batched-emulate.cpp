// Runs bmm of tile-shared-batched-kernels.cu and its tiled version (block
// 16 x 16/RB, the original grid with its batch along z) on the CPU and
// compares every element of the output, and the guard zone after it, bit
// for bit.
#include "emulate-cuda.h"

#include <cstdio>
#include <cstring>

namespace orig {
#include ORIG_KERNELS
}
namespace variant {
#include VARIANT_KERNELS
}

static float valueAt(unsigned i) {
  i ^= i >> 16;
  i *= 0x7feb352dU;
  i ^= i >> 15;
  i *= 0x846ca68bU;
  return float((i ^ (i >> 16)) % 2001) / 1000.0f - 1.0f;
}

int main() {
  int failures = 0, compared = 0;
  for (int n : {19, 16, 5}) {
    const int batch = 3, big = batch * n * n + 64;
    std::vector<float> A(big), B(big), C0(big);
    for (int i = 0; i < big; ++i)
      A[i] = valueAt(i), B[i] = valueAt(i + 77777), C0[i] = valueAt(i + 31337);
    dim3 grid((n + 15) / 16, (n + 15) / 16, batch);
    std::vector<float> want = C0, got = C0;
    emulateLaunch(grid, dim3(16, 16), [&] { orig::bmm(A.data(), B.data(), want.data(), n); });
    emulateLaunch(grid, dim3(16, 16 / RB), [&] { variant::bmm(A.data(), B.data(), got.data(), n); });
    ++compared;
    for (int i = 0; i < big; ++i)
      if (std::memcmp(&want[i], &got[i], sizeof(float)) != 0) {
        std::printf("MISMATCH n=%d at %d: %.9g vs %.9g\n", n, i, want[i], got[i]);
        ++failures;
        break;
      }
  }
  std::printf("%d comparisons, %d mismatches\n", compared, failures);
  return failures != 0;
}
