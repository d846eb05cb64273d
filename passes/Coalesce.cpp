// coalesce: a kernel written with threadIdx.y along the contiguous dimension
// makes every warp touch 32 rows. Swapping the roles of x and y in the kernel
// and in its launches relabels the threads exactly, so only the warp grouping
// changes, and with it which accesses coalesce.
#include "Coalesce.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <set>

#define DEBUG_TYPE "coalesce"

using namespace clang;
using namespace cudal1;

namespace {

bool isBuiltinVar(const ValueDecl *d) {
  auto *vd = dyn_cast<VarDecl>(d);
  if (!vd || !vd->getDeclContext()->getRedeclContext()->isTranslationUnit())
    return false;
  StringRef n = vd->getName();
  return n == "threadIdx" || n == "blockIdx" || n == "blockDim" || n == "gridDim";
}

/// The uses of threadIdx, blockIdx, blockDim and gridDim in a body.
class BuiltinUses : public RecursiveASTVisitor<BuiltinUses> {
public:
  struct Member {
    SourceLocation loc; ///< the x/y/z token
    std::string text;   ///< e.g. threadIdx.x
  };
  std::map<unsigned, Member> members;
  std::set<unsigned> covered;       ///< builtins read through .x/.y/.z
  std::vector<SourceLocation> refs; ///< every reference to a builtin
  std::vector<SourceLocation> volatiles, asms;

