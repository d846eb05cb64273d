// Parses with a precompiled preamble shared by every parse of the same file
// in this process. A parse of a CUDA file is mostly its headers: the CUDA
// runtime wrapper that clang includes implicitly and the file's leading
// #include block took 1.2 of the example's 1.4 s here. The tuner parses the
// same file once per plan step it derives (variants, combinations, the
// policy's effects, the capture, the references): those parses differ after
// the preamble, so one precompiled preamble serves them all (clang's
// PrecompiledPreamble, as clangd uses it: the parse skips the preamble's
// bytes and loads its declarations from the PCH, so every source location
// in the file stays what it was).
#ifndef CUDAL1_FRONTEND_SHARED_PREAMBLE_H
#define CUDAL1_FRONTEND_SHARED_PREAMBLE_H

#include <memory>
#include <string>
#include <vector>

namespace clang {
class ASTUnit;
class DiagnosticConsumer;
} // namespace clang

namespace cudal1 {

struct SharedPreambleParse {
  /// Null when the parse failed (as tooling::buildASTFromCodeWithArgs).
  std::unique_ptr<clang::ASTUnit> unit;
  /// The preamble whose PCH the unit reads for as long as it lives; null
  /// where the parse used none (parsed in full).
  std::shared_ptr<const void> keepAlive;
};

/// Parses `code` as `tooling::buildASTFromCodeWithArgs(code, args, file)`
/// does, with the preamble precompiled once per (file, arguments, preamble
/// text) and reused. A preamble that cannot be built (an error in the
/// file's includes) or reused gives the full parse, whose diagnostics say
/// why. CUDAL1_PREAMBLE=0 in the environment turns the sharing off.
SharedPreambleParse parseWithSharedPreamble(const std::string &code,
                                            const std::vector<std::string> &args,
                                            const std::string &file,
                                            clang::DiagnosticConsumer *diagnostics);

/// Parses that used a shared preamble and preambles built, in this process.
struct SharedPreambleStats {
  unsigned reused = 0, built = 0, failed = 0;
};
SharedPreambleStats sharedPreambleStats();

} // namespace cudal1

#endif
