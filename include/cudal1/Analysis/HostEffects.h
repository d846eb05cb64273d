// Host-code questions the program-level passes share (lib/Analysis): which
// host variables hold device-visible memory, whether host code touches it,
// which allocations are distinct, what a kernel's parameters do not show.
#ifndef CUDAL1_ANALYSIS_HOSTEFFECTS_H
#define CUDAL1_ANALYSIS_HOSTEFFECTS_H

#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

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

/// The parent statement of `s` (null at the function body).
const clang::Stmt *parentStmt(clang::ASTContext &ctx, const clang::Stmt *s);

/// Whether a stream argument names the default stream ("", 0, NULL, nullptr,
/// cudaStreamLegacy, cudaStreamPerThread).
bool isDefaultStream(const std::string &text);

/// Name of the direct callee of a call ("" when none).
std::string calleeName(const clang::CallExpr *ce);

/// Local pointer variables of `fd` that only ever hold fresh allocations
/// (distinct buffers): initialised by nothing, null, `new` or a call whose
/// callee's name contains "alloc", assigned only such values, their address
/// given only to cudaMalloc*/cudaHostAlloc, swapped only with each other.
VarSet freshAllocations(clang::ASTContext &ctx, const clang::FunctionDecl *fd);

/// "" when the kernel's memory effects are all visible through its pointer
/// parameters (what the dependence test sees), else what hides them.
std::string hiddenEffects(const clang::FunctionDecl *kernel);

/// The cudaMemcpy calls in the host functions of the main file (not in
/// templates or macros' headers), in source order: the targets `@copy#N`.
std::vector<const clang::CallExpr *> hostCopies(clang::ASTContext &ctx);

} // namespace cudal1

#endif