  bool VisitMSPropertyRefExpr(MSPropertyRefExpr *e) {
    const Expr *base = e->getBaseExpr()->IgnoreParenImpCasts();
    if (auto *ove = dyn_cast<OpaqueValueExpr>(base); ove && ove->getSourceExpr())
      base = ove->getSourceExpr()->IgnoreParenImpCasts();
    auto *dre = dyn_cast<DeclRefExpr>(base);
    if (!dre || !isBuiltinVar(dre->getDecl()))
      return true;
    covered.insert(dre->getLocation().getRawEncoding());
    members[e->getMemberLoc().getRawEncoding()] = {e->getMemberLoc(),
                                                   dre->getDecl()->getName().str() + "." +
                                                       e->getPropertyDecl()->getName().str()};
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *e) {
    if (isBuiltinVar(e->getDecl()))
      refs.push_back(e->getLocation());
    return true;
  }
  bool VisitExpr(Expr *e) {
    if (e->getType().isVolatileQualified())
      volatiles.push_back(e->getBeginLoc());
    return true;
  }
  bool VisitAsmStmt(AsmStmt *s) {
    asms.push_back(s->getBeginLoc());
    return true;
  }
};

class CalleeCollector : public RecursiveASTVisitor<CalleeCollector> {
public:
  std::vector<const FunctionDecl *> callees;
  bool VisitCallExpr(CallExpr *ce) {
    if (const FunctionDecl *f = ce->getDirectCallee())
      callees.push_back(f);
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *ce) {
    callees.push_back(ce->getConstructor());
    return true;
  }
};

/// Why a function the kernel calls (transitively) depends on the thread
/// layout: it reads a builtin, uses warp intrinsics or inline assembly.
std::string calleeProblem(const FunctionDecl *fd, std::set<const FunctionDecl *> &visited,
                          unsigned depth) {
  CalleeCollector cc;
  cc.TraverseStmt(const_cast<Stmt *>(fd->getBody()));
  for (const FunctionDecl *f : cc.callees) {
    const FunctionDecl *def = nullptr;
    if (!f->hasBody(def) || !def || !visited.insert(def).second)
      continue;
    BuiltinUses u;
    u.TraverseStmt(const_cast<Stmt *>(def->getBody()));
    if (!u.refs.empty())
      return "the function " + def->getNameAsString() + " it calls reads the thread or block index";
    if (usesWarpIntrinsics(def))
      return "the function " + def->getNameAsString() + " it calls uses warp-level intrinsics";
    if (!u.asms.empty())
      return "the function " + def->getNameAsString() + " it calls contains inline assembly";
    if (depth < 8)
      if (std::string why = calleeProblem(def, visited, depth + 1); !why.empty())
        return why;
  }
  return "";
}

/// Every body that shares the kernel's source: the template pattern and
/// each instantiation (they may differ where `if constexpr` drops code).
std::vector<const Stmt *> bodies(TransformContext &ctx, unsigned kernel) {
  std::vector<const Stmt *> out;
  for (unsigned s : kernelsSharingDefinition(ctx.model(), kernel))
    out.push_back(ctx.unit.kernelDecl(s)->getBody());
  const FunctionDecl *pat = editableDecl(ctx.unit.kernelDecl(kernel));
  if (pat != ctx.unit.kernelDecl(kernel) && pat->getBody())
    out.push_back(pat->getBody());
  return out;
}

unsigned lineOf(TransformContext &ctx, SourceLocation loc) {
  const SourceManager &sm = ctx.unit.ast().getSourceManager();
  return sm.getPresumedLineNumber(sm.getFileLoc(loc));
}

/// Accesses that the swap makes unit-stride along threadIdx.x (gain) and
/// those it stops being (loss), or why the strides cannot be used.
struct StrideCount {
  unsigned gain = 0, loss = 0;
  std::string why;
};

StrideCount countStrides(TransformContext &ctx, unsigned kernel) {
  StrideCount c;
  IndexSpace space(ctx.mlir);
  auto unit = [](const Stride &s) {
    return s.kind == Stride::Kind::Constant && (s.value == 1 || s.value == -1);
  };
  auto spread = [](const Stride &s) {
    return s.kind == Stride::Kind::Symbolic ||
           (s.kind == Stride::Kind::Constant && s.value != 0 && s.value != 1 && s.value != -1);
  };
  for (const MemAccess &a : ctx.model().kernels[kernel].accesses) {
    auto e = space.parse(a.normalized);
    if (!e)
      continue;
    if (e->isFunctionOfDim(IndexSpace::ThreadZ) || e->isFunctionOfDim(IndexSpace::BlockZ)) {
      c.why = "the kernel uses the z thread dimension";
      return c;
    }
    Stride sx = strideAlong(*e, IndexSpace::ThreadX, space);
    Stride sy = strideAlong(*e, IndexSpace::ThreadY, space);
    if (unit(sy) && spread(sx))
      ++c.gain;
    if (unit(sx) && (spread(sy) || sy.kind == Stride::Kind::Unknown))
      ++c.loss;
  }
  return c;
}

/// A call in `e` to a function that may have side effects (not constexpr,
/// not from a system header), or "".
std::string userCall(TransformContext &ctx, const Stmt *e) {
  if (!e)
    return "";
  if (auto *ce = dyn_cast<CallExpr>(e)) {
    const FunctionDecl *f = ce->getDirectCallee();
    const SourceManager &sm = ctx.unit.ast().getSourceManager();
    if (!f || (!f->isConstexpr() && !sm.isInSystemHeader(f->getLocation())))
      return f ? f->getNameAsString() + "()" : "a function through a pointer";
  }
  for (const Stmt *c : e->children())
    if (std::string f = userCall(ctx, c); !f.empty())
      return f;
  return "";
}

/// `e` with x and y swapped, as a dim3 expression.
std::string swapped(ASTContext &ast, const Expr *e) {
  // dim3(a, b[, c]) written out: swap the arguments themselves.
  auto *ce = dyn_cast<CXXTemporaryObjectExpr>(e);
  if (ce && ce->getConstructor()->getParent()->getName() == "dim3") {
    std::vector<std::string> args;
    for (const Expr *a : ce->arguments())
      if (!isa<CXXDefaultArgExpr>(a))
        args.push_back(spelled(ast, a));
    if (args.size() == 1)
      return "dim3(1, " + args[0] + ")";
    if (args.size() == 2)
      return "dim3(" + args[1] + ", " + args[0] + ")";
    if (args.size() == 3)
      return "dim3(" + args[1] + ", " + args[0] + ", " + args[2] + ")";
  }
  std::string g = spelled(ast, e);
  if (e->getType()->isIntegerType())
    return "dim3(1, " + g + ")";
  return "dim3(dim3(" + g + ").y, dim3(" + g + ").x, dim3(" + g + ").z)";
}

} // namespace

