// warp-rows: a kernel where each thread walks a whole row (matrix-vector
// products, row sums and norms) reads memory with a stride of a row between
// adjacent threads. The rewrite gives each row to a group of LANES
// consecutive lanes: the group strides the row by lane (adjacent lanes read
// adjacent elements: coalesced), combines its partial sums with shuffles,
// and one lane does what followed the loop. Launches keep their coverage:
// LANES times the threads, in blocks of 256.
// layout=spread is the same move for kernels whose threads already read
// adjacent addresses (a column per thread: column sums, softmax over dim 0)
// but are too few to keep the GPU busy: the group's lanes are spread over
// the warp, 32 / LANES apart, so that adjacent lanes keep adjacent columns
// while each column's loop is shared by LANES lanes.
#include "WarpRows.h"
#include "cudal1/Rewrite/GridStrideLoop.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <functional>
#include <tuple>

#include "runtime/warp-rows-device.inc"        // passes/runtime/warp-rows-device.cuh
#include "runtime/warp-rows-host.inc"          // passes/runtime/warp-rows-host.cuh
#include "runtime/warp-rows-spread-device.inc" // passes/runtime/warp-rows-spread-device.cuh

#define DEBUG_TYPE "warp-rows"

using namespace clang;
using namespace cudal1;

namespace {

const char *laneName = "cudal1_lane";
const char *rowsName = "cudal1_rows";
constexpr unsigned kBlock = 256; ///< threads per block of the rewritten launches

enum class Combine { Sum, Max, Min };

/// A loop over the row: `for (int j = A; j < B; ++j)` whose body only
/// accumulates (a reduction) or only writes elements indexed by j (a map).
struct RowLoop {
  const ForStmt *loop = nullptr;
  const VarDecl *var = nullptr;
  const Expr *start = nullptr;
  std::vector<std::pair<const VarDecl *, Combine>> accumulators; ///< empty: a map loop
  /// vector=yes: a reduction whose body is one accumulation reading each
  /// buffer at `X + counter`; its reads become 16-byte loads.
  struct Load {
    const ArraySubscriptExpr *read = nullptr;
    std::string base, offset; ///< the read is base[offset + counter] ("" offset: base[counter])
  };
  const Stmt *accumulation = nullptr; ///< set when vectorizable
  std::vector<Load> loads;
  unsigned width = 0;    ///< elements per 16 bytes (float 4, double 2)
  std::string vectorWhy; ///< why not, when not
};

/// What the rewrite does to each statement of the per-row region.
struct Region {
  gridstride::GuardedKernel shape;
  std::vector<RowLoop> loops;
  std::vector<const Stmt *> laneZero; ///< statements that write memory: lane 0 only
  bool strided = false;   ///< a row loop reads far apart across adjacent threads: packed
  bool coalesced = false; ///< a row loop reads adjacent addresses across them: spread
};

/// Where the lanes of a row's group sit in the warp.
enum class Layout { Packed, Spread };

const VarDecl *localOf(const Expr *e) {
  if (auto *dre = dyn_cast_or_null<DeclRefExpr>(e ? e->IgnoreParenImpCasts() : nullptr))
    if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()); vd && vd->hasLocalStorage())
      return vd;
  return nullptr;
}

/// The pointer variable an lvalue such as p[i], *p or p->f goes through.
const VarDecl *baseOf(const Expr *e) {
  e = e->IgnoreParenImpCasts();
  if (auto *as = dyn_cast<ArraySubscriptExpr>(e))
    return baseOf(as->getBase());
  if (auto *uo = dyn_cast<UnaryOperator>(e); uo && uo->getOpcode() == UO_Deref)
    return baseOf(uo->getSubExpr());
  if (auto *me = dyn_cast<MemberExpr>(e))
    return baseOf(me->getBase());
  if (auto *bo = dyn_cast<BinaryOperator>(e); bo && bo->isAdditiveOp())
    return bo->getLHS()->getType()->isPointerType() ? baseOf(bo->getLHS()) : baseOf(bo->getRHS());
  if (auto *dre = dyn_cast<DeclRefExpr>(e))
    return dyn_cast<VarDecl>(dre->getDecl());
  return nullptr;
}

/// The effects of a statement: locals it assigns (declared outside it),
/// buffers it writes or reads, and whether it does anything else that
/// cannot run once per lane (atomics, printf, calls through pointers).
struct Effects {
  llvm::DenseSet<const VarDecl *> localsWritten, buffersWritten, buffersRead;
  std::vector<const Expr *> memoryWrites; ///< the written lvalues
  bool opaque = false;
  bool controlFlow = false; ///< break, continue, return, goto
  bool loops = false;
};

