// The tolerance rule: variants are judged against a double-precision run of
// the original, relative to the original's own error.
#include "cudal1/Eval/Verify.h"
#include "cudal1/Eval/Numbers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace cudal1 {

namespace {
struct TypeName {
  const char *name;
  ElemType type;
};
const TypeName kTypes[] = {{"f32", ElemType::F32}, {"f64", ElemType::F64}, {"i8", ElemType::I8},
                           {"i16", ElemType::I16}, {"i32", ElemType::I32}, {"i64", ElemType::I64},
                           {"u8", ElemType::U8},   {"u16", ElemType::U16}, {"u32", ElemType::U32},
                           {"u64", ElemType::U64}, {"b", ElemType::Bytes}};

double loadAsDouble(ElemType t, const void *p, size_t i) {
  switch (t) {
  case ElemType::F32: {
    float v;
    std::memcpy(&v, static_cast<const char *>(p) + 4 * i, 4);
    return v;
  }
  case ElemType::F64: {
    double v;
    std::memcpy(&v, static_cast<const char *>(p) + 8 * i, 8);
    return v;
  }
  default:
    return 0;
  }
}

std::string formatInt(ElemType t, const void *p, size_t i) {
  const char *b = static_cast<const char *>(p);
  char buf[64];
  switch (t) {
  case ElemType::I8:
    std::snprintf(buf, sizeof buf, "%d", int(int8_t(b[i])));
    break;
  case ElemType::U8:
  case ElemType::Bytes:
    std::snprintf(buf, sizeof buf, "0x%02x", unsigned(uint8_t(b[i])));
    break;
  case ElemType::I16: {
    int16_t v;
    std::memcpy(&v, b + 2 * i, 2);
    std::snprintf(buf, sizeof buf, "%d", int(v));
    break;
  }
  case ElemType::U16: {
    uint16_t v;
    std::memcpy(&v, b + 2 * i, 2);
    std::snprintf(buf, sizeof buf, "%u", unsigned(v));
    break;
  }
  case ElemType::I32: {
    int32_t v;
    std::memcpy(&v, b + 4 * i, 4);
    std::snprintf(buf, sizeof buf, "%d", v);
    break;
  }
  case ElemType::U32: {
    uint32_t v;
    std::memcpy(&v, b + 4 * i, 4);
    std::snprintf(buf, sizeof buf, "%u", v);
    break;
  }
  case ElemType::I64: {
    int64_t v;
    std::memcpy(&v, b + 8 * i, 8);
    std::snprintf(buf, sizeof buf, "%lld", (long long)v);
    break;
  }
  case ElemType::U64: {
    uint64_t v;
    std::memcpy(&v, b + 8 * i, 8);
    std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    break;
  }
  default:
    buf[0] = 0;
  }
  return buf;
}

bool sameClass(double a, double b) {
  if (std::isnan(a))
    return std::isnan(b);
  if (std::isinf(a))
    return a == b;
  return std::isfinite(b);
}
} // namespace

Expected<ArgType> parseArgType(const std::string &text) {
  ArgType t;
  std::string s = text;
  if (!s.empty() && s.back() == 'w') {
    if (s.size() < 2 || s[s.size() - 2] != '*')
      return makeError("argument type '", text, "': 'w' only follows '*'");
    t.writeOnly = true;
    s.pop_back();
  }
  if (!s.empty() && s.back() == '*') {
    t.pointer = true;
    s.pop_back();
  }
  if (!t.pointer && s.size() > 1 && s[0] == 'b') {
    unsigned n = 0;
    if (!parseInteger(s.substr(1), 1u, 4096u, n))
      return makeError("argument type '", text, "': bad opaque size");
    t.elem = ElemType::Bytes;
    t.scalarBytes = n;
    return t;
  }
  for (const TypeName &tn : kTypes)
    if (s == tn.name) {
      t.elem = tn.type;
      if (t.elem == ElemType::Bytes && !t.pointer)
        return makeError("argument type '", text, "': an opaque scalar needs a size, e.g. b16");
      return t;
    }
  return makeError("unknown argument type '", text,
                   "' (want f32, f64, i8..i64, u8..u64, bN, optionally with "
                   "* or *w)");
}

