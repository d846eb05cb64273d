/// The grid-stride conversion as a building block: the grid-stride pass
/// applies it alone, coarsen and vectorize build on it (a smaller grid,
/// wider elements), so it lives here rather than in one of the passes
/// (passes include only their own header and library headers).
#ifndef CUDAL1_REWRITE_GRIDSTRIDELOOP_H
#define CUDAL1_REWRITE_GRIDSTRIDELOOP_H

#include "cudal1/Rewrite/Transform.h"

#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class BinaryOperator;
class CompoundStmt;
class DeclStmt;
class Expr;
class FunctionDecl;
class IfStmt;
class Stmt;
class VarDecl;
} // namespace clang

namespace cudal1 {
namespace gridstride {

/// "" when every instantiation of the kernel's definition can be converted,
/// else the reason.
std::string legality(TransformContext &ctx, unsigned kernel);

/// Converts the definition of `kernel` (its template pattern). Calling it
/// again for the same definition in the same context edits nothing.
void apply(TransformContext &ctx, unsigned kernel);

/// The parts of a guarded element-wise kernel: `int i = gid; ...; if (i < n) S`
/// or `int i = gid; ...; if (i >= n) return; S...`.
struct GuardedKernel {
  const clang::CompoundStmt *body = nullptr;
  const clang::DeclStmt *indexDecl = nullptr;
  const clang::VarDecl *index = nullptr;
  const clang::IfStmt *guard = nullptr;
  bool earlyReturn = false;
  const clang::BinaryOperator *bound = nullptr; ///< `index OP limit` inside the condition
  std::vector<const clang::Expr *> otherConds;  ///< thread-invariant parts of the condition
  std::vector<const clang::Stmt *> perElement;  ///< what runs once per element
};

/// The shape of a kernel for which legality() passed (syntax only);
/// nullopt when it does not match.
std::optional<GuardedKernel> matchGuarded(clang::ASTContext &ast, const clang::FunctionDecl *fd);

/// Whether the kernel uses threadIdx or blockIdx, a barrier or a warp
/// intrinsic inside `s`, directly or in a device function it calls.
bool usesThreadIdentity(const clang::Stmt *s);

/// "" when the grid-stride loops of an already grid-stride kernel cover all
/// its per-thread work, so that a smaller grid computes the same result
/// (every non-uniform access inside an x grid-stride loop, no direct use of
/// the thread identity inside those loops); else the reason.
std::string gridStrideCoversWork(TransformContext &ctx, unsigned kernel);

/// The grid expression `g` divided by `f` along x, rounded up, in g's own
/// type: the launch grid of a kernel whose threads each handle f elements.
std::string shrunkGrid(clang::ASTContext &ast, const clang::Expr *g, unsigned f);

} // namespace gridstride

} // namespace cudal1

#endif