Effects effectsOf(const Stmt *s) {
  Effects fx;
  llvm::DenseSet<const VarDecl *> declaredInside = declaredIn(s);
  auto written = [&](const Expr *lhs) {
    if (const VarDecl *v = localOf(lhs)) {
      if (!declaredInside.count(v))
        fx.localsWritten.insert(v);
      return;
    }
    fx.memoryWrites.push_back(lhs);
    if (const VarDecl *b = baseOf(lhs))
      fx.buffersWritten.insert(b);
    else
      fx.opaque = true;
  };
  forEachStmt(s, [&](const Stmt *c) {
    if (auto *bo = dyn_cast<BinaryOperator>(c); bo && bo->isAssignmentOp())
      written(bo->getLHS());
    else if (auto *uo = dyn_cast<UnaryOperator>(c)) {
      if (uo->isIncrementDecrementOp())
        written(uo->getSubExpr());
      else if (uo->getOpcode() == UO_AddrOf)
        if (const VarDecl *v = localOf(uo->getSubExpr()); v && !declaredInside.count(v))
          fx.localsWritten.insert(v);
    } else if (auto *as = dyn_cast<ArraySubscriptExpr>(c)) {
      if (const VarDecl *b = baseOf(as))
        fx.buffersRead.insert(b);
    } else if (auto *ce = dyn_cast<CallExpr>(c)) {
      const FunctionDecl *f = ce->getDirectCallee();
      if (!f || !f->getIdentifier() || f->getName().starts_with("atomic") ||
          f->getName() == "printf")
        fx.opaque = true;
      for (const Expr *a : ce->arguments())
        if (a->getType()->isPointerType())
          fx.opaque = true;
    } else if (isa<BreakStmt>(c) || isa<ContinueStmt>(c) || isa<ReturnStmt>(c) ||
               isa<GotoStmt>(c) || isa<IndirectGotoStmt>(c)) {
      fx.controlFlow = true;
    } else if (isa<ForStmt>(c) || isa<WhileStmt>(c) || isa<DoStmt>(c) || isa<CXXForRangeStmt>(c)) {
      fx.loops = true;
    }
  });
  return fx;
}

/// `acc += e`, `acc = acc + e`, `acc = fmaxf(acc, e)` (and min): the
/// accumulator and how partial values combine; nullopt for anything else.
std::optional<std::pair<const VarDecl *, Combine>> accumulation(const Stmt *s) {
  auto *e = dyn_cast<Expr>(s);
  if (!e)
    return std::nullopt;
  e = e->IgnoreParenImpCasts();
  if (auto *ca = dyn_cast<CompoundAssignOperator>(e); ca && ca->getOpcode() == BO_AddAssign) {
    const VarDecl *acc = localOf(ca->getLHS());
    if (acc && !refersTo(ca->getRHS(), acc))
      return std::make_pair(acc, Combine::Sum);
    return std::nullopt;
  }
  auto *bo = dyn_cast<BinaryOperator>(e);
  if (!bo || bo->getOpcode() != BO_Assign)
    return std::nullopt;
  const VarDecl *acc = localOf(bo->getLHS());
  if (!acc)
    return std::nullopt;
  const Expr *rhs = bo->getRHS()->IgnoreParenImpCasts();
  auto other = [&](const Expr *a, const Expr *b) -> const Expr * {
    if (localOf(a) == acc)
      return b;
    if (localOf(b) == acc)
      return a;
    return nullptr;
  };
  if (auto *add = dyn_cast<BinaryOperator>(rhs); add && add->getOpcode() == BO_Add) {
    const Expr *x = other(add->getLHS(), add->getRHS());
    if (x && !refersTo(x, acc))
      return std::make_pair(acc, Combine::Sum);
    return std::nullopt;
  }
  if (auto *call = dyn_cast<CallExpr>(rhs); call && call->getNumArgs() == 2) {
    const FunctionDecl *f = call->getDirectCallee();
    if (!f || !f->getIdentifier())
      return std::nullopt;
    llvm::StringRef n = f->getName();
    std::optional<Combine> c;
    if (n == "fmaxf" || n == "fmax" || n == "max")
      c = Combine::Max;
    else if (n == "fminf" || n == "fmin" || n == "min")
      c = Combine::Min;
    const Expr *x = c ? other(call->getArg(0), call->getArg(1)) : nullptr;
    if (x && !refersTo(x, acc))
      return std::make_pair(acc, *c);
  }
  return std::nullopt;
}

std::vector<const Stmt *> statementsOf(const Stmt *s) {
  if (auto *cs = dyn_cast<CompoundStmt>(s))
    return {cs->body_begin(), cs->body_end()};
  return {s};
}

