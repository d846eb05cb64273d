// Internal to lib/Apply: running a piece of work in a child process with a
// deadline, so that a slow or crashing derivation costs the optimisation,
// never the build (docs/Plugin.md, "It never breaks a build").
#ifndef CUDAL1_LIB_APPLY_BOUNDED_H
#define CUDAL1_LIB_APPLY_BOUNDED_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <string>

namespace cudal1 {

/// Why a bounded run gave no result.
enum class BoundedFailure { TimedOut, Crashed, Threw, CannotFork };

class BoundedRunError : public llvm::ErrorInfo<BoundedRunError> {
public:
  static char ID;
  BoundedRunError(BoundedFailure kind, std::string message)
      : kind(kind), message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  BoundedFailure kind;
  std::string message;
};

/// Runs `work` in a forked child process and returns the bytes it returned.
/// The child is killed once `budgetMs` have passed; a child that crashes
/// (a signal, an abort) or throws gives a BoundedRunError. The child's
/// fatal-signal handlers are reset first, so that a crash there cannot run
/// the parent's handlers (which would, in clang, delete the parent's
/// half-written output file). The work must not use resources it shares
/// with the parent that a child may not touch (an open SQLite connection).
llvm::Expected<std::string> runBounded(llvm::function_ref<std::string()> work, unsigned budgetMs);

} // namespace cudal1

#endif
