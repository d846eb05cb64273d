// Helpers shared by the passes.
#include "cudal1/Rewrite/RewriteUtils.h"
#include "cudal1/Rewrite/HostCode.h"

#include "cudal1/Analysis/AffineIndex.h"
#include <set>

#include "mlir/IR/MLIRContext.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

using namespace clang;
using namespace cudal1;

void cudal1::forEachStmt(const Stmt *s, const std::function<void(const Stmt *)> &fn) {
  if (!s)
    return;
  fn(s);
  if (auto *ove = dyn_cast<OpaqueValueExpr>(s))
    return forEachStmt(ove->getSourceExpr(), fn);
  for (const Stmt *c : s->children())
    forEachStmt(c, fn);
}

const DeclRefExpr *cudal1::changedVariable(const Stmt *s) {
  const Expr *target = nullptr;
  if (auto *bo = dyn_cast<BinaryOperator>(s); bo && bo->isAssignmentOp())
    target = bo->getLHS();
  else if (auto *uo = dyn_cast<UnaryOperator>(s);
           uo && (uo->isIncrementDecrementOp() || uo->getOpcode() == UO_AddrOf))
    target = uo->getSubExpr();
  return target ? dyn_cast<DeclRefExpr>(target->IgnoreParenImpCasts()) : nullptr;
}

bool cudal1::refersTo(const clang::Stmt *s, const clang::VarDecl *v) {
  bool found = false;
  forEachStmt(s, [&](const clang::Stmt *c) {
    if (auto *dre = llvm::dyn_cast<clang::DeclRefExpr>(c); dre && dre->getDecl() == v)
      found = true;
  });
  return found;
}

llvm::DenseSet<const clang::VarDecl *> cudal1::declaredIn(const clang::Stmt *s) {
  llvm::DenseSet<const clang::VarDecl *> out;
  forEachStmt(s, [&](const clang::Stmt *c) {
    if (auto *ds = llvm::dyn_cast<clang::DeclStmt>(c))
      for (const clang::Decl *d : ds->decls())
        if (auto *vd = llvm::dyn_cast<clang::VarDecl>(d))
          out.insert(vd);
  });
  return out;
}

std::string cudal1::spelled(ASTContext &ctx, const Stmt *s) {
  const SourceManager &sm = ctx.getSourceManager();
  CharSourceRange r = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(s->getSourceRange()),
                                               sm, ctx.getLangOpts());
  return r.isValid() ? Lexer::getSourceText(r, sm, ctx.getLangOpts()).str() : "";
}

const Expr *cudal1::launchConfigArg(TransformContext &ctx, unsigned launch, unsigned which) {
  const CUDAKernelCallExpr *kc = ctx.unit.launchExpr(launch);
  const CallExpr *cfg = kc->getConfig();
  if (!cfg || which >= cfg->getNumArgs())
    return nullptr;
  return cfg->getArg(which);
}

clang::CharSourceRange cudal1::configRange(TransformContext &ctx, unsigned launch, unsigned which,
                                           std::string *why) {
  ASTContext &ast = ctx.unit.ast();
  const char *what = which == 0 ? "the grid of launch #" : "the block of launch #";
  const Expr *e = launchConfigArg(ctx, launch, which);
  if (e)
    e = e->IgnoreUnlessSpelledInSource();
  CharSourceRange r = e ? statementRange(ast, e) : CharSourceRange();
  if (r.isInvalid()) {
    if (why)
      *why = !e ? std::string(what) + std::to_string(launch) + " is not written"
                : writtenByMacro(ast, e, what + std::to_string(launch));
    if (why && why->empty())
      *why = std::string(what) + std::to_string(launch) + " has no text of its own in the file";
    return CharSourceRange();
  }
  // A macro that expands its argument twice makes two launches of one text.
  for (const LaunchSite &o : ctx.model().launches) {
    if (o.id == launch)
      continue;
    const Expr *oe = launchConfigArg(ctx, o.id, which);
    if (!oe || !oe->getBeginLoc().isMacroID())
      continue;
    CharSourceRange orr = statementRange(ast, oe->IgnoreUnlessSpelledInSource());
    if (orr.isValid() && orr.getBegin() == r.getBegin()) {
      if (why)
        *why = std::string(what) + std::to_string(launch) +
               " is written once for several launches (#" + std::to_string(launch) + " and #" +
               std::to_string(o.id) + ": a macro expands it more than once)";
      return CharSourceRange();
    }
  }
  return r;
}