/// "" and the loop's parts when `f` is a row loop, else why not.
std::string matchRowLoop(ASTContext &ast, const ForStmt *f, RowLoop &out) {
  out.loop = f;
  auto *init = dyn_cast_or_null<DeclStmt>(f->getInit());
  if (!init || !init->isSingleDecl())
    return "the loop does not declare its counter";
  out.var = dyn_cast<VarDecl>(init->getSingleDecl());
  if (!out.var || !out.var->getType()->isIntegerType() || !out.var->getInit())
    return "the loop counter is not an initialised integer";
  out.start = out.var->getInit();
  auto *cond = dyn_cast_or_null<BinaryOperator>(f->getCond());
  if (!cond || cond->getOpcode() != BO_LT || localOf(cond->getLHS()) != out.var)
    return "the loop condition is not 'counter < bound'";
  if (cond->getRHS()->HasSideEffects(ast) || out.start->HasSideEffects(ast))
    return "the loop bounds have side effects";
  const Expr *inc = f->getInc() ? f->getInc()->IgnoreParenImpCasts() : nullptr;
  bool unit = false;
  if (auto *uo = dyn_cast_or_null<UnaryOperator>(inc))
    unit = uo->isIncrementOp() && localOf(uo->getSubExpr()) == out.var;
  if (auto *ca = dyn_cast_or_null<CompoundAssignOperator>(inc))
    if (ca->getOpcode() == BO_AddAssign && localOf(ca->getLHS()) == out.var)
      if (auto *lit = dyn_cast<IntegerLiteral>(ca->getRHS()->IgnoreParenImpCasts()))
        unit = lit->getValue() == 1;
  if (!unit)
    return "the loop does not step by 1";
  Effects body = effectsOf(f->getBody());
  if (body.localsWritten.count(out.var))
    return "the loop counter is modified in the body";
  if (body.controlFlow || body.loops)
    return "the loop body has nested loops or jumps";
  if (body.opaque)
    return "the loop body calls atomics, printf or a function taking a pointer";
  bool writes = false;
  for (const Stmt *s : statementsOf(f->getBody())) {
    if (isa<DeclStmt>(s) || isa<NullStmt>(s))
      continue;
    if (auto acc = accumulation(s)) {
      bool seen = false;
      for (auto &[v, c] : out.accumulators)
        if (v == acc->first) {
          if (c != acc->second)
            return "the accumulator '" + v->getNameAsString() + "' is combined in two ways";
          seen = true;
        }
      if (!seen)
        out.accumulators.push_back(*acc);
      continue;
    }
    Effects fx = effectsOf(s);
    if (!fx.localsWritten.empty())
      return "the loop body carries a value from one element to the next";
    for (const Expr *w : fx.memoryWrites) {
      auto *as = dyn_cast<ArraySubscriptExpr>(w->IgnoreParenImpCasts());
      if (!as || !refersTo(as->getIdx(), out.var))
        return "the loop writes an element that does not depend on the counter";
    }
    writes |= !fx.memoryWrites.empty();
  }
  // An accumulator read other than by its own update would see a partial value.
  for (auto &[acc, c] : out.accumulators)
    for (const Stmt *s : statementsOf(f->getBody())) {
      auto a = accumulation(s);
      if ((!a || a->first != acc) && refersTo(s, acc))
        return "the accumulator '" + acc->getNameAsString() + "' is read inside the loop";
    }
  if (writes && !out.accumulators.empty())
    return "the loop both accumulates and writes elements (a scan)";
  if (!writes && out.accumulators.empty())
    return "the loop neither accumulates nor writes";
  if (writes) { // a map: a written buffer read at another element would race
    bool elsewhere = false;
    forEachStmt(f->getBody(), [&](const Stmt *c) {
      auto *as = dyn_cast<ArraySubscriptExpr>(c);
      if (!as || !body.buffersWritten.count(baseOf(as)))
        return;
      for (const Expr *w : body.memoryWrites)
        if (auto *wa = dyn_cast<ArraySubscriptExpr>(w->IgnoreParenImpCasts()))
          if (baseOf(wa) == baseOf(as) && spelled(ast, wa->getIdx()) != spelled(ast, as->getIdx()))
            elsewhere = true;
    });
    if (elsewhere)
      return "the loop reads a buffer it writes at another element";
  }
  return "";
}

