// warp-reduce: many threads adding to one address serialise on the atomic.
// Each thread keeps its contribution in a register, the warp sums them with
// shuffles, and lane 0 issues the one atomic.
#include "WarpReduce.h"
#include "cudal1/Analysis/Idioms.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/Debug.h"

#include "runtime/warp-atomic-add.inc" // the helper inserted: passes/runtime/warp-atomic-add.cuh

#define DEBUG_TYPE "warp-reduce"

using namespace clang;
using namespace cudal1;

namespace {

const char *partialName = "cudal1_partial";

/// The atomic, recognized in lib/Analysis/Idioms; its value type is written
/// in the rewrite as the canonical type prints.
using Match = UniformAtomic;

std::string match(TransformContext &ctx, unsigned kernel, Match &m) {
  if (std::string why = recognizeUniformAtomic(ctx.unit, kernel, ctx.mlir, m); !why.empty())
    return why;
  bool declared = false;
  forEachStmt(ctx.unit.kernelDecl(kernel)->getBody(), [&](const Stmt *s) {
    if (auto *ds = dyn_cast<DeclStmt>(s))
      for (const Decl *d : ds->decls())
        if (auto *nd = dyn_cast<NamedDecl>(d); nd && nd->getName() == partialName)
          declared = true;
  });
  if (declared)
    return std::string("the kernel already declares ") + partialName;
  // Plain text edits only.
  const SourceManager &sm = ctx.unit.ast().getSourceManager();
  for (SourceLocation l : {m.call->getBeginLoc(), m.call->getEndLoc(), m.stmt->getBeginLoc(),
                           m.guard ? m.guard->getBeginLoc() : m.stmt->getBeginLoc(),
                           m.guard ? m.guard->getEndLoc() : m.stmt->getEndLoc(),
                           m.call->getArg(0)->getBeginLoc(), m.call->getArg(0)->getEndLoc(),
                           m.call->getArg(1)->getBeginLoc(), m.call->getArg(1)->getEndLoc()})
    if (l.isInvalid() || l.isMacroID())
      return "the atomic or its if is written inside a macro";
  if (!sm.isWrittenInMainFile(m.call->getBeginLoc()))
    return "the kernel is not defined in the main file";
  return "";
}

std::string indentOf(const SourceManager &sm, SourceLocation loc) {
  auto [fid, off] = sm.getDecomposedLoc(loc);
  llvm::StringRef buf = sm.getBufferData(fid);
  unsigned ls = off;
  while (ls > 0 && buf[ls - 1] != '\n')
    --ls;
  llvm::StringRef ind = buf.substr(ls, off - ls);
  return ind.find_first_not_of(" \t") == llvm::StringRef::npos ? ind.str() : "";
}

} // namespace

std::string WarpReduce::legality(TransformContext &ctx, Target t) const {
  Match m;
  if (std::string why = match(ctx, t.kernel, m); !why.empty())
    return why;
  // Instantiations of one template must agree on the value type (the
  // rewrite names it).
  for (unsigned k : kernelsSharingDefinition(ctx.model(), t.kernel)) {
    Match o;
    if (k != t.kernel && match(ctx, k, o).empty() && o.valueType != m.valueType)
      return "the template's instantiations add different types";
  }
  return "";
}

std::vector<ParamSpace> WarpReduce::space(TransformContext &, Target) const { return {}; }

llvm::Error WarpReduce::apply(TransformContext &ctx, Target t, const PlanStep &) const {
  Match m;
  if (std::string why = match(ctx, t.kernel, m); !why.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", why.c_str());
  ASTContext &ast = ctx.unit.ast();
  const SourceManager &sm = ast.getSourceManager();
  std::string addr = spelled(ast, m.call->getArg(0));
  std::string val = spelled(ast, m.call->getArg(1));
  ctx.insertHelperBefore(t.kernel, "cudal1WarpAtomicAdd", runtime::warpAtomicAdd);
  std::string reduce =
      "cudal1WarpAtomicAdd<" + m.valueType + ">(" + addr + ", " + std::string(partialName) + ");";
  LLVM_DEBUG(llvm::dbgs() << "warp-reduce: " << reduce << "\n");
  if (!m.guard) {
    // Every thread adds: the reduction takes the value directly.
    ctx.rewriter.ReplaceText(CharSourceRange::getTokenRange(m.stmt->getSourceRange()),
                             "cudal1WarpAtomicAdd<" + m.valueType + ">(" + addr + ", " + val + ")");
    return llvm::Error::success();
  }
  std::string indent = indentOf(sm, m.guard->getBeginLoc());
  ctx.rewriter.InsertTextBefore(m.guard->getBeginLoc(),
                                m.valueType + " " + partialName + " = 0;\n" + indent);
  ctx.rewriter.ReplaceText(CharSourceRange::getTokenRange(m.stmt->getSourceRange()),
                           std::string(partialName) + " += " + val);
  SourceLocation after;
  if (auto *cs = dyn_cast<CompoundStmt>(m.guard->getThen()))
    after = cs->getRBracLoc().getLocWithOffset(1);
  else
    after = Lexer::findLocationAfterToken(m.stmt->getEndLoc(), tok::semi, sm, ast.getLangOpts(),
                                          /*SkipTrailingWhitespaceAndNewLine=*/false);
  if (after.isInvalid())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot find the end of the if statement");
  ctx.rewriter.InsertTextAfter(after, "\n" + indent + reduce);
  return llvm::Error::success();
}