bool cudal1::configDims(const Expr *e, ASTContext &ast, std::vector<std::optional<uint64_t>> &out) {
  const Expr *s = e->IgnoreUnlessSpelledInSource();
  if (auto *dre = dyn_cast<DeclRefExpr>(s))
    if (auto *vd = dyn_cast<VarDecl>(dre->getDecl());
        vd && vd->hasInit() && !vd->getType()->isIntegerType())
      s = vd->getInit()->IgnoreUnlessSpelledInSource();
  auto value = [&](const Expr *a) -> std::optional<uint64_t> {
    Expr::EvalResult r;
    if (a->EvaluateAsInt(r, ast))
      return r.Val.getInt().getZExtValue();
    return std::nullopt;
  };
  if (s->getType()->isIntegerType()) {
    out = {value(s)};
    return true;
  }
  auto *ce = dyn_cast<CXXConstructExpr>(s);
  if (!ce)
    return false;
  for (const Expr *a : ce->arguments())
    if (!isa<CXXDefaultArgExpr>(a))
      out.push_back(value(a));
  return !out.empty();
}

std::string cudal1::oneDimLaunch(TransformContext &ctx, unsigned launch,
                                 std::optional<uint64_t> &blockThreads) {
  const Expr *gridArg = launchConfigArg(ctx, launch, 0),
             *blockArg = launchConfigArg(ctx, launch, 1);
  std::vector<std::optional<uint64_t>> gd, bd;
  std::string at = "launch #" + std::to_string(launch);
  if (!gridArg || !blockArg || !configDims(gridArg, ctx.unit.ast(), gd) ||
      !configDims(blockArg, ctx.unit.ast(), bd))
    return at + ": its grid and block are not an integer or a dim3";
  for (size_t i = 1; i < gd.size(); ++i)
    if (gd[i] != 1u)
      return at + " has a grid that is not 1-D";
  for (size_t i = 1; i < bd.size(); ++i)
    if (bd[i] != 1u)
      return at + " has a block that is not 1-D";
  blockThreads = bd[0];
  return "";
}

std::optional<unsigned> cudal1::constantBlockSize(TransformContext &ctx, unsigned launch) {
  const Expr *e = launchConfigArg(ctx, launch, 1);
  std::vector<std::optional<uint64_t>> dims;
  if (!e || !configDims(e, ctx.unit.ast(), dims))
    return std::nullopt;
  unsigned threads = 1;
  for (const std::optional<uint64_t> &d : dims) {
    if (!d)
      return std::nullopt;
    threads *= unsigned(*d);
  }
  return threads;
}

namespace {
class CallCollector : public RecursiveASTVisitor<CallCollector> {
public:
  std::vector<std::string> names;
  bool VisitCallExpr(CallExpr *ce) {
    if (const FunctionDecl *f = ce->getDirectCallee())
      names.push_back(f->getNameAsString());
    return true;
  }
};
} // namespace

std::vector<std::string> cudal1::calleeNames(const FunctionDecl *fd) {
  CallCollector c;
  c.TraverseStmt(const_cast<Stmt *>(fd->getBody()));
  return c.names;
}

bool cudal1::usesWarpIntrinsics(const FunctionDecl *fd) {
  for (const std::string &n : calleeNames(fd)) {
    llvm::StringRef s(n);
    if (s.starts_with("__shfl") || s.starts_with("__ballot") || s.starts_with("__any") ||
        s.starts_with("__all") || s == "__activemask" || s == "__syncwarp" ||
        s.starts_with("__reduce_") || s.starts_with("__match"))
      return true;
  }
  return false;
}

const FunctionDecl *cudal1::editableDecl(const FunctionDecl *fd) {
  if (const FunctionDecl *p = fd->getTemplateInstantiationPattern())
    return p;
  return fd;
}

std::string cudal1::dependsOnlyOnGlobalIds(TransformContext &ctx, unsigned kernel) {
  const Kernel &k = ctx.model().kernels[kernel];
  IndexSpace space(ctx.mlir);
  // A grid-stride loop counter is folded into the logical index first: such
  // a loop covers every element whatever the grid and block.
  llvm::SmallVector<mlir::AffineExpr> fold;
  bool folded = false;
  auto check = [&](const std::string &text) -> bool {
    auto e = space.parse(text);
    if (!e || usesOpaque(*e, space))
      return false;
    mlir::AffineExpr x = *e;
    if (folded) {
      fold.resize(space.numDims(), mlir::AffineExpr());
      for (unsigned d = 0; d < space.numDims(); ++d)
        if (!fold[d])
          fold[d] = mlir::getAffineDimExpr(d, &ctx.mlir);
      x = x.replaceDims(fold);
    }
    return dependsOnGlobalIdsOnly(x, space);
  };
  for (const MemAccess &a : k.accesses) {
    folded = false;
    if (auto e = space.parse(a.normalized); e && !usesOpaque(*e, space))
      fold = gridStrideFold(*e, space, folded);
    if (!check(a.normalized))
      return "the index " + a.param + "[" + a.index + "] at line " + std::to_string(a.pos.line) +
             " depends on the block shape, not only on the global thread id";
    for (const Guard &g : a.guards)
      if (!check(g.lhs) || !check(g.rhs))
        return "the condition '" + g.str() + "' depends on the block shape";
  }
  return "";
}