/// Whether a reduction row loop's reads can be 16-byte loads (vector=yes):
/// its body is one accumulation, the counter appears only as `X + counter`
/// (or alone) in subscripts of float or double buffers, one type for all.
/// Fills the loop's loads and width; the reason when not.
std::string matchVectorPart(ASTContext &ast, RowLoop &l) {
  if (l.accumulators.empty())
    return "the loop does not accumulate";
  std::vector<const Stmt *> body;
  for (const Stmt *s : statementsOf(l.loop->getBody()))
    if (!isa<NullStmt>(s))
      body.push_back(s);
  if (body.size() != 1 || !accumulation(body[0]))
    return "the loop body is not one accumulation";
  QualType elem;
  std::string why;
  llvm::DenseSet<const Stmt *> inLoads;
  forEachStmt(body[0], [&](const Stmt *c) {
    auto *as = dyn_cast<ArraySubscriptExpr>(c);
    if (!as || !refersTo(as->getIdx(), l.var) || !why.empty())
      return;
    const Expr *idx = as->getIdx()->IgnoreParenImpCasts();
    RowLoop::Load ld;
    ld.read = as;
    if (localOf(idx) != l.var) {
      auto *add = dyn_cast<BinaryOperator>(idx);
      const Expr *other = nullptr;
      if (add && add->getOpcode() == BO_Add) {
        if (localOf(add->getRHS()) == l.var)
          other = add->getLHS();
        else if (localOf(add->getLHS()) == l.var)
          other = add->getRHS();
      }
      if (!other || refersTo(other, l.var)) {
        why = "a read's index is not 'offset + " + l.var->getNameAsString() + "'";
        return;
      }
      ld.offset = spelled(ast, other);
    }
    QualType t = as->getType().getCanonicalType().getUnqualifiedType();
    if (!t->isSpecificBuiltinType(BuiltinType::Float) &&
        !t->isSpecificBuiltinType(BuiltinType::Double)) {
      why = "a read is of " + t.getAsString() + ", not float or double";
      return;
    }
    if (!elem.isNull() && elem != t) {
      why = "the reads mix float and double";
      return;
    }
    elem = t;
    ld.base = spelled(ast, as->getBase());
    l.loads.push_back(ld);
    forEachStmt(as->getIdx(), [&](const Stmt *x) { inLoads.insert(x); });
  });
  if (!why.empty())
    return why;
  if (l.loads.empty())
    return "the loop reads no buffer at the counter";
  bool elsewhere = false;
  forEachStmt(body[0], [&](const Stmt *c) {
    if (auto *dre = dyn_cast<DeclRefExpr>(c); dre && dre->getDecl() == l.var && !inLoads.count(c))
      elsewhere = true;
  });
  if (elsewhere)
    return "the counter is used other than to index a read";
  l.accumulation = body[0];
  l.width = elem->isSpecificBuiltinType(BuiltinType::Float) ? 4 : 2;
  return "";
}

/// The source text of `s` with each of `loads` replaced by `with[i]`.
std::string withReplaced(ASTContext &ast, const Stmt *s, const std::vector<RowLoop::Load> &loads,
                         const std::vector<std::string> &with) {
  const SourceManager &sm = ast.getSourceManager();
  SourceLocation b = sm.getFileLoc(s->getBeginLoc());
  std::string text = spelled(ast, s);
  std::vector<std::tuple<unsigned, unsigned, std::string>> edits;
  for (size_t i = 0; i < loads.size(); ++i) {
    SourceRange r = loads[i].read->getSourceRange();
    unsigned from = sm.getFileOffset(sm.getFileLoc(r.getBegin())) - sm.getFileOffset(b);
    SourceLocation end =
        Lexer::getLocForEndOfToken(sm.getFileLoc(r.getEnd()), 0, sm, ast.getLangOpts());
    unsigned to = sm.getFileOffset(end) - sm.getFileOffset(b);
    edits.emplace_back(from, to, with[i]);
  }
  std::sort(edits.begin(), edits.end(),
            [](auto &x, auto &y) { return std::get<0>(x) > std::get<0>(y); });
  for (auto &[from, to, t] : edits)
    if (from <= to && to <= text.size())
      text.replace(from, to - from, t);
  return text;
}

bool contains(const Stmt *outer, const Stmt *inner) {
  bool found = false;
  forEachStmt(outer, [&](const Stmt *c) { found |= c == inner; });
  return found;
}

bool isThreadBuiltin(const Stmt *s) {
  auto *dre = dyn_cast<DeclRefExpr>(s);
  if (!dre)
    return false;
  auto *vd = dyn_cast<VarDecl>(dre->getDecl());
  if (!vd || vd->hasLocalStorage())
    return false;
  llvm::StringRef n = vd->getName();
  return n == "threadIdx" || n == "blockIdx" || n == "blockDim" || n == "gridDim";
}