std::string Coalesce::legality(TransformContext &ctx, Target t) const {
  const FunctionDecl *fd = ctx.unit.kernelDecl(t.kernel);
  if (ctx.model().kernels[t.kernel].fromHeader)
    return "the kernel is defined in a header; cudal1 rewrites only the file it is given";
  // 1. The thread layout is only visible through the builtins.
  if (usesWarpIntrinsics(fd))
    return "the kernel uses warp-level intrinsics, which depend on how threads form warps";
  bool usesY = false;
  for (const Stmt *body : bodies(ctx, t.kernel)) {
    BuiltinUses u;
    u.TraverseStmt(const_cast<Stmt *>(body));
    for (SourceLocation r : u.refs) {
      if (r.isMacroID())
        return "a thread or block index at line " + std::to_string(lineOf(ctx, r)) +
               " is written inside a macro";
      if (!u.covered.count(r.getRawEncoding()))
        return "the kernel uses a builtin index variable as a whole at line " +
               std::to_string(lineOf(ctx, r));
    }
    for (const auto &[key, m] : u.members) {
      if (m.loc.isMacroID())
        return "a thread or block index at line " + std::to_string(lineOf(ctx, m.loc)) +
               " is written inside a macro";
      if (llvm::StringRef(m.text).ends_with(".z"))
        return "the kernel uses the z thread dimension (" + m.text + ")";
      usesY |= llvm::StringRef(m.text).ends_with(".y");
    }
    if (!u.volatiles.empty())
      return "the kernel uses volatile memory at line " +
             std::to_string(lineOf(ctx, u.volatiles[0])) +
             " (warp-synchronous code depends on how threads form warps)";
    if (!u.asms.empty())
      return "the kernel contains inline assembly";
  }
  if (!usesY)
    return "the kernel does not use the y thread dimension";
  std::set<const FunctionDecl *> visited;
  if (std::string why = calleeProblem(fd, visited, 0); !why.empty())
    return why;
  // 2. It pays: more accesses become unit-stride along threadIdx.x than stop being.
  StrideCount c = countStrides(ctx, t.kernel);
  if (!c.why.empty())
    return c.why;
  if (c.gain <= c.loss)
    return "swapping x and y makes " + std::to_string(c.gain) +
           " access(es) unit-stride along threadIdx.x and " + std::to_string(c.loss) +
           " no longer: no gain";
  // 3. Every launch can be rewritten.
  std::vector<unsigned> launches = distinctLaunches(ctx, t.kernel);
  if (launches.empty())
    return "the kernel has no launch in this file, and its launches must swap x and y too";
  for (unsigned id : launches)
    for (unsigned which : {0u, 1u}) {
      const Expr *e = launchConfigArg(ctx, id, which);
      if (e)
        e = e->IgnoreUnlessSpelledInSource();
      if (!e || e->HasSideEffects(ctx.unit.ast(), /*IncludePossibleEffects=*/false))
        return "the configuration of launch #" + std::to_string(id) + " has side effects";
      if (std::string f = userCall(ctx, e); !f.empty())
        return "the configuration of launch #" + std::to_string(id) + " calls " + f +
               ", which the rewrite would evaluate more than once";
      if (std::string why; configRange(ctx, id, which, &why).isInvalid())
        return why;
      const SourceManager &sm = ctx.unit.ast().getSourceManager();
      if (!sm.isInMainFile(sm.getFileLoc(e->getBeginLoc())))
        return "launch #" + std::to_string(id) + " is in a header";
    }
  return referencedOutsideLaunches(ctx, t.kernel);
}

std::vector<ParamSpace> Coalesce::space(TransformContext &, Target) const { return {}; }

llvm::Error Coalesce::apply(TransformContext &ctx, Target t, const PlanStep &) const {
  // 1. The kernel: x ↔ y on every builtin (one edit per source location).
  std::map<unsigned, BuiltinUses::Member> members;
  for (const Stmt *body : bodies(ctx, t.kernel)) {
    BuiltinUses u;
    u.TraverseStmt(const_cast<Stmt *>(body));
    members.insert(u.members.begin(), u.members.end());
  }
  for (const auto &[key, m] : members) {
    char axis = m.text.back();
    if (axis == 'x' || axis == 'y')
      ctx.rewriter.ReplaceText(m.loc, 1, axis == 'x' ? "y" : "x");
  }
  // 2. The launches: grid and block with x and y swapped.
  ASTContext &ast = ctx.unit.ast();
  for (unsigned id : distinctLaunches(ctx, t.kernel))
    for (unsigned which : {0u, 1u}) {
      const Expr *e = launchConfigArg(ctx, id, which)->IgnoreUnlessSpelledInSource();
      ctx.rewriter.ReplaceText(configRange(ctx, id, which), swapped(ast, e));
    }
  return llvm::Error::success();
}
