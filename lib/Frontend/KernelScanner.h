// Internal to the front end: walks one __global__ function and fills a Kernel.
#ifndef CUDAL1_LIB_FRONTEND_KERNELSCANNER_H
#define CUDAL1_LIB_FRONTEND_KERNELSCANNER_H

#include "cudal1/Frontend/ProgramModel.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"

#include <optional>
#include <string>

namespace cudal1::frontend {

/// Source helpers shared by the scanners.
SourcePos position(const clang::SourceManager &sm, clang::SourceLocation loc);
std::string sourceText(const clang::ASTContext &ctx, const clang::Stmt *s);
/// "threadIdx.x", "blockDim.y", ... for CUDA's builtin index variables.
std::optional<std::string> builtinIndexName(const clang::Expr *e);
/// The variable a pointer expression is based on (`d_x + off` → d_x), or "".
std::string pointerBase(const clang::ASTContext &ctx, const clang::Expr *e);
/// Whitespace- and comment-insensitive text of a declaration (for kernel keys).
std::string normalizedTokens(const clang::ASTContext &ctx, const clang::Decl *d);

/// Fills `k` from the body of `fd`; `deviceCallees` receives the device
/// functions it calls (for the kernel key).
/// `loopStmts`, when given, receives the statement of each loop (by id), and
/// `accessExprs` the expression of each access (by index into k.accesses:
/// the subscript, the dereference or the atomic call).
void scanKernel(clang::ASTContext &ctx, const clang::FunctionDecl *fd, Kernel &k,
                std::vector<const clang::FunctionDecl *> &deviceCallees,
                std::vector<const clang::Stmt *> *loopStmts = nullptr,
                std::vector<const clang::Expr *> *accessExprs = nullptr);

} // namespace cudal1::frontend

#endif