std::string matchRegion(TransformContext &ctx, unsigned kernel, Region &r) {
  ASTContext &ast = ctx.unit.ast();
  const FunctionDecl *fd = editableDecl(ctx.unit.kernelDecl(kernel));
  if (kernelsSharingDefinition(ctx.model(), kernel).size() > 1)
    return "template kernels are not handled yet";
  if (std::string why = gridstride::legality(ctx, kernel); !why.empty())
    return "not a guarded per-thread kernel (" + why + ")";
  std::optional<gridstride::GuardedKernel> shape = gridstride::matchGuarded(ast, fd);
  if (!shape)
    return "not a guarded per-thread kernel";
  r.shape = *shape;
  if (usesWarpIntrinsics(fd))
    return "the kernel uses warp-level intrinsics already";
  for (const std::string &c : calleeNames(fd))
    if (c == "__syncthreads" || c.rfind("atomic", 0) == 0)
      return "the kernel calls " + c;
  // The thread's identity is used only to compute its row.
  std::string why;
  forEachStmt(fd->getBody(), [&](const Stmt *s) {
    if (isThreadBuiltin(s) && !contains(r.shape.indexDecl, s))
      why = "the kernel uses the thread or block index beyond its row";
  });
  if (!why.empty())
    return why;
  if (r.shape.guard->getCond()->HasSideEffects(ast))
    return "the guard has side effects";
  // The region, statement by statement.
  llvm::DenseSet<const VarDecl *> laneZeroBuffers; // written by lane 0 or by a map loop
  auto readsWritten = [&](const Effects &fx) {
    for (const VarDecl *b : fx.buffersRead)
      if (laneZeroBuffers.count(b))
        return true;
    return false;
  };
  bool reduction = false;
  std::vector<const Stmt *> region; // blocks of the region are only scopes: look inside
  std::function<void(const Stmt *)> flatten = [&](const Stmt *s) {
    if (auto *cs = dyn_cast<CompoundStmt>(s))
      for (const Stmt *c : cs->body())
        flatten(c);
    else
      region.push_back(s);
  };
  for (const Stmt *s : r.shape.perElement)
    flatten(s);
  for (const Stmt *s : region) {
    if (isa<NullStmt>(s))
      continue;
    if (auto *f = dyn_cast<ForStmt>(s)) {
      RowLoop rl;
      if (std::string w = matchRowLoop(ast, f, rl); !w.empty())
        return "row loop at line " +
               std::to_string(ast.getSourceManager().getPresumedLineNumber(f->getBeginLoc())) +
               ": " + w;
      Effects fx = effectsOf(f);
      if (readsWritten(fx))
        return "a loop reads what lane 0 wrote earlier in the row";
      for (const VarDecl *b : fx.buffersWritten)
        laneZeroBuffers.insert(b);
      reduction |= !rl.accumulators.empty();
      if (!rl.accumulators.empty())
        rl.vectorWhy = matchVectorPart(ast, rl);
      r.loops.push_back(rl);
      continue;
    }
    Effects fx = effectsOf(s);
    if (fx.controlFlow)
      return "the row's statements return, break or jump";
    if (fx.loops)
      return "a loop of the row is nested inside another statement";
    bool memory = !fx.memoryWrites.empty() || fx.opaque;
    if (memory && !fx.localsWritten.empty())
      return "a statement of the row writes both memory and locals";
    if (!memory && readsWritten(fx)) // lane 0's own writes it sees in order
      return "a statement reads what lane 0 wrote earlier in the row";
    if (memory) {
      if (isa<DeclStmt>(s))
        return "a declaration of the row writes memory";
      r.laneZero.push_back(s);
      for (const VarDecl *b : fx.buffersWritten)
        laneZeroBuffers.insert(b);
    }
  }
  if (!reduction)
    return "no loop over the row accumulates (nothing for a group of lanes to share)";
  // Worth it where adjacent threads read far apart inside a row loop
  // (packed), or adjacent addresses (spread: the loop is then the thread's
  // whole serial work, shared by more threads).
  const Kernel &k = ctx.model().kernels[kernel];
  const KernelAnalysis &ka = ctx.analysis(kernel);
  for (size_t i = 0; i < k.accesses.size() && i < ka.accesses.size(); ++i) {
    const Stride &st = ka.accesses[i].strideX;
    bool far = st.kind == Stride::Kind::Symbolic ||
               (st.kind == Stride::Kind::Constant && (st.value > 1 || st.value < -1));
    bool unit = st.kind == Stride::Kind::Constant && (st.value == 1 || st.value == -1);
    if ((!far && !unit) || k.accesses[i].kind == AccessKind::Write)
      continue;
    for (unsigned loop : k.accesses[i].loops)
      for (const RowLoop &rl : r.loops)
        if (ctx.unit.loopStmt(kernel, loop) == rl.loop)
          (far ? r.strided : r.coalesced) = true;
  }
  if (!r.strided && !r.coalesced)
    return "no row loop reads a buffer along the thread index";
  // Every launch is rewritten to the new grid.
  if (std::string w = referencedOutsideLaunches(ctx, kernel); !w.empty())
    return w;
  std::vector<unsigned> launches = distinctLaunches(ctx, kernel);
  if (launches.empty())
    return "the kernel is never launched in this file";
  const SourceManager &sm = ast.getSourceManager();
  for (unsigned l : launches)
    for (unsigned which : {0u, 1u}) {
      const Expr *e = launchConfigArg(ctx, l, which);
      if (e)
        e = e->IgnoreUnlessSpelledInSource();
      if (!e || e->HasSideEffects(ast))
        return "launch #" + std::to_string(l) + ": the grid or block has side effects";
      if (std::string why; configRange(ctx, l, which, &why).isInvalid())
        return why;
      if (!sm.isInMainFile(sm.getFileLoc(e->getBeginLoc())))
        return "launch #" + std::to_string(l) + " is written in another file";
    }
  return "";
}

