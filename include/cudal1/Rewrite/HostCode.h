// Source-edit helpers for the program-level passes (drop-sync, graph,
// streams, fuse): how statements sit in their blocks, fresh names, launch
// conflicts. The host-code questions are cudal1/Analysis/HostEffects.h.
#ifndef CUDAL1_REWRITE_HOSTCODE_H
#define CUDAL1_REWRITE_HOSTCODE_H

#include "cudal1/Analysis/HostEffects.h"
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

/// The body of a loop (`for`, range-`for`, `while`, `do`); null for any
/// other statement.
const clang::Stmt *loopBody(const clang::Stmt *loop);

/// The statement that contains `s` and is a direct child of a compound
/// statement (or the body of a loop or if), or null.
const clang::Stmt *enclosingStatement(clang::ASTContext &ctx, const clang::Stmt *s);

/// A statement's range in the file, a macro invocation as a whole; invalid
/// when it starts and ends in different macro expansions.
clang::CharSourceRange statementRange(clang::ASTContext &ctx, const clang::Stmt *s);

/// The loop (`for`, range-`for`, `while`, `do`) or `if` whose whole body or
/// branch is `s`, written without braces; null when `s` is a statement of a
/// block (or not a statement at all).
const clang::Stmt *bracelessParent(clang::ASTContext &ctx, const clang::Stmt *s);

/// Where a braceless body sits, for messages: "the body of a for loop
/// written without braces", "the else branch of an if written without
/// braces", ...
std::string bracelessPlace(const clang::Stmt *parent, const clang::Stmt *body);

/// The file location just after statement `s`: after its `;` (an expression,
/// `return`, `do ... while (c)`), its `}`, or the end of its last nested
/// body; invalid when that cannot be found in the file (a macro).
clang::SourceLocation statementEnd(clang::ASTContext &ctx, const clang::Stmt *s);

/// "" when `s` starts and ends in the file's own text; else the sentence
/// (starting with `what`) that says which macro writes it or takes it as
/// an argument.
std::string writtenByMacro(clang::ASTContext &ctx, const clang::Stmt *s, const std::string &what);

/// Whether statements may be put before or after `s`, a statement of a
/// host function, in the shapes people write: "" when `s` is a statement of
/// a block, or the braceless body of a loop or a branch of an `if` (which
/// makeRoomAround then braces); else why not, the sentence starting with
/// `what` ("the launch"): an operand of a larger expression, an argument of
/// macro M, written inside macro M, ...
std::string roomAround(clang::ASTContext &ctx, const clang::Stmt *s, const std::string &what);

/// For a pass that puts statements before or after `s` once roomAround
/// said yes: a braceless body gets braces when the step's edits are done
/// (TransformContext::braceStatement), so that whatever the pass inserts
/// stays in that body. Nothing for a statement of a block.
void makeRoomAround(TransformContext &ctx, const clang::Stmt *s);

/// The whitespace before `loc` on its line ("" when code precedes it).
std::string indentAt(clang::ASTContext &ctx, clang::SourceLocation loc);

/// `prefix` + the smallest number not yet in the source (earlier plan steps
/// may have used some).
std::string freshName(TransformContext &ctx, const std::string &prefix);

/// The same, computed once per context (asked once per launch or copy).
const VarSet &freshAllocations(TransformContext &ctx, const clang::FunctionDecl *fd);

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
