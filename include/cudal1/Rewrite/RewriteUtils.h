// Small AST and text helpers that several passes share.
#ifndef CUDAL1_REWRITE_REWRITEUTILS_H
#define CUDAL1_REWRITE_REWRITEUTILS_H

#include "cudal1/Rewrite/Transform.h"

#include "llvm/ADT/DenseSet.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class DeclRefExpr;
class Expr;
class Stmt;
class FunctionDecl;
class VarDecl;
} // namespace clang

namespace cudal1 {

/// The source text of a statement or expression as written (file locations).
std::string spelled(clang::ASTContext &ctx, const clang::Stmt *s);

/// Calls fn on s and every statement below it, preorder; also looks through
/// OpaqueValueExprs, behind which the builtins (threadIdx.x) hide their base.
void forEachStmt(const clang::Stmt *s, const std::function<void(const clang::Stmt *)> &fn);

/// The variable `s` assigns, increments or decrements, or takes the address
/// of, when it names one directly; else null.
const clang::DeclRefExpr *changedVariable(const clang::Stmt *s);

/// Whether `s` names the variable `v` anywhere below it.
bool refersTo(const clang::Stmt *s, const clang::VarDecl *v);

/// The variables declared inside `s`.
llvm::DenseSet<const clang::VarDecl *> declaredIn(const clang::Stmt *s);

/// The spelled-in-source grid (0) or block (1) argument of a launch.
const clang::Expr *launchConfigArg(TransformContext &ctx, unsigned launch, unsigned which);

/// The file text to edit for a launch's grid (0) or block (1) argument
/// (implicit conversions and parentheses aside, as spelled() reads it):
/// also when the launch is (inside) a macro's argument, whose text is the
/// file's; invalid when a macro's own body writes it (`LAUNCH(p)`, a grid
/// `GRID(n)` whose expression is the macro's), or when a macro expands the
/// argument into more than one launch (one edit would change them all).
/// `why` (when given) gets the reason then, naming the macro.
clang::CharSourceRange configRange(TransformContext &ctx, unsigned launch, unsigned which,
                                   std::string *why = nullptr);

/// The dimensions of a launch configuration argument `e` as spelled (an
/// integer, or a dim3, possibly through a variable's initializer), each a
/// constant or nullopt; dim3's defaulted arguments are not listed. False
/// when `e` is neither an integer nor a dim3 construction.
bool configDims(const clang::Expr *e, clang::ASTContext &ast,
                std::vector<std::optional<uint64_t>> &out);

/// "" when launch `launch` has a 1-D grid and a 1-D block (an integer, or a
/// dim3 whose other dimensions are 1), setting `blockThreads` to the block's
/// threads (nullopt when not a constant); otherwise the reason, starting
/// "launch #N". The 1-D forms of tile-shared and stage-shared keep such
/// launches as they are.
std::string oneDimLaunch(TransformContext &ctx, unsigned launch,
                         std::optional<uint64_t> &blockThreads);

/// The number of threads per block of a launch when it is a compile-time
/// constant (an integer, dim3(a, b, c) or a dim3 variable initialised with
/// constants), else nullopt.
std::optional<unsigned> constantBlockSize(TransformContext &ctx, unsigned launch);

/// Names of calls in a kernel body (direct callees), for legality checks.
std::vector<std::string> calleeNames(const clang::FunctionDecl *fd);

/// Whether the kernel uses warp-level intrinsics (shuffles, votes,
/// __activemask, __syncwarp, ...), which tie it to its thread layout.
bool usesWarpIntrinsics(const clang::FunctionDecl *fd);

/// The definition to edit for a kernel: the template pattern of an instantiation.
const clang::FunctionDecl *editableDecl(const clang::FunctionDecl *fd);

/// "" when every access and guard of the kernel depends on thread and block
/// indices only through global ids (blockIdx.d * blockDim.d + threadIdx.d),
/// so remapping threads to blocks does not change what a global thread does;
/// otherwise the reason.
std::string dependsOnlyOnGlobalIds(TransformContext &ctx, unsigned kernel);

/// Kernels defined at the same place as `kernel` (the instantiations of one
/// template, which one edit of the definition changes together).
std::vector<unsigned> kernelsSharingDefinition(const ProgramModel &m, unsigned kernel);

/// The launches of the kernel and of its sibling instantiations, one per
/// source location (a launch in a host template is seen once per
/// instantiation).
std::vector<unsigned> distinctLaunches(TransformContext &ctx, unsigned kernel);

/// "" unless the kernel is referenced outside a <<<>>> launch (e.g. through
/// cudaLaunchKernel or a function pointer; attribute and occupancy queries
/// are fine): then some of its launches are invisible, and the reason says where.
std::string referencedOutsideLaunches(TransformContext &ctx, unsigned kernel);

} // namespace cudal1

#endif