SourceLocation afterStatement(ASTContext &ast, const Stmt *s) {
  const SourceManager &sm = ast.getSourceManager();
  if (isa<DeclStmt>(s)) // ends at its semicolon
    return s->getEndLoc().getLocWithOffset(1);
  if (isa<CompoundStmt>(s) || isa<IfStmt>(s) || isa<ForStmt>(s) || isa<WhileStmt>(s)) {
    const Stmt *last = s;
    if (auto *is = dyn_cast<IfStmt>(s))
      last = is->getElse() ? is->getElse() : is->getThen();
    else if (auto *fs = dyn_cast<ForStmt>(s))
      last = fs->getBody();
    if (auto *cs = dyn_cast<CompoundStmt>(last))
      return cs->getRBracLoc().getLocWithOffset(1);
    s = last;
  }
  return Lexer::findLocationAfterToken(s->getEndLoc(), tok::semi, sm, ast.getLangOpts(),
                                       /*SkipTrailingWhitespaceAndNewLine=*/false);
}

const char *combineName(Combine c, Layout layout) {
  if (layout == Layout::Spread)
    return c == Combine::Sum   ? "cudal1SpreadSum"
           : c == Combine::Max ? "cudal1SpreadMax"
                               : "cudal1SpreadMin";
  return c == Combine::Sum ? "cudal1RowSum" : c == Combine::Max ? "cudal1RowMax" : "cudal1RowMin";
}

} // namespace

std::string WarpRows::legality(TransformContext &ctx, Target t) const {
  Region r;
  return matchRegion(ctx, t.kernel, r);
}

/// Why no row loop of the kernel can take 16-byte loads ("" when one can).
std::string whyNoVectorPart(const Region &r) {
  std::string why = "no row loop accumulates";
  for (const RowLoop &l : r.loops) {
    if (l.accumulation)
      return "";
    if (!l.accumulators.empty())
      why = l.vectorWhy;
  }
  return why;
}

static const char *const packedRefusal =
    "no row loop reads with a stride between adjacent threads (already coalesced)";
static const char *const spreadRefusal =
    "layout=spread: no row loop reads adjacent addresses across "
    "adjacent threads (layout=packed is the one for strided rows)";

std::vector<ParamSpace> WarpRows::space(TransformContext &ctx, Target t) const {
  Region r;
  if (!matchRegion(ctx, t.kernel, r).empty())
    return {};
  // A kernel whose rows are read strided takes the packed layout (the
  // default, not listed); one that reads coalesced only, the spread one.
  if (!r.strided)
    return {{"lanes", {"16", "8", "4", "2"}}, {"layout", {"spread"}}};
  std::vector<ParamSpace> p = {{"lanes", {"32", "16", "8", "4"}}};
  if (whyNoVectorPart(r).empty())
    p.push_back({"vector", {"no", "yes"}});
  return p;
}

std::string WarpRows::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  for (const auto &[k, v] : step.params)
    if (k != "lanes" && k != "vector" && k != "layout")
      return "unknown parameter '" + k + "'";
  std::string layout = step.param("layout").value_or("packed");
  if (layout != "packed" && layout != "spread")
    return "layout must be packed or spread";
  bool spread = layout == "spread";
  std::optional<unsigned> lanes = step.uintParam("lanes", 1, 32);
  if (step.param("lanes") && !spread &&
      (!lanes || (*lanes != 32 && *lanes != 16 && *lanes != 8 && *lanes != 4)))
    return "lanes must be 32, 16, 8 or 4";
  if (step.param("lanes") && spread &&
      (!lanes || (*lanes != 16 && *lanes != 8 && *lanes != 4 && *lanes != 2)))
    return "with layout=spread, lanes must be 16, 8, 4 or 2";
  std::string vec = step.param("vector").value_or("no");
  if (vec != "no" && vec != "yes")
    return "vector must be yes or no";
  if (vec == "yes" && spread)
    return "vector=yes loads along the row, which layout=spread does not stride by lane";
  Region r;
  if (std::string why = matchRegion(ctx, t.kernel, r); !why.empty())
    return why;
  if (!spread && !r.strided)
    return packedRefusal;
  if (spread && !r.coalesced)
    return spreadRefusal;
  if (vec == "yes")
    if (std::string why = whyNoVectorPart(r); !why.empty())
      return "vector=yes: " + why;
  return "";
}