std::string formatArgType(const ArgType &t) {
  std::string s;
  if (!t.pointer && t.elem == ElemType::Bytes)
    s = "b" + std::to_string(t.scalarBytes);
  else
    for (const TypeName &tn : kTypes)
      if (tn.type == t.elem)
        s = tn.name;
  if (t.pointer)
    s += "*";
  if (t.writeOnly)
    s += "w";
  return s;
}

size_t elemSize(ElemType t) {
  switch (t) {
  case ElemType::F64:
  case ElemType::I64:
  case ElemType::U64:
    return 8;
  case ElemType::F32:
  case ElemType::I32:
  case ElemType::U32:
    return 4;
  case ElemType::I16:
  case ElemType::U16:
    return 2;
  default:
    return 1;
  }
}

bool isFloat(ElemType t) { return t == ElemType::F32 || t == ElemType::F64; }

std::string formatDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

PooledError poolError(const std::vector<double> &originalErrors,
                      const std::vector<double> &references) {
  PooledError p;
  size_t n = std::min(originalErrors.size(), references.size());
  if (n == 0)
    return p;
  double sumSq = 0;
  for (size_t i = 0; i < n; ++i)
    sumSq += references[i] * references[i];
  p.magnitude = std::sqrt(sumSq / double(n));
  std::vector<double> normalized;
  normalized.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    double d = std::fabs(references[i]) + p.magnitude;
    normalized.push_back(d > 0 ? originalErrors[i] / d : 0.0);
  }
  // The 99th percentile, not the largest: one badly rounded element of the
  // original does not loosen the whole buffer. Up to 100 elements it is
  // the largest.
  size_t at = size_t(std::ceil(0.99 * double(n - 1)));
  std::nth_element(normalized.begin(), normalized.begin() + at, normalized.end());
  p.scale = normalized[at];
  return p;
}

namespace {
/// maxRef and the pooled error of a float buffer with a reference.
void referenceStats(const CompareInput &in, double &maxRef, PooledError &pool) {
  maxRef = 0;
  std::vector<double> errs, refs;
  errs.reserve(in.count);
  refs.reserve(in.count);
  for (size_t i = 0; i < in.count; ++i) {
    double r = in.reference[i];
    if (!std::isfinite(r))
      continue;
    maxRef = std::max(maxRef, std::fabs(r));
    double errO = std::fabs(loadAsDouble(in.elem, in.original, i) - r);
    if (std::isfinite(errO)) {
      errs.push_back(errO);
      refs.push_back(r);
    }
  }
  pool = poolError(errs, refs);
}
} // namespace

CompareBaseline compareBaseline(const CompareInput &in, const Tolerance &tol) {
  CompareBaseline b;
  if (in.reference && isFloat(in.elem))
    referenceStats(in, b.maxRef, b.pool);
  CompareInput self = in;
  self.variant = in.original;
  self.fastMath = false;
  self.baseline = &b; // originalPasses is false yet: no shortcut
  VerifyResult r;
  compareBuffer(self, tol, r, 0);
  b.originalPasses = r.pass;
  return b;
}

