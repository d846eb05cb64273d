// A parsed translation unit whose Clang AST stays alive, with its
// ProgramModel and the AST nodes behind the model's entries: what the
// rewrite passes work on.
#ifndef CUDAL1_FRONTEND_PARSEDUNIT_H
#define CUDAL1_FRONTEND_PARSEDUNIT_H

#include "cudal1/Frontend/IncludedSources.h"
#include "cudal1/Frontend/ProgramModel.h"

#include "clang/Basic/SourceLocation.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class ASTUnit;
class CallExpr;
class CUDAKernelCallExpr;
class DiagnosticConsumer;
class Expr;
class FunctionDecl;
class Stmt;
} // namespace clang

namespace cudal1 {

/// While one is alive, parses on this thread report no diagnostics: the
/// plugin's private parses must not show in a user's build (a failed parse
/// is still an error, with a one-line reason).
class QuietParses {
public:
  QuietParses();
  ~QuietParses();
  /// Whether parses on this thread are quiet now (a thread started for the
  /// caller's parses takes the caller's setting with it).
  static bool active();
  QuietParses(const QuietParses &) = delete;
  QuietParses &operator=(const QuietParses &) = delete;

private:
  bool saved;
};

class ParsedUnit {
public:
  /// Parses `code` as the contents of `file` (includes resolve next to
  /// `file`) with clang arguments from analysisArgs(). Clang's diagnostics
  /// go to stderr; a unit with errors is an error, and so is an argument
  /// clang rejects (an unknown flag, a bad -std=), which the driver reports.
  /// The .cu files that `code` includes from its own directory are inlined
  /// first (inlineIncludedSources): their kernels are the main file's, and
  /// code() is the inlined text. Should that text not parse where the
  /// original does (a file that another header includes again under
  /// #pragma once), the original is parsed and nothing is inlined.
  static llvm::Expected<std::unique_ptr<ParsedUnit>>
  parse(const std::string &file, const std::string &code, const std::vector<std::string> &args);
  ~ParsedUnit();
  /// How many times parse() has run in this process (all threads): parses
  /// are what a rewrite costs, so tests and timings count them.
  static uint64_t parsesSoFar();

  const ProgramModel &model() const { return programModel; }
  clang::ASTContext &ast();
  /// A location as the model gives positions (a header by its absolute path).
  SourcePos positionOf(clang::SourceLocation loc);
  const std::string &code() const { return source; }
  /// The .cu files code() has inlined, and the .cu includes it left alone
  /// with the reason (IncludedSources.h).
  const std::vector<InlinedSource> &inlinedSources() const { return inlined; }
  const std::vector<NotInlined> &notInlinedSources() const { return notInlined; }

  const clang::FunctionDecl *kernelDecl(unsigned kernel) const { return kernels[kernel]; }
  const clang::CUDAKernelCallExpr *launchExpr(unsigned launch) const { return launches[launch]; }
  /// The launch id of a kernel call, -1 when it is not a launch site.
  int launchId(const clang::CUDAKernelCallExpr *call) const {
    for (size_t i = 0; i < launches.size(); ++i)
      if (launches[i] == call)
        return int(i);
    return -1;
  }
  const clang::Stmt *loopStmt(unsigned kernel, unsigned loop) const { return loops[kernel][loop]; }
  /// The expression of access `access` of a kernel (the subscript, the
  /// dereference or the atomic call; an access that reads and writes is two
  /// model entries of one expression).
  const clang::Expr *accessExpr(unsigned kernel, unsigned access) const {
    return accesses[kernel][access];
  }
  /// The model's access of `kind` made by `e` in a kernel (`e` as
  /// accessExpr gives it, parentheses and implicit casts aside), or null:
  /// how passes go from an AST node to its analysis facts.
  const MemAccess *accessOf(unsigned kernel, const clang::Expr *e, AccessKind kind) const;
  /// Any access of the kernel made by `e`, or null.
  const MemAccess *accessOf(unsigned kernel, const clang::Expr *e) const;
  const clang::Stmt *hostLoopStmt(unsigned loop) const { return hostLoops[loop]; }
  const clang::CallExpr *syncCall(unsigned sync) const { return syncs[sync]; }
  /// The host function (definition) that encloses a launch site.
  const clang::FunctionDecl *launchFunction(unsigned launch) const {
    return launchFunctions[launch];
  }
  const clang::FunctionDecl *hostLoopFunction(unsigned loop) const {
    return hostLoopFunctions[loop];
  }
  const clang::FunctionDecl *syncFunction(unsigned sync) const { return syncFunctions[sync]; }

private:
  ParsedUnit() = default;
  static llvm::Expected<std::unique_ptr<ParsedUnit>>
  parseText(const std::string &file, const std::string &code, const std::vector<std::string> &args);
  /// The unit's diagnostic consumer, which must outlive it (declared first).
  std::unique_ptr<clang::DiagnosticConsumer> diagnostics;
  /// What the unit reads from while it lives (the shared preamble's PCH,
  /// lib/Frontend/SharedPreamble.h); declared before it, so it outlives it.
  std::shared_ptr<const void> parseInputs;
  std::unique_ptr<clang::ASTUnit> unit;
  std::string source;
  std::vector<InlinedSource> inlined;
  std::vector<NotInlined> notInlined;
  ProgramModel programModel;
  std::vector<const clang::FunctionDecl *> kernels;
  std::vector<const clang::CUDAKernelCallExpr *> launches;
  std::vector<std::vector<const clang::Stmt *>> loops;
  std::vector<std::vector<const clang::Expr *>> accesses;
  std::vector<const clang::Stmt *> hostLoops;
  std::vector<const clang::CallExpr *> syncs;
  std::vector<const clang::FunctionDecl *> launchFunctions, hostLoopFunctions, syncFunctions;
  friend class ParsedUnitBuilder;
};

} // namespace cudal1

#endif
