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

const Stmt *cudal1::bracelessParent(ASTContext &ctx, const Stmt *s) {
  const Stmt *p = s ? parentStmt(ctx, s) : nullptr;
  if (!p || isa<CompoundStmt>(s))
    return nullptr;
  if (auto *f = dyn_cast<ForStmt>(p); f && f->getBody() == s)
    return p;
  if (auto *w = dyn_cast<WhileStmt>(p); w && w->getBody() == s)
    return p;
  if (auto *d = dyn_cast<DoStmt>(p); d && d->getBody() == s)
    return p;
  if (auto *r = dyn_cast<CXXForRangeStmt>(p); r && r->getBody() == s)
    return p;
  if (auto *i = dyn_cast<IfStmt>(p); i && (i->getThen() == s || i->getElse() == s))
    return p;
  return nullptr;
}

std::string cudal1::bracelessPlace(const Stmt *parent, const Stmt *body) {
  std::string what;
  if (isa<ForStmt>(parent))
    what = "the body of a for loop";
  else if (isa<CXXForRangeStmt>(parent))
    what = "the body of a range-for loop";
  else if (isa<WhileStmt>(parent))
    what = "the body of a while loop";
  else if (isa<DoStmt>(parent))
    what = "the body of a do loop";
  else if (auto *i = dyn_cast<IfStmt>(parent))
    what = i->getElse() == body ? "the else branch of an if" : "the then branch of an if";
  else
    what = std::string("the body of a ") + parent->getStmtClassName();
  return what + " written without braces";
}

SourceLocation cudal1::statementEnd(ASTContext &ctx, const Stmt *s) {
  const SourceManager &sm = ctx.getSourceManager();
  // The last nested body decides: a block ends at its brace, a declaration
  // at its `;`, anything else (an expression, return, do-while) before one.
  while (true) {
    if (auto *f = dyn_cast<ForStmt>(s))
      s = f->getBody();
    else if (auto *r = dyn_cast<CXXForRangeStmt>(s))
      s = r->getBody();
    else if (auto *w = dyn_cast<WhileStmt>(s))
      s = w->getBody();
    else if (auto *i = dyn_cast<IfStmt>(s))
      s = i->getElse() ? i->getElse() : i->getThen();
    else
      break;
  }
  CharSourceRange r = statementRange(ctx, s);
  if (r.isInvalid())
    return SourceLocation();
  if (isa<CompoundStmt>(s) || isa<DeclStmt>(s) || isa<NullStmt>(s))
    return r.getEnd();
  return Lexer::findLocationAfterToken(r.getEnd().getLocWithOffset(-1), tok::semi, sm,
                                       ctx.getLangOpts(),
                                       /*SkipTrailingWhitespaceAndNewLine=*/false);
}

std::string cudal1::writtenByMacro(ASTContext &ast, const Stmt *s, const std::string &what) {
  const SourceManager &sm = ast.getSourceManager();
  SourceLocation at = s->getBeginLoc().isMacroID() ? s->getBeginLoc() : s->getEndLoc();
  if (!at.isMacroID())
    return "";
  std::string macro = Lexer::getImmediateMacroNameForDiagnostics(at, sm, ast.getLangOpts()).str();
  std::string name = macro.empty() ? "a macro" : "macro " + macro;
  PresumedLoc def = sm.getPresumedLoc(sm.getSpellingLoc(at));
  if (sm.isMacroArgExpansion(at))
    return what + " is an argument of " + name +
           " (the macro's expansion, not the file, decides what surrounds it)";
  std::string where = def.isValid() ? std::string(" (") + def.getFilename() + ":" +
                                          std::to_string(def.getLine()) + ")"
                                    : "";
  return what + " is written inside " + name + where + "; cudal1 does not edit macro expansions";
}

std::string cudal1::roomAround(ASTContext &ast, const Stmt *s, const std::string &what) {
  // A statement that is one whole macro invocation (CHECK(call);) is a
  // statement like any other; inside one, the macro decides.
  if (std::string m = writtenByMacro(ast, s, what); !m.empty())
    if (ast.getSourceManager().isMacroArgExpansion(s->getBeginLoc()) ||
        statementRange(ast, s).isInvalid())
      return m;
  const Stmt *p = parentStmt(ast, s);
  if (!p)
    return what + " is not inside a function body";
  if (isa<CompoundStmt>(p))
    return "";
  if (const Stmt *loop = bracelessParent(ast, s)) {
    if (loop->getBeginLoc().isMacroID())
      return what + " is " + bracelessPlace(loop, s) + ", and a macro writes it";
    if (statementRange(ast, s).isInvalid() || statementEnd(ast, s).isInvalid())
      return what + " is " + bracelessPlace(loop, s) + ", and its end is not in the file (a macro)";
    return "";
  }
  if (isa<Expr>(p))
    return what + " is an operand of a larger expression";
  return what + " is not a statement of a block (it is part of a " +
         std::string(p->getStmtClassName()) + ")";
}

void cudal1::makeRoomAround(TransformContext &ctx, const Stmt *s) {
  ASTContext &ast = ctx.unit.ast();
  if (!bracelessParent(ast, s))
    return;
  CharSourceRange r = statementRange(ast, s);
  SourceLocation end = statementEnd(ast, s);
  if (r.isValid() && end.isValid())
    ctx.braceStatement(CharSourceRange::getCharRange(r.getBegin(), end));
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

const Stmt *cudal1::loopBody(const Stmt *loop) {
  if (auto *f = dyn_cast<ForStmt>(loop))
    return f->getBody();
  if (auto *w = dyn_cast<WhileStmt>(loop))
    return w->getBody();
  if (auto *d = dyn_cast<DoStmt>(loop))
    return d->getBody();
  if (auto *r = dyn_cast<CXXForRangeStmt>(loop))
    return r->getBody();
  return nullptr;
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

namespace {
std::string computeLaunchConflict(TransformContext &ctx, unsigned a, unsigned b,
                                  const VarSet &fresh, bool sameThreadOk);
} // namespace

std::string cudal1::launchConflict(TransformContext &ctx, unsigned a, unsigned b,
                                   const VarSet &fresh, bool sameThreadOk) {
  auto key =
      std::make_tuple(a, b, sameThreadOk, std::vector<const VarDecl *>(fresh.begin(), fresh.end()));
  auto it = ctx.launchConflictOf.find(key);
  if (it == ctx.launchConflictOf.end())
    it = ctx.launchConflictOf
             .emplace(std::move(key), computeLaunchConflict(ctx, a, b, fresh, sameThreadOk))
             .first;
  return it->second;
}

namespace {
std::string computeLaunchConflict(TransformContext &ctx, unsigned a, unsigned b,
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
} // namespace

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