void compareBuffer(const CompareInput &in, const Tolerance &tol, VerifyResult &result,
                   size_t maxMismatches) {
  if (in.baseline && in.baseline->originalPasses &&
      std::memcmp(in.variant, in.original, in.count * elemSize(in.elem)) == 0)
    return; // the original's own output, which passes
  auto report = [&](size_t i, std::string expected, std::string got, std::string allowed) {
    result.pass = false;
    ++result.badElements;
    if (result.mismatches.size() < maxMismatches)
      result.mismatches.push_back(
          {in.buffer, i, std::move(expected), std::move(got), std::move(allowed)});
  };

  // 1. Integers and bytes: exact against the original's recorded output.
  if (!isFloat(in.elem)) {
    size_t es = elemSize(in.elem);
    const char *v = static_cast<const char *>(in.variant);
    const char *o = static_cast<const char *>(in.original);
    for (size_t i = 0; i < in.count; ++i)
      if (std::memcmp(v + i * es, o + i * es, es) != 0)
        report(i, formatInt(in.elem, o, i), formatInt(in.elem, v, i), "exact");
    return;
  }

  // Says how many of this buffer's bad elements still hold the poison
  // pattern (all bytes 0xFF: a NaN the kernel never overwrote), so that "not
  // written" and "written wrong" can be told apart from a results file.
  size_t badBefore = result.badElements, unwritten = 0;
  const unsigned char *vbytes = static_cast<const unsigned char *>(in.variant);
  auto countUnwritten = [&](size_t i) {
    size_t es = elemSize(in.elem);
    for (size_t b = 0; b < es; ++b)
      if (vbytes[i * es + b] != 0xFF)
        return;
    ++unwritten;
  };
  auto summarize = [&] {
    size_t bad = result.badElements - badBefore;
    if (bad == 0)
      return;
    result.notes.push_back(in.buffer + ": " + std::to_string(bad) + " of " +
                           std::to_string(in.count) + " elements bad, " +
                           std::to_string(unwritten) + " of them never written (0xFF poison)");
  };
  auto reportFloat = [&](size_t i, std::string expected, std::string got, std::string allowed) {
    countUnwritten(i);
    report(i, std::move(expected), std::move(got), std::move(allowed));
  };

  bool is32 = in.elem == ElemType::F32;
  double scale = in.fastMath ? tol.fastMathScale : 1.0;
  double k = in.fastMath ? tol.k * 4 : tol.k;
  double rel = (is32 ? tol.rel32 : tol.rel64) * scale;
  double abs = (is32 ? tol.abs32 : tol.abs64) * scale;

  // 2. Float with a double reference: each element against the original's
  // error there or pooled over the buffer, then the buffer's RMS error.
  if (in.reference) {
    double maxRef = 0;
    PooledError pool;
    if (in.baseline) {
      maxRef = in.baseline->maxRef;
      pool = in.baseline->pool;
    } else {
      referenceStats(in, maxRef, pool);
    }
    RmsErrors rms;
    for (size_t i = 0; i < in.count; ++i) {
      double r = in.reference[i];
      double v = loadAsDouble(in.elem, in.variant, i);
      double o = loadAsDouble(in.elem, in.original, i);
      if (!std::isfinite(r) || !std::isfinite(v)) {
        if (!sameClass(r, v))
          reportFloat(i, formatDouble(r) + " (reference)", formatDouble(v),
                      "same class (finite/NaN/Inf) as the reference");
        continue;
      }
      double errO = std::fabs(o - r);
      if (!std::isfinite(errO))
        continue; // the original itself is not finite here: any finite value
      double errV = std::fabs(v - r);
      rms.add(errV, errO);
      double allowed = k * std::max(errO, pool.at(r)) + rel * std::fabs(r) + abs * maxRef;
      if (errV > allowed)
        reportFloat(i, formatDouble(r) + " (reference)", formatDouble(v),
                    "+-" + formatDouble(allowed));
    }
    // A variant worse than the original everywhere, each element inside
    // the pooled allowance, is still worse: its RMS error says so (said only
    // where no element failed already; one element is the test above again).
    double limit = rms.limit(k, rel * pool.magnitude + abs * maxRef);
    if (rms.count > 1 && result.badElements == badBefore && rms.variant() > limit) {
      result.pass = false;
      result.notes.push_back(in.buffer + ": RMS error " + formatDouble(rms.variant()) +
                             " against the reference, allowed " + formatDouble(limit) + " (" +
                             formatDouble(k) + " x the original's " + formatDouble(rms.original()) +
                             " plus the floor)");
    }
    summarize();
    return;
  }

  // 3. Float without a reference: against the original, scaled by the
  // reduction length.
  double eps = is32 ? 1.1920929e-7 : 2.220446049250313e-16;
  double fbRel = eps * (32.0 + 4.0 * std::sqrt(double(std::max(1, tol.reductionLength)))) * scale;
  double maxO = 0;
  for (size_t i = 0; i < in.count; ++i) {
    double o = loadAsDouble(in.elem, in.original, i);
    if (std::isfinite(o))
      maxO = std::max(maxO, std::fabs(o));
  }
  for (size_t i = 0; i < in.count; ++i) {
    double o = loadAsDouble(in.elem, in.original, i);
    double v = loadAsDouble(in.elem, in.variant, i);
    if (!std::isfinite(o) || !std::isfinite(v)) {
      if (!sameClass(o, v))
        reportFloat(i, formatDouble(o) + " (original)", formatDouble(v),
                    "same class as the original");
      continue;
    }
    double allowed = fbRel * std::fabs(o) + abs * maxO;
    if (std::fabs(v - o) > allowed)
      reportFloat(i, formatDouble(o) + " (original)", formatDouble(v),
                  "+-" + formatDouble(allowed));
  }
  summarize();
}

} // namespace cudal1
