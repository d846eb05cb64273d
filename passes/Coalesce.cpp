// coalesce: a kernel written with threadIdx.y along the contiguous dimension
// makes every warp touch 32 rows. Swapping the roles of x and y in the kernel
// and in its launches relabels the threads exactly, so only the warp grouping
// changes, and with it which accesses coalesce.
//
// The 1-D form: a guarded per-thread kernel that splits its id over an
// R x C space as (r = id % R, c = id / R) but reads [r * C + c] walks down
// columns, C elements apart from thread to thread. Splitting the same id as
// (r = id / C, c = id % C) visits the same (r, c) pairs, each once, with
// adjacent threads on adjacent columns; the launch is unchanged.
#include "Coalesce.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Rewrite/GridStrideLoop.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <cctype>
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

// ---- the 1-D form ------------------------------------------------------------

/// A guarded per-thread kernel whose id is split over `limit = A * B` by
/// `fast = id % D` and `slow = id / D`, D being A or B; `other` is the other
/// factor. Extents are compared as spelled without parentheses.
struct FlatSplit {
  const VarDecl *id = nullptr, *fast = nullptr, *slow = nullptr;
  const Expr *fastInit = nullptr, *slowInit = nullptr;
  std::string divisor, other;
};

const Expr *bare(const Expr *e) { return e ? e->IgnoreParenImpCasts() : nullptr; }

/// Whether `e`, without parentheses and casts, is the variable `v` itself.
bool isVar(const Expr *e, const VarDecl *v) {
  auto *d = dyn_cast_or_null<DeclRefExpr>(bare(e));
  return d && d->getDecl() == v;
}

/// Integer parameters and constants only, none of them changed in `body`
/// (every thread must see the same extent); else why not.
std::string uniformExtent(ASTContext &ast, const Expr *e, const Stmt *body) {
  std::string why, text = spelled(ast, e);
  std::set<const Decl *> params;
  forEachStmt(e, [&](const Stmt *c) {
    if (auto *r = dyn_cast<DeclRefExpr>(c)) {
      auto *pv = dyn_cast<ParmVarDecl>(r->getDecl());
      if (!pv || !pv->getType()->isIntegerType())
        why = "the extent '" + text + "' is not made of integer parameters and constants";
      else
        params.insert(pv);
    } else if (isa<ArraySubscriptExpr>(c) || isa<CallExpr>(c) || isa<MemberExpr>(c)) {
      why = "the extent '" + text + "' reads memory or calls";
    }
  });
  if (!why.empty())
    return why;
  forEachStmt(body, [&](const Stmt *c) {
    const DeclRefExpr *d = changedVariable(c);
    if (d && params.count(d->getDecl()) && why.empty())
      why = "the kernel changes (or takes the address of) '" + d->getDecl()->getNameAsString() +
            "', an extent of the split";
  });
  return why;
}

/// The split of a 1-D kernel, or why it has none the 1-D form can turn.
std::string matchFlatSplit(TransformContext &ctx, const FunctionDecl *fd, FlatSplit &f) {
  ASTContext &ast = ctx.unit.ast();
  std::optional<gridstride::GuardedKernel> g = gridstride::matchGuarded(ast, fd);
  if (!g)
    return "the kernel does not use the y thread dimension, and is not a guarded per-thread "
           "kernel (`int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) ...`) for the "
           "1-D form";
  f.id = g->index;
  // `id < L` or `L > id` (`id >= L` or `L <= id` before an early return):
  // exactly the ids 0 .. L - 1 do the work.
  const Expr *bound = nullptr;
  if (g->bound) {
    BinaryOperatorKind op = g->bound->getOpcode();
    if (isVar(g->bound->getLHS(), f.id) && op == (g->earlyReturn ? BO_GE : BO_LT))
      bound = g->bound->getRHS();
    else if (isVar(g->bound->getRHS(), f.id) && op == (g->earlyReturn ? BO_LE : BO_GT))
      bound = g->bound->getLHS();
  }
  auto *limit = dyn_cast_or_null<BinaryOperator>(bare(bound));
  if (!limit || limit->getOpcode() != BO_Mul)
    return "the kernel does not use the y thread dimension, and its guard is not 'id < A * B' "
           "(the 1-D form needs the extents of the space its id is split over)";
  std::string a = spelled(ast, bare(limit->getLHS())), b = spelled(ast, bare(limit->getRHS()));
  // The split: `T fast = id % D;` and `T slow = id / D;`, and no other use of the id.
  unsigned uses = 0;
  std::string why;
  forEachStmt(fd->getBody(), [&](const Stmt *c) {
    if (auto *d = dyn_cast<DeclRefExpr>(c); d && d->getDecl() == f.id)
      ++uses;
    auto *vd = dyn_cast<DeclStmt>(c);
    if (!vd)
      return;
    for (const Decl *d : vd->decls()) {
      auto *v = dyn_cast<VarDecl>(d);
      auto *bo = v ? dyn_cast_or_null<BinaryOperator>(bare(v->getInit())) : nullptr;
      if (!bo || !isVar(bo->getLHS(), f.id) ||
          (bo->getOpcode() != BO_Rem && bo->getOpcode() != BO_Div))
        continue;
      std::string d2 = spelled(ast, bare(bo->getRHS()));
      if (!f.divisor.empty() && d2 != f.divisor && why.empty())
        why = "the 1-D form: the id is split by both '" + f.divisor + "' and '" + d2 + "'";
      f.divisor = d2;
      (bo->getOpcode() == BO_Rem ? f.fast : f.slow) = v;
      (bo->getOpcode() == BO_Rem ? f.fastInit : f.slowInit) = bo;
    }
  });
  if (!why.empty())
    return why;
  if (!f.fast || !f.slow)
    return "the kernel does not use the y thread dimension, and its id is not split into two "
           "indices by '%' and '/' (the 1-D form)";
  if (f.divisor != a && f.divisor != b)
    return "the 1-D form: the id is split by '" + f.divisor + "', which is neither factor of " +
           "the guard's '" + a + " * " + b + "'";
  f.other = f.divisor == a ? b : a;
  if (uses != 3)
    return "the 1-D form: the id '" + f.id->getNameAsString() +
           "' is used beyond its guard and its split (each thread's work must depend on its "
           "(row, column) only)";
  for (const Expr *e : {limit->getLHS(), limit->getRHS()})
    if (std::string w = uniformExtent(ast, e, fd->getBody()); !w.empty())
      return "the 1-D form: " + w;
  for (const Stmt *s : g->perElement)
    if (gridstride::usesThreadIdentity(s))
      return "the 1-D form: the per-element work uses the thread identity, a barrier or a warp "
             "intrinsic (which thread handles an element would matter)";
  // The two indices keep the values the split gave them.
  forEachStmt(fd->getBody(), [&](const Stmt *c) {
    const DeclRefExpr *d = changedVariable(c);
    if (d && (d->getDecl() == f.fast || d->getDecl() == f.slow) && why.empty())
      why = "the 1-D form: the kernel changes (or takes the address of) an index of the split";
  });
  return why;
}

