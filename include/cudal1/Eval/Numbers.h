// Numbers read from text that a user, a file or another machine wrote:
// whole-string, locale-free, never throwing, range-checked. Header-only and
// std-only, since the GPU-only build (no LLVM) reads bundles and results too.
#ifndef CUDAL1_EVAL_NUMBERS_H
#define CUDAL1_EVAL_NUMBERS_H

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

namespace cudal1 {

/// A decimal integer in [lo, hi] spelling the whole of `s` (no sign for
/// unsigned types, no spaces, no "0x"); false otherwise, `out` untouched.
template <typename T> bool parseInteger(const std::string &s, T lo, T hi, T &out) {
  T v{};
  const char *end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v, 10);
  if (s.empty() || ec != std::errc() || p != end || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

/// A finite number spelling the whole of `s` ("1.5", "2e-3"; not "inf",
/// "nan", "0x1p3" or "") in [lo, hi]; false otherwise, `out` untouched.
inline bool parseFinite(const std::string &s, double lo, double hi, double &out) {
  double v = 0;
  const char *end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v, std::chars_format::general);
  if (s.empty() || ec != std::errc() || p != end || !std::isfinite(v) || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

} // namespace cudal1

#endif