std::vector<unsigned> cudal1::kernelsSharingDefinition(const ProgramModel &m, unsigned kernel) {
  const Kernel &k = m.kernels[kernel];
  if (!k.sameDefinition.empty())
    return k.sameDefinition;
  // A model the front end did not build (a test's).
  std::vector<unsigned> out;
  for (unsigned i = 0; i < m.kernels.size(); ++i) {
    const SourcePos &p = m.kernels[i].pos;
    if (p.line == k.pos.line && p.col == k.pos.col && p.file == k.pos.file)
      out.push_back(i);
  }
  return out;
}

namespace {
/// Finds references to kernels other than as the callee of a <<<>>> launch
/// or an argument of an attribute/occupancy query: a cudaLaunchKernel call or
/// a function pointer launches it with arguments the model does not show.
/// One walk answers for every kernel (the first such reference of each).
class KernelRefs : public RecursiveASTVisitor<KernelRefs> {
public:
  KernelRefs(const SourceManager &sm, std::map<const FunctionDecl *, std::string> &why)
      : sm(sm), why(why) {}
  bool shouldVisitTemplateInstantiations() const { return true; }

  bool VisitCallExpr(CallExpr *ce) {
    if (auto *kc = dyn_cast<CUDAKernelCallExpr>(ce)) {
      allowed.insert(kc->getCallee()->IgnoreParenImpCasts());
      return true;
    }
    static const llvm::StringSet<> queries = {"cudaFuncSetAttribute",
                                              "cudaFuncGetAttributes",
                                              "cudaFuncSetCacheConfig",
                                              "cudaFuncSetSharedMemConfig",
                                              "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                                              "cudaOccupancyMaxPotentialBlockSize",
                                              "cudaOccupancyAvailableDynamicSMemPerBlock"};
    if (const FunctionDecl *f = ce->getDirectCallee(); f && queries.contains(f->getName()))
      for (const Expr *a : ce->arguments()) {
        a = a->IgnoreParenCasts();
        if (auto *uo = dyn_cast<UnaryOperator>(a); uo && uo->getOpcode() == UO_AddrOf)
          a = uo->getSubExpr()->IgnoreParenCasts();
        allowed.insert(a);
      }
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *e) {
    auto *f = dyn_cast<FunctionDecl>(e->getDecl());
    if (!f || allowed.count(e))
      return true;
    const FunctionDecl *key = editableDecl(f)->getCanonicalDecl();
    if (why.count(key))
      return true;
    why[key] = "the kernel is referenced outside a <<<>>> launch at line " +
               std::to_string(sm.getPresumedLineNumber(sm.getFileLoc(e->getLocation()))) +
               ", so some of its launches are not visible";
    return true;
  }

  const SourceManager &sm;
  std::map<const FunctionDecl *, std::string> &why;
  llvm::DenseSet<const Expr *> allowed;
};
} // namespace

std::string cudal1::referencedOutsideLaunches(TransformContext &ctx, unsigned k) {
  ASTContext &ast = ctx.unit.ast();
  if (!ctx.outsideReferences) {
    ctx.outsideReferences.emplace();
    KernelRefs refs(ast.getSourceManager(), *ctx.outsideReferences);
    for (Decl *d : ast.getTranslationUnitDecl()->decls())
      if (ast.getSourceManager().isInMainFile(ast.getSourceManager().getFileLoc(d->getLocation())))
        refs.TraverseDecl(d);
  }
  auto it = ctx.outsideReferences->find(editableDecl(ctx.unit.kernelDecl(k))->getCanonicalDecl());
  return it == ctx.outsideReferences->end() ? "" : it->second;
}

std::vector<unsigned> cudal1::distinctLaunches(TransformContext &ctx, unsigned kernel) {
  std::vector<unsigned> out;
  std::set<std::string> seen;
  for (unsigned s : kernelsSharingDefinition(ctx.model(), kernel))
    for (unsigned id : ctx.launchesOf(s))
      if (seen.insert(ctx.model().launches[id].pos.str()).second)
        out.push_back(id);
  return out;
}