/// Accesses `[f * other + s]` (adjacent across threads after the turn, when
/// the slow index `s` varies fastest) against `[s * divisor + f]` (adjacent
/// before it, `f` being the fast index `id % divisor`).
StrideCount countFlatStrides(ASTContext &ast, const FunctionDecl *fd, const FlatSplit &f) {
  StrideCount c;
  auto isTerm = [&](const Expr *mul, const Expr *add, const VarDecl *row, const VarDecl *col,
                    const std::string &width) {
    auto *m = dyn_cast<BinaryOperator>(bare(mul));
    if (!m || m->getOpcode() != BO_Mul || !isVar(add, col))
      return false;
    return (isVar(m->getLHS(), row) && spelled(ast, bare(m->getRHS())) == width) ||
           (isVar(m->getRHS(), row) && spelled(ast, bare(m->getLHS())) == width);
  };
  auto rowMajor = [&](const Expr *idx, const VarDecl *row, const VarDecl *col,
                      const std::string &width) {
    auto *add = dyn_cast<BinaryOperator>(bare(idx));
    return add && add->getOpcode() == BO_Add &&
           (isTerm(add->getLHS(), add->getRHS(), row, col, width) ||
            isTerm(add->getRHS(), add->getLHS(), row, col, width));
  };
  forEachStmt(fd->getBody(), [&](const Stmt *s) {
    auto *a = dyn_cast<ArraySubscriptExpr>(s);
    if (!a)
      return;
    if (rowMajor(a->getIdx(), f.fast, f.slow, f.other))
      ++c.gain;
    if (rowMajor(a->getIdx(), f.slow, f.fast, f.divisor))
      ++c.loss;
  });
  return c;
}

std::string parenthesized(const std::string &s) {
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_')
      return "(" + s + ")";
  return s;
}

/// Whether a body of the kernel names threadIdx.y, blockIdx.y, ... (the
/// 2-D form swaps them; the 1-D form is for kernels without).
bool usesThreadY(TransformContext &ctx, unsigned kernel) {
  for (const Stmt *body : bodies(ctx, kernel)) {
    BuiltinUses u;
    u.TraverseStmt(const_cast<Stmt *>(body));
    for (const auto &[key, m] : u.members)
      if (llvm::StringRef(m.text).ends_with(".y"))
        return true;
  }
  return false;
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
  std::set<const FunctionDecl *> visited;
  if (!usesY) {
    FlatSplit f;
    if (std::string why = matchFlatSplit(ctx, fd, f); !why.empty())
      return why;
    if (std::string why = calleeProblem(fd, visited, 0); !why.empty())
      return why;
    StrideCount c = countFlatStrides(ctx.unit.ast(), fd, f);
    if (c.gain <= c.loss)
      return "the 1-D form: splitting the id by '" + f.other + "' instead of '" + f.divisor +
             "' makes " + std::to_string(c.gain) + " access(es) [" + f.fast->getNameAsString() +
             " * " + f.other + " + " + f.slow->getNameAsString() +
             "] adjacent across threads and " + std::to_string(c.loss) + " no longer: no gain";
    return "";
  }
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
  // The 1-D form: the id split by the other extent, the launch unchanged.
  // Its indices trade roles: the slow one (id / D) becomes id % OTHER.
  const FunctionDecl *fd = ctx.unit.kernelDecl(t.kernel);
  FlatSplit f;
  if (!usesThreadY(ctx, t.kernel) && matchFlatSplit(ctx, fd, f).empty()) {
    std::string id = f.id->getNameAsString(), w = parenthesized(f.other);
    ctx.rewriter.ReplaceText(f.fastInit->getSourceRange(), id + " / " + w);
    ctx.rewriter.ReplaceText(f.slowInit->getSourceRange(), id + " % " + w);
    return llvm::Error::success();
  }
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
