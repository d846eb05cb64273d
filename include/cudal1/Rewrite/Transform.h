// The interface of a rewrite pass (passes/), the context it works in, and
// the registry that passes/AllPasses.cpp fills.
#ifndef CUDAL1_REWRITE_TRANSFORM_H
#define CUDAL1_REWRITE_TRANSFORM_H

#include "cudal1/Analysis/KernelAnalysis.h"
#include "cudal1/Eval/LaunchRemapStep.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/Rewrite/Plan.h"

#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace clang {
class FunctionDecl;
class VarDecl;
class Rewriter;
} // namespace clang
namespace mlir {
class MLIRContext;
}

namespace cudal1 {

/// Where one application of a transform lands: a kernel, and for
/// launch-level transforms one of its launch sites; for host-level ones a
/// host loop or a host synchronization (kernel is then unused).
struct Target {
  unsigned kernel = 0;
  int launch = -1;
  int loop = -1; ///< Level::HostLoop: into ProgramModel::hostLoops
  int sync = -1; ///< Level::HostSync: into ProgramModel::syncs
  int copy = -1; ///< Level::HostCopy: into hostCopies()
};

/// What a pass sees: the parsed unit, the analyses, and the one Rewriter the
/// driver owns (edits go through it only).
class TransformContext {
public:
  TransformContext(ParsedUnit &unit, clang::Rewriter &rewriter, mlir::MLIRContext &mlir);
  ParsedUnit &unit;
  clang::Rewriter &rewriter;
  mlir::MLIRContext &mlir;

  const ProgramModel &model() const { return unit.model(); }
  const KernelAnalysis &analysis(unsigned kernel);
  /// Launch ids of a kernel's launch sites.
  const std::vector<unsigned> &launchesOf(unsigned kernel) const;
  /// Inserts `text` once per `key` before the definition of `kernel` (for
  /// helper functions a rewrite calls).
  void insertHelperBefore(unsigned kernel, const std::string &key, const std::string &text);
  /// The same before the top-level declaration that contains host function
  /// `fd` (so the helper sits at namespace scope).
  void insertHelperBefore(const clang::FunctionDecl *fd, const std::string &key,
                          const std::string &text);

  /// Gives the statement in the file range `r` braces once the step's edits
  /// are done (finishEdits), however many targets ask: `{ ` before
  /// everything inserted at its start, ` }` after everything inserted at its
  /// end (HostCode.h, makeRoomAround).
  void braceStatement(clang::CharSourceRange r);
  /// What the edits of a step leave to its end (braces); the plan driver
  /// calls it once after the last target's apply.
  void finishEdits();

  /// Answers that each walk the whole file but are asked once per kernel,
  /// launch or copy, computed once per context (--list-transforms stays
  /// linear in the number of kernels): filled by referencedOutsideLaunches
  /// (RewriteUtils) and freshAllocations (HostCode). The AST they describe
  /// does not change while the context lives (edits are text).
  std::optional<std::map<const clang::FunctionDecl *, std::string>> outsideReferences;
  std::map<const clang::FunctionDecl *, std::set<const clang::VarDecl *>> freshAllocationsOf;
  /// launchConflict's answers (HostCode), by launches, fresh allocations
  /// and sameThreadOk: fuse's chains ask each pair of up to 8 launches again
  /// from every launch of the run (61% of --list-transforms on 300 kernels).
  std::map<std::tuple<unsigned, unsigned, bool, std::vector<const clang::VarDecl *>>, std::string>
      launchConflictOf;

private:
  void insertAtLineStart(clang::SourceLocation at, const std::string &text);
  std::vector<std::unique_ptr<KernelAnalysis>> analyses;
  std::vector<std::string> helpersInserted;
  std::vector<clang::CharSourceRange> toBrace;
  mutable std::optional<std::vector<std::vector<unsigned>>> launchesByKernel;
};

/// One parameter's values, as offered by --list-transforms.
struct ParamSpace {
  std::string name;
  std::vector<std::string> values;
};

class Transform {
public:
  /// Kernel: a kernel's definition; Launch: one launch site (and what
  /// follows it on the host); HostLoop: a loop of a host function;
  /// HostSync: one host synchronization call; HostCopy: one host cudaMemcpy.
  enum class Level { Kernel, Launch, HostLoop, HostSync, HostCopy };
  virtual ~Transform();
  /// The kebab-case name used in plans.
  virtual llvm::StringRef name() const = 0;
  virtual llvm::StringRef summary() const = 0;
  virtual Level level() const { return Level::Kernel; }
  /// Plans with this step are verified with the looser fast-math tolerance.
  virtual bool fastMath() const { return false; }
  /// Libraries a variant with this step must link (`-l<name>`), e.g. cublas.
  virtual std::vector<std::string> links() const { return {}; }
  /// Why the transform cannot apply at this target ("" when it can).
  virtual std::string legality(TransformContext &ctx, Target t) const = 0;
  /// The parameter values that make sense at a legal target.
  virtual std::vector<ParamSpace> space(TransformContext &ctx, Target t) const = 0;
  /// Why these parameters do not fit this target ("" when they do).
  virtual std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const;
  /// Edits through ctx.rewriter. Only called after legality and checkParams passed.
  virtual llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const = 0;
  /// What this step does to the grid and block of each launch it rewrites,
  /// as one step of a launch remap (cudal1/Eval/LaunchRemap.h, the same
  /// arithmetic the rewrite writes into the launch): how replay re-launches
  /// a captured launch for the variant, in the tuner and in cudal1-eval.
  /// None when the step keeps the launch as it is, the default.
  virtual std::optional<LaunchRemapStep> remapLaunch(const PlanStep &step) const;
  /// remapLaunch for a kernel whose pointer arguments point to elements of
  /// `pointerElementBytes` bytes (0: unknown, e.g. an opaque type): a step
  /// whose launch arithmetic depends on the element size (vectorize: its
  /// lanes are the width over the element size) overrides it. Returns ""
  /// and sets `out`, or says why the remap cannot be known from these
  /// sizes (the plan is then judged as a whole program).
  virtual std::string remapLaunchFor(const PlanStep &step,
                                     const std::vector<unsigned> &pointerElementBytes,
                                     std::optional<LaunchRemapStep> &out) const {
    (void)pointerElementBytes;
    out = remapLaunch(step);
    return "";
  }
  /// Whether this step of a kernel-level transform edits host code too (a
  /// launch's stream, statements around it): a replay of the captured
  /// launches cannot judge it, so it is judged as a whole program. False by
  /// default; the level decides for the other levels.
  virtual bool editsHostCode(const PlanStep &) const { return false; }
};

/// All registered passes, in alphabetical order (defined in passes/AllPasses.cpp;
/// findTransform lives with the plan driver, which links the passes).
const std::vector<std::unique_ptr<Transform>> &allTransforms();
const Transform *findTransform(llvm::StringRef name);

} // namespace cudal1

#endif
