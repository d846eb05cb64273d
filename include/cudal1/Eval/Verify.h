// The tolerance rule that decides whether a variant's output is correct
// (DESIGN.md, "Evaluation"). Pure host code, so CPU tests cover it.
#ifndef CUDAL1_EVAL_VERIFY_H
#define CUDAL1_EVAL_VERIFY_H

#include "cudal1/Eval/Error.h"

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace cudal1 {

enum class ElemType { F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bytes };

/// A kernel argument's type as the bundle declares it: "f32*" (pointer to
/// float), "f32*w" (pointer to float that the kernel only writes: poisoned
/// before each run), "i32" (scalar), "b8" (opaque 8-byte scalar), "b*"
/// (pointer to bytes compared exactly).
struct ArgType {
  ElemType elem = ElemType::Bytes;
  bool pointer = false;
  bool writeOnly = false;
  size_t scalarBytes = 0; ///< for an opaque scalar "bN"
};

Expected<ArgType> parseArgType(const std::string &text);
std::string formatArgType(const ArgType &t);
size_t elemSize(ElemType t);
bool isFloat(ElemType t);

/// Knobs of the rule. A float element passes when
///   |v - r| <= k * max(|o - r|, Q * (|r| + m)) + rel * |r| + abs * max|r|
/// where r is the double reference, o the original's recorded output, v the
/// variant's, and Q * (|r| + m) the original's error pooled over the buffer
/// (PooledError); and the buffer passes only when also
///   rms(v - r) <= k * rms(o - r) + rel * m + abs * max|r|.
/// Without a reference, |v - o| <= fbRel(n) * |o| + abs * max|o| with
/// fbRel(n) = eps * (32 + 4 * sqrt(n)) for reduction length n.
struct Tolerance {
  double k = 4;
  double rel32 = 3.8e-6; ///< 32 float ulps
  double abs32 = 1e-6;
  double rel64 = 7e-15;
  double abs64 = 1e-14;
  double fastMathScale = 32; ///< rel/abs multiplier (and k * 4) for fast-math
  int reductionLength = 1;
};

/// The original's error over a whole buffer (or over one family of printed
/// numbers), as a scale per element. An element's own |o - r| is a single
/// draw of its roundoff: where a reassociation (a warp's partial sums, an
/// unrolled dot product) makes the variant's error an independent draw of
/// the same size, comparing the two element by element fails about one
/// element in six at k = 4 (the ratio of two such draws is heavy-tailed),
/// and every long cancelling sum was rejected on the GPU. Pooled, the scale
/// is Q * (|r| + m): Q the 99th percentile over the elements of
/// |o - r| / (|r| + m), m the RMS of the reference, so that errors that
/// scale with |r| (element-wise maths) and errors of the same size on every
/// element (sums of similar terms) are both covered.
struct PooledError {
  double scale = 0;     ///< Q
  double magnitude = 0; ///< m
  double at(double r) const { return scale * (std::fabs(r) + magnitude); }
};

/// Pools the original's errors |o_i - r_i| given with their references r_i
/// (finite pairs only; an empty input pools to 0).
PooledError poolError(const std::vector<double> &originalErrors,
                      const std::vector<double> &references);

/// The buffer-level half of the rule, the same at both levels: the
/// variant's RMS error against the reference within k times the original's
/// plus a floor. Fed one element (or printed number) at a time.
struct RmsErrors {
  double sumVariant = 0, sumOriginal = 0;
  size_t count = 0;
  void add(double variantError, double originalError) {
    sumVariant += variantError * variantError;
    sumOriginal += originalError * originalError;
    ++count;
  }
  double variant() const { return count ? std::sqrt(sumVariant / double(count)) : 0; }
  double original() const { return count ? std::sqrt(sumOriginal / double(count)) : 0; }
  double limit(double k, double floor) const { return k * original() + floor; }
};

struct Mismatch {
  std::string buffer; ///< e.g. "arg 2"
  size_t index = 0;   ///< element index
  std::string expected, got, allowed;
};

struct VerifyResult {
  bool pass = true;
  std::string mode; ///< "double-reference" or "fallback (...)"
  size_t badElements = 0;
  std::vector<Mismatch> mismatches; ///< the first few
  std::vector<std::string> notes;   ///< out-of-bounds writes; per float buffer
                                    ///< with bad elements, how many of them
                                    ///< still hold the 0xFF poison
};

struct CompareBaseline;

struct CompareInput {
  std::string buffer;
  ElemType elem = ElemType::Bytes;
  const void *variant = nullptr;     ///< the variant's output
  const void *original = nullptr;    ///< the original's recorded output
  const double *reference = nullptr; ///< promoted run, float buffers only
  size_t count = 0;                  ///< elements
  bool fastMath = false;
  /// What the original and the reference alone decide (compareBaseline),
  /// kept by a worker across candidates and runs of one launch; null: it
  /// is derived here, every call.
  const CompareBaseline *baseline = nullptr;
};

/// The part of a buffer's comparison that depends on the original's output
/// and the reference alone, the same for every candidate and run of one
/// launch. Computing it once per launch and buffer instead of per check
/// cut the verification of 4M-element buffers (two passes, a copy and a
/// selection each time) to one pass.
struct CompareBaseline {
  double maxRef = 0; ///< the largest finite |reference|
  PooledError pool;  ///< the original's pooled error against it
  /// The original's own output passes the rule (without fast-math). Then
  /// an output bitwise equal to it passes too (every allowance is at least
  /// the original's error), and is accepted after a memcmp.
  bool originalPasses = false;
};
CompareBaseline compareBaseline(const CompareInput &in, const Tolerance &tol);

/// Compares one buffer and accumulates into `result` (keeps at most
/// maxMismatches entries but counts all bad elements).
void compareBuffer(const CompareInput &in, const Tolerance &tol, VerifyResult &result,
                   size_t maxMismatches = 8);

std::string formatDouble(double v);

} // namespace cudal1

#endif
