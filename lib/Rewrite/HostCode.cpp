// Source-edit helpers the program-level passes share: where a statement sits
// in its block and its range in the file, fresh names, the conflicts between
// two launches, and the run of launches after one. The host-code questions
// they build on are lib/Analysis/HostEffects.cpp.
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Analysis/Dependence.h"
#include "cudal1/Frontend/ParsedUnit.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

using namespace clang;
using namespace cudal1;

const Stmt *cudal1::enclosingStatement(ASTContext &ctx, const Stmt *s) {
  const Stmt *cur = s;
  while (cur) {
    const Stmt *p = parentStmt(ctx, cur);
    if (!p)
      return nullptr;
    // Inside a macro's own block (do { ... } while (0)) the statement is
    // the whole macro invocation.
    if (p->getBeginLoc().isMacroID()) {
      cur = p;
      continue;
    }
    if (isa<CompoundStmt>(p))
      return cur;
    if (auto *f = dyn_cast<ForStmt>(p); f && f->getBody() == cur)
      return cur;
    if (auto *w = dyn_cast<WhileStmt>(p); w && w->getBody() == cur)
      return cur;
    if (auto *d = dyn_cast<DoStmt>(p); d && d->getBody() == cur)
      return cur;
    if (auto *r = dyn_cast<CXXForRangeStmt>(p); r && r->getBody() == cur)
      return cur;
    if (auto *i = dyn_cast<IfStmt>(p); i && (i->getThen() == cur || i->getElse() == cur))
      return cur;
    cur = p;
  }
  return nullptr;
}

CharSourceRange cudal1::statementRange(ASTContext &ctx, const Stmt *s) {
  return Lexer::makeFileCharRange(CharSourceRange::getTokenRange(s->getSourceRange()),
                                  ctx.getSourceManager(), ctx.getLangOpts());
}

std::string cudal1::indentAt(ASTContext &ctx, SourceLocation loc) {
  const SourceManager &sm = ctx.getSourceManager();
  auto [fid, off] = sm.getDecomposedLoc(sm.getFileLoc(loc));
  llvm::StringRef buf = sm.getBufferData(fid);
  unsigned ls = off;
  while (ls > 0 && buf[ls - 1] != '\n')
    --ls;
  llvm::StringRef ind = buf.substr(ls, off - ls);
  return ind.find_first_not_of(" \t") == llvm::StringRef::npos ? ind.str() : "";
}

namespace {
/// Pointer parameters a kernel writes / reads (from the model's accesses).
void effects(const Kernel &k, std::set<int> &reads, std::set<int> &writes) {
  for (const MemAccess &a : k.accesses)
    (a.kind == AccessKind::Read ? reads : writes).insert(a.paramIndex);
}

} // namespace

std::string cudal1::freshName(TransformContext &ctx, const std::string &prefix) {
  unsigned n = 0;
  while (ctx.unit.code().find(prefix + std::to_string(n)) != std::string::npos)
    ++n;
  return prefix + std::to_string(n);
}

const VarSet &cudal1::freshAllocations(TransformContext &ctx, const FunctionDecl *fd) {
  auto it = ctx.freshAllocationsOf.find(fd);
  if (it == ctx.freshAllocationsOf.end())
    it = ctx.freshAllocationsOf.emplace(fd, freshAllocations(ctx.unit.ast(), fd)).first;
  return it->second;
}

std::string cudal1::launchConflict(TransformContext &ctx, unsigned a, unsigned b,
                                   const VarSet &fresh, bool sameThreadOk) {
  const ProgramModel &m = ctx.model();
  const LaunchSite &la = m.launches[a], &lb = m.launches[b];
  const Kernel &ka = m.kernels[la.kernelIndex], &kb = m.kernels[lb.kernelIndex];
  std::set<int> ra, wa, rb, wb;
  effects(ka, ra, wa);
  effects(kb, rb, wb);
  const CUDAKernelCallExpr *ea = ctx.unit.launchExpr(a), *eb = ctx.unit.launchExpr(b);
  // 1. Different variables: different buffers only when both are fresh.
  for (int i : wa)
    if (i < 0)
      return "launch #" + std::to_string(a) + " writes memory the model cannot name";
  for (int j : wb)
    if (j < 0)
      return "launch #" + std::to_string(b) + " writes memory the model cannot name";
  auto check = [&](const CUDAKernelCallExpr *ew, const std::set<int> &w,
                   const CUDAKernelCallExpr *eo, const std::set<int> &ro,
                   const std::set<int> &wo) -> std::string {
    for (int i : w) {
      const VarDecl *vw = pointerBaseVar(ew->getArg(i));
      if (!vw)
        return "a written pointer argument is not a plain variable";
      for (const std::set<int> *s : {&ro, &wo})
        for (int j : *s) {
          if (j < 0)
            return "a kernel reads memory the model cannot name";
          const VarDecl *vo = pointerBaseVar(eo->getArg(j));
          if (!vo)
            return "a pointer argument is not a plain variable";
          if (vo != vw && !(fresh.count(vw) && fresh.count(vo)))
            return "'" + vw->getNameAsString() + "' and '" + vo->getNameAsString() +
                   "' may alias (not both fresh allocations)";
        }
    }
    return "";
  };
  if (std::string why = check(ea, wa, eb, rb, wb); !why.empty())
    return why;
  if (std::string why = check(eb, wb, ea, ra, wa); !why.empty())
    return why;
  // 2. The same variable: the Presburger test must find no common element
  //    (or, when allowed, only elements that one thread touches in both).
  LaunchDependence dep = analyzeLaunchPair(m, a, b, ctx.mlir);
  for (const BufferDependence &bd : dep.buffers)
    if (bd.result != DependenceResult::Disjoint &&
        !(sameThreadOk && bd.result == DependenceResult::SameThread))
      return "launch #" + std::to_string(b) + " depends on it through '" + bd.buffer + "' (" +
             toString(bd.result) + (bd.detail.empty() ? "" : ": " + bd.detail) + ")";
  return "";
}

FollowingLaunches cudal1::followingLaunches(
    TransformContext &ctx, const CompoundStmt *block, const Stmt *from,
    llvm::function_ref<std::string(unsigned, const CUDAKernelCallExpr *)> refuse) {
  ASTContext &ast = ctx.unit.ast();
  const ProgramModel &m = ctx.model();
  FollowingLaunches run;
  bool after = false;
  for (const Stmt *s : block->body()) {
    if (!after) {
      after = s == from;
      continue;
    }
    if (auto *kc = dyn_cast<CUDAKernelCallExpr>(s)) {
      int id = ctx.unit.launchId(kc);
      std::string why = id < 0 || m.launches[id].kernelIndex < 0 ? "its kernel is not known"
                                                                 : refuse(unsigned(id), kc);
      if (why.empty()) {
        run.launches.push_back(unsigned(id));
        continue;
      }
      run.firstWhy = "launch #" + std::to_string(id) + ": " + why;
    } else if (isErrorCheck(ast, s)) {
      continue;
    }
    run.stop = s;
    break;
  }
  return run;
}
