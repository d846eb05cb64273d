// Runs the host loops of persistent-kernels.cu on the CPU: the original
// (ORIG_KERNELS, each launch an emulated call) and persistent's rewrite in
// one form (VARIANT_KERNELS: the persistent kernels launched through the
// inserted helper, Inputs/persistent-emulate.h), on the same inputs; every
// element of every buffer the loops write must match bit for bit. FORM
// names the form the variant was derived with; the launches through the
// helper and the largest one are printed.
#include "persistent-emulate.h"

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

static std::vector<float> filled(size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = lo + (hi - lo) * float(hashOf(unsigned(i) * 2654435761u + seed) % 10007) / 10006.0f;
  return v;
}

static int failures = 0, compared = 0;

static void compare(const char *what, const std::vector<float> &want,
                    const std::vector<float> &got) {
  ++compared;
  for (size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&want[i], &got[i], sizeof(float)) != 0) {
      std::printf("MISMATCH %s at %zu: %.9g vs %.9g\n", what, i, double(want[i]), double(got[i]));
      ++failures;
      return;
    }
}

int main() {
  unsigned launchesBefore = emulatedLaunches;
  {
    const int H = 150, steps = 6;
    std::vector<float> W = filled(size_t(H) * H, 1, -0.05f, 0.05f), b = filled(H, 2),
                       x = filled(size_t(steps) * H, 3);
    std::vector<float> hA = filled(H, 4), hB(H, 0.0f), hA2 = hA, hB2 = hB;
    orig::recurrence(W.data(), b.data(), x.data(), hA.data(), hB.data(), H, steps);
    variant::recurrence(W.data(), b.data(), x.data(), hA2.data(), hB2.data(), H, steps);
    compare("recurrence hA", hA, hA2);
    compare("recurrence hB", hB, hB2);
  }
  {
    const int n = 1100, steps = 7;
    std::vector<float> in = filled(n, 5), out(n, 0.0f), out2(n, 0.0f);
    orig::relax(in.data(), out.data(), n, steps, 0.125f);
    variant::relax(in.data(), out2.data(), n, steps, 0.125f);
    compare("relax", out, out2);
  }
  {
    const int n = 600, steps = 5;
    std::vector<float> x = filled(n, 6), y = filled(n, 7), x2 = x, y2 = y;
    orig::chain(x.data(), y.data(), n, steps);
    variant::chain(x2.data(), y2.data(), n, steps);
    compare("chain x", x, x2);
    compare("chain y", y, y2);
  }
  {
    const int n = 200, steps = 6;
    std::vector<float> w = filled(size_t(7) * n, 8, -0.02f, 0.02f), g(3 * n, 0.0f),
                       h = filled(n, 9), g2 = g, h2 = h;
    orig::gru(w.data(), g.data(), h.data(), n, steps);
    variant::gru(w.data(), g2.data(), h2.data(), n, steps);
    compare("gru g", g, g2);
    compare("gru h", h, h2);
  }
  {
    const int rows = 20, cols = 30, steps = 6;
    std::vector<float> u = filled(size_t(rows) * cols, 10), v = u, u2 = u, v2 = u;
    orig::heat(u.data(), v.data(), rows, cols, steps);
    variant::heat(u2.data(), v2.data(), rows, cols, steps);
    compare("heat u", u, u2);
    compare("heat v", v, v2);
  }
  std::printf("form=%s: %d comparisons, %d mismatches, %u persistent launches, at most %u "
              "threads at once\n",
              FORM, compared, failures, emulatedLaunches - launchesBefore, emulatedMaxThreads);
  return failures != 0;
}
