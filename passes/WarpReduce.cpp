// warp-reduce: many threads adding to one address serialise on the atomic.
// Each thread keeps its contribution in a register, the warp sums them with
// shuffles, and lane 0 issues the one atomic.
#include "WarpReduce.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/Debug.h"

#include <functional>

#include "runtime/warp-atomic-add.inc" // the helper inserted: passes/runtime/warp-atomic-add.cuh

#define DEBUG_TYPE "warp-reduce"

using namespace clang;
using namespace cudal1;

namespace {

const char *partialName = "cudal1_partial";

const CallExpr *atomicOf(const Stmt *s) {
  auto *e = dyn_cast_or_null<Expr>(s);
  if (!e)
    return nullptr;
  e = e->IgnoreParens();
  if (auto *c = dyn_cast<CStyleCastExpr>(e); c && c->getType()->isVoidType())
    e = c->getSubExpr()->IgnoreParens();
  auto *ce = dyn_cast<CallExpr>(e);
  if (ce && ce->getDirectCallee() && ce->getDirectCallee()->getName() == "atomicAdd" &&
      ce->getNumArgs() == 2)
    return ce;
  return nullptr;
}

/// The atomic statement and where it sits.
struct Match {
  const IfStmt *guard = nullptr; ///< null: the atomic is a top-level statement
  const Expr *stmt = nullptr;    ///< the statement (the call, maybe cast to void)
  const CallExpr *call = nullptr;
  std::string type; ///< the value type as written in the rewrite
};

std::string valueType(QualType t) {
  t = t.getCanonicalType().getUnqualifiedType();
  if (auto *bt = dyn_cast<BuiltinType>(t.getTypePtr())) {
    switch (bt->getKind()) {
    case BuiltinType::Float:
      return "float";
    case BuiltinType::Double:
      return "double";
    case BuiltinType::Int:
      return "int";
    case BuiltinType::UInt:
      return "unsigned int";
    case BuiltinType::ULongLong:
      return "unsigned long long";
    default:
      break;
    }
  }
  return "";
}

std::string match(TransformContext &ctx, unsigned kernel, Match &m) {
  ASTContext &ast = ctx.unit.ast();
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  auto *body = dyn_cast_or_null<CompoundStmt>(fd->getBody());
  if (!body)
    return "the kernel has no body";
  // 1. Exactly one atomic, an atomicAdd whose result is unused.
  unsigned atomics = 0;
  std::string why;
  forEachStmt(body, [&](const Stmt *s) {
    if (auto *ce = dyn_cast<CallExpr>(s))
      if (const FunctionDecl *f = ce->getDirectCallee();
          f && f->getIdentifier() && f->getName().starts_with("atomic"))
        ++atomics;
    if (isa<ReturnStmt>(s))
      why = "the kernel returns early, so not every thread reaches the warp reduction";
    if (isa<GotoStmt>(s) || isa<IndirectGotoStmt>(s) || isa<LabelStmt>(s))
      why = "the kernel uses goto";
    if (auto *vd = dyn_cast<DeclStmt>(s))
      for (const Decl *d : vd->decls())
        if (auto *nd = dyn_cast<NamedDecl>(d); nd && nd->getName() == partialName)
          why = std::string("the kernel already declares ") + partialName;
  });
  if (atomics == 0)
    return "the kernel has no atomicAdd";
  if (atomics > 1)
    return "the kernel has several atomics; only one is handled";
  if (!why.empty())
    return why;
  if (usesWarpIntrinsics(fd))
    return "the kernel uses warp-level intrinsics already";
  // 2. The atomic: a top-level statement, or a statement directly inside a
  // top-level if without else.
  for (const Stmt *s : body->body()) {
    if (const CallExpr *c = atomicOf(s)) {
      m.stmt = cast<Expr>(s);
      m.call = c;
      break;
    }
    auto *is = dyn_cast<IfStmt>(s);
    if (!is || is->getElse() || is->getInit() || is->getConditionVariable())
      continue;
    std::vector<const Stmt *> inner;
    if (auto *cs = dyn_cast<CompoundStmt>(is->getThen()))
      inner.assign(cs->body_begin(), cs->body_end());
    else
      inner.push_back(is->getThen());
    for (const Stmt *x : inner)
      if (const CallExpr *c = atomicOf(x)) {
        m.guard = is;
        m.stmt = cast<Expr>(x);
        m.call = c;
      }
    if (m.call)
      break;
  }
  if (!m.call)
    return "the atomicAdd is not a statement at the top of the kernel or directly inside a "
           "top-level if (or its result is used)";
  // 3. The value type.
  m.type = valueType(m.call->getDirectCallee()->getParamDecl(1)->getType());
  if (m.type.empty())
    return "the atomicAdd's value type is not float, double, int, unsigned or unsigned long "
           "long";
  // 4. The address is the same for every thread of a block.
  const Expr *addr = m.call->getArg(0);
  if (addr->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
    return "the atomic's address has side effects";
  const SourceManager &sm = ast.getSourceManager();
  // The front end keeps the access at the call (atomicAdd(p + i, v)) or at
  // the element whose address is taken (atomicAdd(&p[i], v)).
  const MemAccess *acc = ctx.unit.accessOf(kernel, m.call, AccessKind::Write);
  if (auto *uo = dyn_cast<UnaryOperator>(addr->IgnoreParenImpCasts());
      !acc && uo && uo->getOpcode() == UO_AddrOf)
    acc = ctx.unit.accessOf(kernel, uo->getSubExpr()->IgnoreParens(), AccessKind::Write);
  if (acc && !acc->atomic)
    acc = nullptr;
  if (!acc)
    return "the atomic's target is not an access through a kernel pointer parameter";
  IndexSpace space(ctx.mlir);
  auto e = space.parse(acc->normalized);
  if (!e || usesOpaque(*e, space))
    return "the atomic's index " + acc->index + " is not an affine expression";
  for (unsigned d : {IndexSpace::ThreadX, IndexSpace::ThreadY, IndexSpace::ThreadZ})
    if (e->isFunctionOfDim(d))
      return "the atomic's index " + acc->index + " depends on threadIdx";
  // The address text moves after the if: it must mean the same there.
  llvm::DenseSet<const VarDecl *> mutated, inside;
  forEachStmt(body, [&](const Stmt *s) {
    auto note = [&](const Expr *x) {
      if (auto *dre = dyn_cast<DeclRefExpr>(x->IgnoreParenImpCasts()))
        if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
          mutated.insert(vd);
    };
    if (auto *bo = dyn_cast<BinaryOperator>(s); bo && bo->isAssignmentOp())
      note(bo->getLHS());
    if (auto *uo = dyn_cast<UnaryOperator>(s);
        uo && (uo->isIncrementDecrementOp() || uo->getOpcode() == UO_AddrOf))
      note(uo->getSubExpr());
  });
  if (m.guard)
    forEachStmt(m.guard->getThen(), [&](const Stmt *s) {
      if (auto *ds = dyn_cast<DeclStmt>(s))
        for (const Decl *d : ds->decls())
          if (auto *vd = dyn_cast<VarDecl>(d))
            inside.insert(vd);
    });
  forEachStmt(addr, [&](const Stmt *s) {
    if (auto *dre = dyn_cast<DeclRefExpr>(s))
      if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()); vd && vd->hasLocalStorage()) {
        if (inside.count(vd))
          why = "the atomic's address uses '" + vd->getNameAsString() + "', declared inside the if";
        else if (mutated.count(vd))
          why = "the atomic's address uses '" + vd->getNameAsString() + "', which is modified";
      }
  });
  if (!why.empty())
    return why;
  // 5. Plain text edits only.
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
    if (k != t.kernel && match(ctx, k, o).empty() && o.type != m.type)
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
      "cudal1WarpAtomicAdd<" + m.type + ">(" + addr + ", " + std::string(partialName) + ");";
  LLVM_DEBUG(llvm::dbgs() << "warp-reduce: " << reduce << "\n");
  if (!m.guard) {
    // Every thread adds: the reduction takes the value directly.
    ctx.rewriter.ReplaceText(CharSourceRange::getTokenRange(m.stmt->getSourceRange()),
                             "cudal1WarpAtomicAdd<" + m.type + ">(" + addr + ", " + val + ")");
    return llvm::Error::success();
  }
  std::string indent = indentOf(sm, m.guard->getBeginLoc());
  ctx.rewriter.InsertTextBefore(m.guard->getBeginLoc(),
                                m.type + " " + partialName + " = 0;\n" + indent);
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
