// A bundle: everything a GPU machine needs to evaluate variants of one
// kernel (docs/formats/bundle.md): a manifest, sources, captures, flags.
#ifndef CUDAL1_EVAL_BUNDLE_H
#define CUDAL1_EVAL_BUNDLE_H

#include "cudal1/Eval/Error.h"
#include "cudal1/Eval/LaunchRemapStep.h"
#include "cudal1/Eval/Verify.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cudal1 {

constexpr int kBundleVersion = 1;

/// A launch configuration that replaces the captured one.
struct LaunchOverride {
  bool hasGrid = false, hasBlock = false, hasShared = false;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t sharedBytes = 0;
};

/// One compilable unit: the original, the reference or a candidate.
struct VariantSpec {
  std::string id;
  std::string source;   ///< path relative to the bundle directory
  std::string entry;    ///< kernel function name in the compiled module
  std::string compiler; ///< "auto", "nvrtc" or "nvcc"; empty: the bundle's
  std::vector<std::string> extraFlags;
  bool fastMath = false; ///< the plan has opt-in fast-math rewrites
  LaunchOverride launch;
  /// A launch remap (cudal1/Eval/LaunchRemap.h) applied to each captured
  /// launch on its own: a kernel launched with several shapes keeps one
  /// variant line. Exclusive with launch's grid and block.
  std::vector<LaunchRemapStep> remap;
};

struct Bundle {
  std::string dir;       ///< directory the manifest was read from
  std::string kernelKey; ///< selects launches in the captures
  std::string entry;     ///< default kernel function name
  std::vector<ArgType> args;
  std::vector<std::string> captures; ///< relative paths
  std::string arch = "sm_90";
  std::vector<std::string> flags; ///< the user's compile flags
  std::string compiler = "auto";
  Tolerance tolerance;
  VariantSpec original;
  bool hasReference = false;
  VariantSpec reference; ///< the original promoted to double
  std::vector<VariantSpec> variants;

  std::string path(const std::string &relative) const { return dir + "/" + relative; }
};

/// How a bundle's candidates are verified: "double-reference" with a
/// reference, "fallback-no-reference" without.
std::string verifyModeOf(const Bundle &bundle);

/// Parses manifest text; `dir` is recorded, `name` appears in messages.
Expected<Bundle> parseManifest(const std::string &text, const std::string &dir,
                               const std::string &name);
/// Reads DIR/manifest.txt and checks that the files it names exist.
Expected<Bundle> readBundle(const std::string &dir);
std::string formatManifest(const Bundle &bundle);
/// Writes DIR/manifest.txt (sources and captures are the caller's).
Status writeManifest(const Bundle &bundle, const std::string &dir);

/// Reads the "[ID] FILE" that starts a variant line at words[i] and moves i
/// past it: ids are letters, digits, '_', '-' and '.' (they name files), the
/// file a relative path that stays inside the bundle.
Status parseVariantHead(const std::vector<std::string> &words, size_t &i, bool hasId,
                        std::string &id, std::string &source, const std::string &where);
/// A word for a manifest line, quoted when it holds blanks.
std::string quoteIfNeeded(const std::string &word);
/// Splits a line into words; "double quotes" group words.
std::vector<std::string> splitWords(const std::string &line);

} // namespace cudal1

#endif
