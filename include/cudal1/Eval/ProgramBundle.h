// A program bundle: what a GPU machine needs to evaluate variants of a whole
// program (docs/formats/program-bundle.md). Program-level rewrites (graphs,
// streams, fusion, dropped synchronizations) and launch-level ones change
// host code, which kernel replay cannot judge: the variant program is built
// with the user's command, run against the original in interleaved rounds,
// and its printed output compared.
#ifndef CUDAL1_EVAL_PROGRAMBUNDLE_H
#define CUDAL1_EVAL_PROGRAMBUNDLE_H

#include "cudal1/Eval/Error.h"

#include <cstddef>
#include <string>
#include <vector>

namespace cudal1 {

constexpr int kProgramBundleVersion = 1;

struct ProgramVariant {
  std::string id;
  std::string source;    ///< relative to the bundle directory
  bool fastMath = false; ///< compared with the looser tolerance
  /// Libraries its build links in addition (`-l<name>` appended to the
  /// build command), e.g. cublas for the library pass.
  std::vector<std::string> links;
  /// variantHash(plan text, source) as the bundle's writer computed it
  /// (`hash=` in the manifest); empty in bundles written before issue 19.
  std::string hash;
};

struct ProgramBundle {
  std::string dir;
  /// The user's compile command; {src} and {exe} are replaced.
  std::vector<std::string> build;
  /// The command that runs a built program; {exe} is replaced.
  std::vector<std::string> run;
  /// ECMAScript regex whose first group is the program's own time of its GPU
  /// region in milliseconds (e.g. "^gpu_ms=(\\S+)"). Empty: the wall time of
  /// the whole process is timed instead (launch and context set-up included).
  std::string timeRegex;
  /// Output lines left out of the comparison (timings, dates, addresses);
  /// lines matching timeRegex are always left out.
  std::string ignoreRegex;
  double rel = 1e-4;          ///< relative tolerance on printed numbers
  double abs = 0;             ///< absolute tolerance on printed numbers
  double fastMathScale = 100; ///< rel and abs times this for fast-math plans
  ProgramVariant original;
  /// The reference program (docs/Reference.md): the original with its
  /// promotable kernels replaced by their double references; relative to
  /// the bundle, "" when there is none. Variants are judged against what it
  /// prints (compareWithReference) instead of the original's output.
  std::string reference;
  std::vector<ProgramVariant> variants;
  std::string path(const std::string &relative) const { return dir + "/" + relative; }
};

/// What binds a result to what it measured: 32 lowercase hex digits, the
/// FNV-1a 64 of the exact plan text ("" for the original), then that of the
/// variant's source bytes. A guard against stale or mixed-up results, not
/// against someone who can write the bundle (FNV is not a cryptographic hash).
std::string variantHash(const std::string &planText, const std::string &source);
/// True when `hash` is 32 lowercase hex digits.
bool isVariantHash(const std::string &hash);
/// The hash a result carries: the plan half of the manifest's `hash` and the
/// source half of the bytes that were built; "" when the manifest has none.
std::string measuredHash(const std::string &manifestHash, const std::string &source);

/// Bounds on the time and ignore regexes (std::regex compiles and matches
/// recursively and trusts its input; see checkProgramRegex).
constexpr size_t kMaxRegexLength = 1024;
constexpr int kMaxRegexDepth = 16;
constexpr unsigned kMaxRegexRepeat = 1000;
/// Success when `re` is an ECMAScript regex within those bounds (length,
/// nesting, repetition counts, back-references \1 to \9) that std::regex
/// compiles; otherwise an error "WHERE: ...". Use it on every regex a user
/// or a file gives before handing it to std::regex.
Status checkProgramRegex(const std::string &re, const std::string &where);

/// True when manifest text starts with the program-bundle header.
bool isProgramManifest(const std::string &text);
Expected<ProgramBundle> parseProgramManifest(const std::string &text, const std::string &dir,
                                             const std::string &name);
/// Reads DIR/manifest.txt and checks that the sources it names exist.
Expected<ProgramBundle> readProgramBundle(const std::string &dir);
std::string formatProgramManifest(const ProgramBundle &bundle);
Status writeProgramManifest(const ProgramBundle &bundle, const std::string &dir);

} // namespace cudal1

#endif