llvm::Error WarpRows::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  Region r;
  if (std::string why = matchRegion(ctx, t.kernel, r); !why.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", why.c_str());
  Layout layout =
      step.param("layout").value_or("packed") == "spread" ? Layout::Spread : Layout::Packed;
  unsigned lanes = step.uintParam("lanes", 1, 32).value_or(layout == Layout::Spread ? 4 : 32);
  bool vector = step.param("vector").value_or("no") == "yes";
  std::string L = std::to_string(lanes) + "u";
  ASTContext &ast = ctx.unit.ast();
  Rewriter &rw = ctx.rewriter;
  const gridstride::GuardedKernel &g = r.shape;
  // 1. The thread's row and its lane in the row's group: packed, LANES
  // consecutive lanes; spread, the warp's 32 / LANES rows side by side,
  // repeated LANES times.
  const Expr *init = g.index->getInit();
  std::string gid = spelled(ast, init);
  std::string row, lane;
  if (layout == Layout::Packed) {
    row = "(" + gid + ") / " + L;
    lane = "(int)((" + gid + ") % " + L + ")";
  } else {
    std::string W = std::to_string(32 / lanes) + "u";
    row = "(" + gid + ") / 32u * " + W + " + (" + gid + ") % " + W;
    lane = "(int)((" + gid + ") % 32u / " + W + ")";
  }
  rw.ReplaceText(CharSourceRange::getTokenRange(init->getSourceRange()), row);
  std::string ind = indentAt(ast, g.indexDecl->getBeginLoc());
  rw.InsertTextAfter(afterStatement(ast, g.indexDecl),
                     "\n" + ind + "const int " + laneName + " = " + lane + ";");
  // 2. The lanes that work on a row, before the guard sends the others away.
  std::string cond = spelled(ast, g.guard->getCond());
  rw.InsertTextBefore(g.guard->getBeginLoc(), std::string("const unsigned ") + rowsName +
                                                  " = __ballot_sync(cudal1LiveLanes(), " +
                                                  (g.earlyReturn ? "!(" + cond + ")" : cond) +
                                                  ");\n" + indentAt(ast, g.guard->getBeginLoc()));
  // 3. Row loops stride by lane; reductions combine across the group.
  for (size_t li = 0; li < r.loops.size(); ++li) {
    const RowLoop &l = r.loops[li];
    std::string ind = indentAt(ast, l.loop->getBeginLoc());
    std::string before, after;
    for (auto &[acc, c] : l.accumulators) {
      std::string n = acc->getNameAsString();
      if (c == Combine::Sum) // the start value is counted once, by lane 0
        before += std::string("if (") + laneName + " != 0)\n" + ind + "  " + n + " = 0;\n" + ind;
      after += "\n" + ind + n + " = " + combineName(c, layout) + "<" + std::to_string(lanes) +
               ">(" + n + ", " + rowsName + ");";
    }
    std::string scalarStart = "(" + spelled(ast, l.start) + ")";
    if (vector && l.accumulation) {
      // The vector part: each lane takes WIDTH consecutive elements, the
      // group strides by WIDTH * LANES, up to the last whole stride, where
      // every buffer's row start is 16-byte aligned (uniform in the group:
      // its lanes share the row); the scalar loop does the rest.
      std::string k = std::to_string(li), j = l.var->getNameAsString();
      std::string type = l.var->getType().getAsString();
      std::string start = "cudal1_s" + k, end = "cudal1_vend" + k;
      std::string bound = spelled(ast, cast<BinaryOperator>(l.loop->getCond())->getRHS());
      std::string step = std::to_string(l.width * lanes);
      // One vector per distinct read (A[r * cols + j] twice is one load).
      std::vector<std::string> spellings;
      std::vector<size_t> vectorOf;
      for (const RowLoop::Load &ld : l.loads) {
        std::string key = ld.base + "[" + ld.offset + "]";
        auto at = std::find(spellings.begin(), spellings.end(), key);
        vectorOf.push_back(size_t(at - spellings.begin()));
        if (at == spellings.end())
          spellings.push_back(key);
      }
      auto firstLoad = [&](size_t v) -> const RowLoop::Load & {
        return l.loads[size_t(std::find(vectorOf.begin(), vectorOf.end(), v) - vectorOf.begin())];
      };
      auto element = [&](const RowLoop::Load &ld, const std::string &at) {
        return "&(" + ld.base + ")[" + (ld.offset.empty() ? at : "(" + ld.offset + ") + " + at) +
               "]";
      };
      std::string aligned;
      for (size_t v = 0; v < spellings.size(); ++v)
        aligned += "cudal1Aligned16(" + element(firstLoad(v), start) + ") && ";
      before += "const " + type + " " + start + " = " + scalarStart + ";\n" + ind + type + " " +
                end + " = " + start + ";\n" + ind + "if (" + aligned + "(long long)(" + bound +
                ") - " + start + " >= " + step + ")\n" + ind + "  " + end + " = " + start + " + (" +
                type + ")(((long long)(" + bound + ") - " + start + ") / " + step + " * " + step +
                ");\n" + ind + "for (" + type + " " + j + " = " + start + " + " +
                std::to_string(l.width) + " * " + laneName + "; " + j + " < " + end + "; " + j +
                " += " + step + ") {\n";
      for (size_t v = 0; v < spellings.size(); ++v)
        before += ind + "  const auto cudal1_v" + k + "_" + std::to_string(v) + " = cudal1Load16(" +
                  element(firstLoad(v), j) + ");\n";
      static const char *comp[] = {"x", "y", "z", "w"};
      for (unsigned e = 0; e < l.width; ++e) {
        std::vector<std::string> with;
        for (size_t i = 0; i < l.loads.size(); ++i)
          with.push_back("cudal1_v" + k + "_" + std::to_string(vectorOf[i]) + "." + comp[e]);
        std::string stmt = withReplaced(ast, l.accumulation, l.loads, with);
        before += ind + "  " + stmt + (StringRef(stmt).ends_with(";") ? "" : ";") + "\n";
      }
      before += ind + "}\n" + ind;
      scalarStart = end;
    }
    rw.ReplaceText(CharSourceRange::getTokenRange(l.start->getSourceRange()),
                   scalarStart + " + " + laneName);
    rw.ReplaceText(CharSourceRange::getTokenRange(l.loop->getInc()->getSourceRange()),
                   l.var->getNameAsString() + " += " + std::to_string(lanes));
    if (!before.empty())
      rw.InsertTextBefore(l.loop->getBeginLoc(), before);
    if (!after.empty())
      rw.InsertTextAfter(afterStatement(ast, l.loop), after);
  }
  // 4. What writes memory after the loops, once per row.
  for (const Stmt *s : r.laneZero) {
    rw.InsertTextBefore(s->getBeginLoc(), std::string("if (") + laneName + " == 0) { ");
    rw.InsertTextAfter(afterStatement(ast, s), " }");
  }
  ctx.insertHelperBefore(t.kernel, "cudal1RowSum", runtime::warpRowsDevice);
  if (layout == Layout::Spread)
    ctx.insertHelperBefore(t.kernel, "cudal1SpreadSum", runtime::warpRowsSpreadDevice);
  // 5. Every launch: LANES times the threads, blocks of kBlock.
  for (unsigned l : distinctLaunches(ctx, t.kernel)) {
    const Expr *grid = launchConfigArg(ctx, l, 0)->IgnoreUnlessSpelledInSource();
    const Expr *block = launchConfigArg(ctx, l, 1)->IgnoreUnlessSpelledInSource();
    std::string blockText = spelled(ast, block);
    rw.ReplaceText(configRange(ctx, l, 0), "cudal1WarpRowsGrid(" + spelled(ast, grid) + ", " +
                                               blockText + ", " + std::to_string(lanes) + ", " +
                                               std::to_string(kBlock) + ")");
    rw.ReplaceText(configRange(ctx, l, 1), std::to_string(kBlock));
    ctx.insertHelperBefore(ctx.unit.launchFunction(l), "cudal1WarpRowsGrid", runtime::warpRowsHost);
  }
  LLVM_DEBUG(llvm::dbgs() << "warp-rows: " << r.loops.size() << " row loop(s), lanes=" << lanes
                          << "\n");
  return llvm::Error::success();
}

std::optional<LaunchRemapStep> WarpRows::remapLaunch(const PlanStep &step) const {
  // LANES threads per original thread in blocks of kBlock: what
  // cudal1WarpRowsGrid computes (passes/runtime/warp-rows-host.cuh).
  return LaunchRemapStep::lanes(step.uintParam("lanes", 1, 32).value_or(32), kBlock);
}
