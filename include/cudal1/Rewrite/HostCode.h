// AST helpers for the program-level passes (drop-sync, graph, streams, fuse):
// which host variables hold device-visible memory, whether host code touches
// it, and how statements sit in their blocks.
#ifndef CUDAL1_REWRITE_HOSTCODE_H
#define CUDAL1_REWRITE_HOSTCODE_H

#include "cudal1/Rewrite/Transform.h"

#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <set>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class FunctionDecl;
class VarDecl;
} // namespace clang

namespace cudal1 {

using VarSet = std::set<const clang::VarDecl *>;

/// The variables of `fd` that may point to device-visible memory: pointer
/// arguments of its launches, the targets of cudaMalloc*/cudaHostAlloc, and
/// pointers initialised or assigned from one of those (aliases).
VarSet deviceBuffers(clang::ASTContext &ctx, const clang::FunctionDecl *fd);

/// The variable a pointer expression is based on (`d + off` → d), or null.
const clang::VarDecl *pointerBaseVar(const clang::Expr *e);

/// "" unless evaluating `s` on the host touches device-visible memory or
/// time: a dereference of a buffer, a buffer passed by value to a function
/// that is not a CUDA API call or a kernel launch, a clock read, an event or
/// stream query. Calls of user functions are looked into (a few levels),
/// where pointer parameters count as buffers.
std::string hostAccessOfDeviceData(clang::ASTContext &ctx, const clang::Stmt *s,
                                   const VarSet &buffers);

/// Whether `s` only checks errors: its calls are error queries
/// (cudaGetLastError, cudaGetErrorString, ...), printing and exit, and it
/// assigns no variable declared outside it. `wrapped`, when given, is a call
/// inside `s` to disregard (the call that an error-checking macro wraps).
bool isErrorCheck(clang::ASTContext &ctx, const clang::Stmt *s,
                  const clang::Stmt *wrapped = nullptr);

/// The statement that contains `s` and is a direct child of a compound
/// statement (or the body of a loop or if), or null.
const clang::Stmt *enclosingStatement(clang::ASTContext &ctx, const clang::Stmt *s);

/// The parent statement of `s` (null at the function body).
const clang::Stmt *parentStmt(clang::ASTContext &ctx, const clang::Stmt *s);

/// A statement's range in the file, a macro invocation as a whole; invalid
/// when it starts and ends in different macro expansions.
clang::CharSourceRange statementRange(clang::ASTContext &ctx, const clang::Stmt *s);

/// The whitespace before `loc` on its line ("" when code precedes it).
std::string indentAt(clang::ASTContext &ctx, clang::SourceLocation loc);

/// Whether a stream argument names the default stream ("", 0, NULL, nullptr,
/// cudaStreamLegacy, cudaStreamPerThread).
bool isDefaultStream(const std::string &text);

/// Name of the direct callee of a call ("" when none).
std::string calleeName(const clang::CallExpr *ce);

/// `prefix` + the smallest number not yet in the source (earlier plan steps
/// may have used some).
std::string freshName(TransformContext &ctx, const std::string &prefix);

/// Local pointer variables of `fd` that only ever hold fresh allocations
/// (distinct buffers): initialised by nothing, null, `new` or a call whose
/// callee's name contains "alloc", assigned only such values, their address
/// given only to cudaMalloc*/cudaHostAlloc, swapped only with each other.
VarSet freshAllocations(clang::ASTContext &ctx, const clang::FunctionDecl *fd);
/// The same, computed once per context (asked once per launch or copy).
const VarSet &freshAllocations(TransformContext &ctx, const clang::FunctionDecl *fd);

/// "" when the kernel's memory effects are all visible through its pointer
/// parameters (what the dependence test sees), else what hides them.
std::string hiddenEffects(const clang::FunctionDecl *kernel);

/// The cudaMemcpy calls in the host functions of the main file (not in
/// templates or macros' headers), in source order: the targets `@copy#N`.
std::vector<const clang::CallExpr *> hostCopies(clang::ASTContext &ctx);

/// Why launches a and b (same host function) conflict ("" when they do not):
/// a buffer one writes is touched by the other, unless two different
/// variables are both fresh allocations, or the Presburger test proves the
/// elements disjoint (or, with sameThreadOk, touched by the same thread).
std::string launchConflict(TransformContext &ctx, unsigned a, unsigned b, const VarSet &fresh,
                           bool sameThreadOk);

/// The run of kernel launches that directly follows `from` in `block` and
/// that a pass may move past or overlap with `from`: error checks between
/// them are skipped; the first other statement, or the first launch that
/// `refuse` gives a reason for (or whose kernel is not known), ends the run.
struct FollowingLaunches {
  std::vector<unsigned> launches;    ///< in order
  const clang::Stmt *stop = nullptr; ///< the statement that ended it; null: the block's end
  std::string firstWhy;              ///< "launch #N: why" for a refused launch, else ""
};
FollowingLaunches followingLaunches(
    TransformContext &ctx, const clang::CompoundStmt *block, const clang::Stmt *from,
    llvm::function_ref<std::string(unsigned id, const clang::CUDAKernelCallExpr *)> refuse);

} // namespace cudal1

#endif
