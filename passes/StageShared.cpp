// stage-shared: in a naive transpose (out[x*H + y] = in[y*W + x]) one side
// of the copy is unit-stride along threadIdx.x and the other is strided, so
// one of them never coalesces. The rewrite gives each block a T x T tile of
// the (x, y) index space: the threads first evaluate the stored value with
// threadIdx.x walking the read's unit-stride index and park it in a padded
// __shared__ tile, then after one barrier store it with threadIdx.x walking
// the write's unit-stride index. Every element is computed and stored by the
// same (x, y) as before, under the original guard.
#include "StageShared.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#define DEBUG_TYPE "stage-shared"

using namespace clang;
using namespace cudal1;

namespace {

constexpr uint64_t kSharedLimit = 48 * 1024; ///< static shared memory per block
const char *tileName = "cudal1_tile";
const char *rowName = "cudal1_j";

/// The parameters of one application (defaults: the classic 32x8 transpose).
struct Params {
  unsigned tile = 32, pad = 1, rows = 4; ///< rows: tile rows each thread stages
  unsigned blockY() const { return tile / rows; }
};

Params paramsOf(const PlanStep &step) {
  Params p;
  p.tile = step.uintParam("tile", 16, 32).value_or(32);
  p.pad = step.uintParam("pad", 0, 1).value_or(1);
  p.rows = step.uintParam("rows", 1, 4).value_or(4);
  return p;
}

/// What the rewrite needs of the kernel:
///   int x = <global x id>; int y = <global y id>;
///   if (G) { [T v = ...;]* out[W] = E; }     (or `if (!G) return; ...`)
struct Pattern {
  const CompoundStmt *body = nullptr;
  std::vector<const VarDecl *> indices; ///< the global x and y ids
  /// Every declaration before the guard, in source order: the two ids and
  /// values derived from them without memory reads (re-evaluated per phase).
  std::vector<const VarDecl *> leading;
  const VarDecl *x = nullptr, *y = nullptr;
  const Expr *guard = nullptr;
  bool earlyReturn = false;              ///< the guard is the condition of an early return
  std::vector<const DeclStmt *> locals;  ///< declarations before the store
  const BinaryOperator *store = nullptr; ///< out[W] = E
  const ParmVarDecl *out = nullptr;
  QualType element; ///< out's element type
  /// The write is unit-stride along y (and strided along x): the value is
  /// computed with threadIdx.x walking x and stored with it walking y; else
  /// the reverse.
  bool readAlongX = true;
  /// The 1-D form: `x` is the only id, a global 1-D id split by `divisor`
  /// into (row = x / W, col = x % W); the launch is kept (block `block`).
  bool flat = false;
  const Expr *divisor = nullptr;
  unsigned block = 0;
};

unsigned lineOf(ASTContext &ast, SourceLocation loc) {
  const SourceManager &sm = ast.getSourceManager();
  return sm.getPresumedLineNumber(sm.getFileLoc(loc));
}

bool isBuiltinVar(const ValueDecl *d) {
  auto *vd = dyn_cast_or_null<VarDecl>(d);
  if (!vd || !vd->getDeclContext()->getRedeclContext()->isTranslationUnit())
    return false;
  StringRef n = vd->getName();
  return n == "threadIdx" || n == "blockIdx" || n == "blockDim" || n == "gridDim";
}

/// threadIdx.x and its kin: the builtin's name and the axis letter.
std::optional<std::pair<std::string, char>> builtinOf(const Expr *e) {
  e = e->IgnoreParenImpCasts();
  if (auto *po = dyn_cast<PseudoObjectExpr>(e))
    e = po->getSyntacticForm()->IgnoreParenImpCasts();
  auto *pe = dyn_cast<MSPropertyRefExpr>(e);
  if (!pe)
    return std::nullopt;
  const Expr *base = pe->getBaseExpr()->IgnoreParenImpCasts();
  if (auto *ove = dyn_cast<OpaqueValueExpr>(base); ove && ove->getSourceExpr())
    base = ove->getSourceExpr()->IgnoreParenImpCasts();
  auto *dre = dyn_cast<DeclRefExpr>(base);
  StringRef axis = pe->getPropertyDecl()->getName();
  if (!dre || !isBuiltinVar(dre->getDecl()) || axis.size() != 1)
    return std::nullopt;
  return std::make_pair(dre->getDecl()->getName().str(), axis[0]);
}

/// 'x' or 'y' when `e` is blockIdx.d * blockDim.d + threadIdx.d (either
/// operand order, either factor order).
std::optional<char> globalIdAxis(const Expr *e) {
  auto *add = dyn_cast<BinaryOperator>(e->IgnoreParenImpCasts());
  if (!add || add->getOpcode() != BO_Add)
    return std::nullopt;
  for (bool swapped : {false, true}) {
    const Expr *m = swapped ? add->getRHS() : add->getLHS();
    const Expr *t = swapped ? add->getLHS() : add->getRHS();
    auto *mul = dyn_cast<BinaryOperator>(m->IgnoreParenImpCasts());
    auto tb = builtinOf(t);
    if (!mul || mul->getOpcode() != BO_Mul || !tb || tb->first != "threadIdx")
      continue;
    auto a = builtinOf(mul->getLHS()), b = builtinOf(mul->getRHS());
    if (!a || !b)
      continue;
    if (a->first == "blockDim")
      std::swap(a, b);
    if (a->first == "blockIdx" && b->first == "blockDim" && a->second == tb->second &&
        b->second == tb->second && (tb->second == 'x' || tb->second == 'y'))
      return tb->second;
  }
  return std::nullopt;
}

bool contains(const Stmt *outer, const Stmt *inner) {
  bool found = false;
  forEachStmt(outer, [&](const Stmt *c) { found |= c == inner; });
  return found;
}

const ParmVarDecl *pointerParam(const Expr *base) {
  auto *dre = dyn_cast<DeclRefExpr>(base->IgnoreParenImpCasts());
  auto *p = dre ? dyn_cast<ParmVarDecl>(dre->getDecl()) : nullptr;
  return p && p->getType()->isPointerType() ? p : nullptr;
}

/// "" when `s` (a guard, a local's initializer, the stored value or the
/// store's index) has no effect but its value: it reads memory only as
/// `param[index]`, never reads `out`, and calls only functions from system
/// headers (CUDA's math); else why not. The rewrite evaluates it twice or in
/// another thread order.
std::string effectFree(ASTContext &ast, const Stmt *s, const ParmVarDecl *out) {
  std::string why;
  const SourceManager &sm = ast.getSourceManager();
  auto at = [&](const Stmt *c) {
    return " at line " + std::to_string(lineOf(ast, c->getBeginLoc()));
  };
  forEachStmt(s, [&](const Stmt *c) {
    if (!why.empty())
      return;
    if (auto *e = dyn_cast<Expr>(c); e && e->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
      if (!isa<CallExpr>(e) && !isa<PseudoObjectExpr>(e)) { // calls: checked below
        why = "an expression" + at(c) + " has side effects";
        return;
      }
    if (auto *as = dyn_cast<ArraySubscriptExpr>(c)) {
      const ParmVarDecl *p = pointerParam(as->getBase());
      if (!p)
        why = "the memory access" + at(c) + " is not a subscript of a pointer parameter";
      else if (p == out)
        why = "the kernel reads " + p->getNameAsString() + ", which it stores to" + at(c);
    } else if (auto *uo = dyn_cast<UnaryOperator>(c); uo && uo->getOpcode() == UO_Deref) {
      why = "the dereference" + at(c) + " is not a subscript of a pointer parameter";
    } else if (auto *me = dyn_cast<MemberExpr>(c); me && me->isArrow()) {
      why = "the member access" + at(c) + " reads memory through a pointer";
    } else if (auto *ce = dyn_cast<CallExpr>(c)) {
      const FunctionDecl *f = ce->getDirectCallee();
      if (!f || !sm.isInSystemHeader(f->getLocation()))
        why = "the kernel calls " + (f ? f->getNameAsString() : std::string("through a pointer")) +
              at(c) + " (only math functions of the CUDA headers)";
      else if (f->getName().starts_with("atomic") || f->getName().starts_with("__shfl") ||
               f->getName() == "printf")
        why = "the kernel calls " + f->getNameAsString() + at(c);
    } else if (auto *dre = dyn_cast<DeclRefExpr>(c)) {
      StringRef n = dre->getDecl()->getName();
      if (n.starts_with("cudal1_")) // the rewrite's own names (tile, rows, 1-D form)
        why = "the kernel uses the name " + n.str() + ", which the rewrite declares";
    }
  });
  return why;
}

bool readsMemory(const Stmt *s) {
  bool found = false;
  forEachStmt(s, [&](const Stmt *c) { found |= isa<ArraySubscriptExpr>(c); });
  return found;
}

/// The declarations (before the guard and inside it) that `roots` read,
/// directly or through each other.
std::set<const VarDecl *> needed(const Pattern &p, std::vector<const Stmt *> roots) {
  std::set<const VarDecl *> out;
  auto collect = [&](const Stmt *s) {
    forEachStmt(s, [&](const Stmt *c) {
      if (auto *dre = dyn_cast<DeclRefExpr>(c))
        if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
          out.insert(vd);
    });
  };
  for (const Stmt *r : roots)
    collect(r);
  std::vector<const VarDecl *> all = p.leading;
  for (const DeclStmt *ds : p.locals)
    for (const Decl *d : ds->decls())
      all.push_back(cast<VarDecl>(d));
  for (auto it = all.rbegin(); it != all.rend(); ++it) // initializers read earlier ones only
    if (out.count(*it))
      collect((*it)->getInit());
  return out;
}

/// The locals of the guarded region that the store (its index and guard) needs.
std::vector<const VarDecl *> storeLocals(const Pattern &p) {
  auto *lhs = cast<ArraySubscriptExpr>(p.store->getLHS()->IgnoreParenImpCasts());
  std::set<const VarDecl *> n = needed(p, {p.guard, lhs->getIdx()});
  std::vector<const VarDecl *> out;
  for (const DeclStmt *ds : p.locals)
    for (const Decl *d : ds->decls())
      if (n.count(cast<VarDecl>(d)))
        out.push_back(cast<VarDecl>(d));
  return out;
}

std::string matchPattern(TransformContext &ctx, unsigned kernel, Pattern &p) {
  ASTContext &ast = ctx.unit.ast();
  const Kernel &k = ctx.model().kernels[kernel];
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  auto line = [&](const Stmt *s) { return std::to_string(lineOf(ast, s->getBeginLoc())); };
  // 1. What the kernel may not already do.
  if (k.fromHeader)
    return "the kernel is defined in a header; cudal1 rewrites only the file it is given";
  if (kernelsSharingDefinition(ctx.model(), kernel).size() > 1 || editableDecl(fd) != fd ||
      fd->isTemplated())
    return "template kernels are not handled yet";
  if (!k.barriers.empty())
    return "the kernel already has a barrier (line " + std::to_string(k.barriers[0].pos.line) +
           "); the staged form needs the only barrier, reached by every thread";
  for (const SharedDecl &s : k.shared) {
    if (s.dynamic || s.bytes < 0)
      return "the kernel uses shared memory of a size set at launch (" + s.name +
             "), so the tile may not fit";
    if (uint64_t(s.bytes) > kSharedLimit)
      return "the kernel's shared memory (" + s.name + ", " + std::to_string(s.bytes) +
             " bytes) is already past the 48 KiB limit";
    return "the kernel already uses shared memory (" + s.name + " at line " +
           std::to_string(s.pos.line) + ")";
  }
  if (usesWarpIntrinsics(fd))
    return "the kernel uses warp-level intrinsics";
  p.body = dyn_cast_or_null<CompoundStmt>(fd->getBody());
  if (!p.body || p.body->body_empty())
    return "the kernel has an empty body";
  // 2. The thread indices: declarations of the global x and y ids.
  const char *shape = "the kernel is not 'x = global x id; y = global y id; if (guard) "
                      "out[...] = value;' (one guarded store after the two thread indices)";
  auto it = p.body->body_begin();
  for (; it != p.body->body_end(); ++it) {
    auto *ds = dyn_cast<DeclStmt>(*it);
    if (!ds)
      break;
    for (const Decl *d : ds->decls()) {
      auto *vd = dyn_cast<VarDecl>(d);
      if (!vd || !vd->hasInit() || !vd->hasLocalStorage() || vd->isStaticLocal() ||
          vd->hasAttr<CUDASharedAttr>() || vd->getType()->isArrayType() ||
          vd->getType()->isReferenceType())
        return "the declaration at line " + line(ds) +
               " is not an initialised scalar local (before the guard: the thread indices and "
               "values computed from them)";
      p.leading.push_back(vd);
      std::optional<char> axis =
          vd->getType()->isIntegerType() ? globalIdAxis(vd->getInit()) : std::nullopt;
      if (!axis)
        continue; // derived: checked below, once the ids are known
      const VarDecl *&slot = *axis == 'x' ? p.x : p.y;
      if (slot)
        return "two variables hold the global " + std::string(1, *axis) + " id (line " + line(ds) +
               ")";
      slot = vd;
      p.indices.push_back(vd);
    }
    if (ds->getBeginLoc().isMacroID() || ds->getEndLoc().isMacroID())
      return "the thread index at line " + line(ds) + " is written inside a macro";
  }
  if (!p.x) {
    // A grid-stride loop over the id: each thread's elements come from
    // several rows, which the per-tile phases do not reproduce yet.
    if (auto *fs = it != p.body->body_end() ? dyn_cast<ForStmt>(*it) : nullptr)
      if (auto *ds = dyn_cast_or_null<DeclStmt>(fs->getInit()); ds && ds->isSingleDecl())
        if (auto *vd = dyn_cast<VarDecl>(ds->getSingleDecl()); vd && vd->hasInit())
          if (globalIdAxis(vd->getInit()))
            return "the global id is the counter of a grid-stride loop (line " + line(fs) +
                   "); only 'idx = global id; if (guard) out[...] = value;' is staged";
    return "the kernel has no global x thread index ('blockIdx.x * blockDim.x + threadIdx.x')";
  }
  p.flat = !p.y; // a 1-D id: split into (row, col) below
  // 3. The guarded store.
  if (it == p.body->body_end())
    return shape;
  std::vector<const Stmt *> region;
  auto *is = dyn_cast<IfStmt>(*it);
  if (!is || is->getElse() || is->getInit() || is->getConditionVariable())
    return shape;
  p.guard = is->getCond();
  const Stmt *then = is->getThen();
  if (auto *cs = dyn_cast<CompoundStmt>(then); cs && cs->size() == 1)
    then = cs->body_front();
  if (isa<ReturnStmt>(then)) {
    p.earlyReturn = true;
    region.assign(it + 1, p.body->body_end());
  } else {
    if (it + 1 != p.body->body_end())
      return "the statement at line " + line(*(it + 1)) +
             " follows the guarded store (one store only, the element-wise copy)";
    if (auto *cs = dyn_cast<CompoundStmt>(is->getThen()))
      region.assign(cs->body_begin(), cs->body_end());
    else
      region.push_back(is->getThen());
  }
  if (region.empty())
    return shape;
  for (size_t i = 0; i + 1 < region.size(); ++i) {
    auto *ds = dyn_cast<DeclStmt>(region[i]);
    if (!ds)
      return "the statement at line " + line(region[i]) +
             " is not a local declaration (the guarded region is declarations and one store)";
    for (const Decl *d : ds->decls()) {
      auto *vd = dyn_cast<VarDecl>(d);
      if (!vd || !vd->hasLocalStorage() || vd->isStaticLocal() || vd->hasAttr<CUDASharedAttr>() ||
          !vd->hasInit() || vd->getType()->isArrayType() || vd->getType()->isReferenceType())
        return "the declaration at line " + line(ds) + " is not an initialised scalar local";
    }
    p.locals.push_back(ds);
  }
  if (auto *oc = dyn_cast<CXXOperatorCallExpr>(region.back());
      oc && oc->getOperator() == OO_Equal && oc->getNumArgs() == 2)
    return "the stored element type '" + oc->getArg(0)->getType().getAsString() +
           "' is not an arithmetic scalar (the tile holds values of it)";
  auto *store = dyn_cast<BinaryOperator>(region.back());
  if (!store || !store->isAssignmentOp())
    return "the last statement of the guarded region (line " + line(region.back()) +
           ") is not a store 'out[...] = value'";
  if (store->getOpcode() != BO_Assign)
    return "the store at line " + line(store) +
           " reads the element it writes (compound assignment)";
  auto *lhs = dyn_cast<ArraySubscriptExpr>(store->getLHS()->IgnoreParenImpCasts());
  p.out = lhs ? pointerParam(lhs->getBase()) : nullptr;
  if (!p.out)
    return "the store at line " + line(store) + " is not to a subscript of a pointer parameter";
  p.store = store;
  p.element = p.out->getType()->getPointeeType();
  if (!p.element->isArithmeticType() || p.element.isVolatileQualified())
    return "the stored element type '" + p.element.getAsString() +
           "' is not an arithmetic scalar (the tile holds values of it)";
  for (const Stmt *s : region)
    if (s->getBeginLoc().isMacroID() || s->getEndLoc().isMacroID())
      return "the statement at line " + line(s) + " is written inside a macro";
  if (is->getBeginLoc().isMacroID() || p.guard->getEndLoc().isMacroID())
    return "the guard at line " + line(is) + " is written inside a macro";
  // 4. The thread's identity is used only through its two indices; what
  // depends on them is evaluated by the same (x, y) in the rewrite.
  std::string why;
  forEachStmt(p.body, [&](const Stmt *s) {
    auto *dre = dyn_cast<DeclRefExpr>(s);
    if (!why.empty() || !dre || !isBuiltinVar(dre->getDecl()))
      return;
    bool inIndex = false;
    for (const VarDecl *v : p.indices)
      inIndex |= contains(v->getInit(), dre);
    if (!inIndex)
      why = "the kernel uses " + dre->getDecl()->getNameAsString() + " at line " + line(dre) +
            " other than in its " + (p.flat ? "global id" : "two thread indices") +
            " (the block shape changes)";
  });
  if (!why.empty())
    return why;
  for (const Stmt *s :
       {static_cast<const Stmt *>(p.guard), static_cast<const Stmt *>(store->getRHS()),
        static_cast<const Stmt *>(lhs->getIdx())})
    if (std::string w = effectFree(ast, s, p.out); !w.empty())
      return w;
  for (const DeclStmt *ds : p.locals)
    if (std::string w = effectFree(ast, ds, p.out); !w.empty())
      return w;
  // Declarations that are evaluated again where the store runs: derived
  // values before the guard, and the locals the store's index uses.
  for (const VarDecl *v : p.leading)
    if (std::find(p.indices.begin(), p.indices.end(), v) == p.indices.end()) {
      if (std::string w = effectFree(ast, v->getInit(), p.out); !w.empty())
        return w;
      if (readsMemory(v->getInit()))
        return "the declaration of '" + v->getNameAsString() + "' at line " + line(v->getInit()) +
               " before the guard reads memory (only values computed from the thread indices)";
    }
  for (const VarDecl *v : storeLocals(p))
    if (readsMemory(v->getInit()))
      return "the store's index uses the local '" + v->getNameAsString() +
             "', which reads memory (the store runs in another thread, which would read it "
             "again)";
  return "";
}

/// Stride classes along one thread index.
bool unit(const Stride &s) {
  return s.kind == Stride::Kind::Constant && (s.value == 1 || s.value == -1);
}
bool zero(const Stride &s) { return s.kind == Stride::Kind::Constant && s.value == 0; }
bool spread(const Stride &s) {
  return s.kind == Stride::Kind::Symbolic ||
         (s.kind == Stride::Kind::Constant && s.value != 0 && s.value != 1 && s.value != -1);
}
std::string show(const Stride &s) {
  if (s.kind == Stride::Kind::Constant)
    return std::to_string(s.value);
  return s.kind == Stride::Kind::Symbolic ? s.text : "unknown";
}

/// An access and its strides along the two axes the tile spans (threadIdx.x
/// and threadIdx.y; in the 1-D form the column and the row of the split id).
struct Strided {
  std::string where;
  Stride x, y;
};

/// Decides the direction from the strides of the store and the reads, or
/// says why staging does not pay or does not fit. `ax`, `ay`: the names of
/// the two axes in the reasons.
std::string directionOf(const std::vector<Strided> &reads, const Strided &write, Pattern &p,
                        const std::string &ax, const std::string &ay) {
  if (unit(write.y) && spread(write.x)) {
    // The write wants threadIdx.x along y; every read must be coalesced (or
    // uniform) with threadIdx.x along x, where the value is computed.
    p.readAlongX = true;
    for (const Strided &r : reads)
      if (!unit(r.x) && !zero(r.x))
        return "the read " + r.where + " is strided along " + ax + " (stride " + show(r.x) +
               ") as the store is: more than one strided access pattern, one tile cannot "
               "coalesce both";
    return "";
  }
  if (unit(write.x)) {
    // The store coalesces already; it pays when a read is strided along x
    // and every read is coalesced (or uniform) with threadIdx.x along y.
    p.readAlongX = false;
    if (std::none_of(reads.begin(), reads.end(), [](const Strided &r) { return spread(r.x); }))
      return "no read is strided along " + ax +
             " and the store is unit-stride: already "
             "coalesced";
    for (const Strided &r : reads)
      if (!unit(r.y) && !zero(r.y))
        return "the read " + r.where + " is strided along " + ay + " (stride " + show(r.y) +
               ") and the store along neither: more than one strided access pattern, one tile "
               "cannot coalesce both";
    return "";
  }
  return "the store " + write.where + " is unit-stride along neither " + ax + " nor " + ay +
         " (strides " + show(write.x) + ", " + show(write.y) + ")";
}

/// The direction of the 2-D form, from the model's affine accesses.
std::string checkStrides(TransformContext &ctx, unsigned kernel, Pattern &p) {
  const Kernel &k = ctx.model().kernels[kernel];
  IndexSpace space(ctx.mlir);
  std::vector<Strided> reads;
  std::optional<Strided> write;
  const MemAccess *written = nullptr;
  for (const MemAccess &a : k.accesses) {
    std::string where = a.param + "[" + a.index + "] at line " + std::to_string(a.pos.line);
    if (a.atomic)
      return "the kernel updates " + where + " atomically";
    auto e = space.parse(a.normalized);
    if (!e || usesOpaque(*e, space))
      return "the index of " + where + " is not affine in the thread indices";
    if (e->isFunctionOfDim(IndexSpace::ThreadZ) || e->isFunctionOfDim(IndexSpace::BlockZ))
      return "the index of " + where + " uses the z thread dimension";
    Strided s{where, strideAlong(*e, IndexSpace::ThreadX, space),
              strideAlong(*e, IndexSpace::ThreadY, space)};
    if (s.x.kind == Stride::Kind::Unknown || s.y.kind == Stride::Kind::Unknown)
      return "the stride of " + where + " along the thread indices is not known";
    if (a.kind == AccessKind::Read) {
      reads.push_back(s);
      continue;
    }
    if (write)
      return "the kernel stores to global memory more than once (" + where + ")";
    write = s;
    written = &a;
  }
  if (!write || written->param != p.out->getName())
    return "the store is not one the analysis sees as a global access";
  return directionOf(reads, *write, p, "threadIdx.x", "threadIdx.y");
}

// ---- the 1-D form: row = idx / W, col = idx % W -----------------------------
//
// The launch is kept. The original threads g = 0 .. gridDim.x * blockDim.x - 1
// are laid out as a matrix of rows of W (g = row * W + col), cut into T x T
// tiles over which the blocks stride. Each element of a tile is the work of
// one original thread g: its declarations run with the id set to g, then its
// guard, its value and its store, exactly as that thread would. Which
// element the kernel itself computes from its id does not matter for
// correctness (every original thread runs once per phase and its value goes
// through its own tile slot); the split by W only decides that the tile's
// columns are the threads' unit-stride direction, which is what makes both
// sides coalesce.

/// The divisor W of the split: every `/` and `%` of the id has the same
/// uniform divisor (integer parameters that the kernel never changes, and
/// constants), at least one exists; else why not.
std::string flatSplit(ASTContext &ast, Pattern &p) {
  std::string why, text;
  forEachStmt(p.body, [&](const Stmt *s) {
    auto *bo = dyn_cast<BinaryOperator>(s);
    if (!why.empty() || !bo || (bo->getOpcode() != BO_Div && bo->getOpcode() != BO_Rem))
      return;
    auto *dre = dyn_cast<DeclRefExpr>(bo->getLHS()->IgnoreParenImpCasts());
    if (!dre || dre->getDecl() != p.x)
      return;
    std::string t = spelled(ast, bo->getRHS());
    if (p.divisor && t != text) {
      why = "the 1-D id '" + p.x->getNameAsString() + "' is divided by both '" + text + "' and '" +
            t + "' (one split into (row, col) only)";
      return;
    }
    forEachStmt(bo->getRHS(), [&](const Stmt *c) {
      if (auto *r = dyn_cast<DeclRefExpr>(c)) {
        auto *pv = dyn_cast<ParmVarDecl>(r->getDecl());
        if (why.empty() && (!pv || !pv->getType()->isIntegerType()))
          why = "the divisor '" + t +
                "' of the 1-D id is not made of integer parameters and "
                "constants (it must be the same for every thread)";
      } else if (isa<ArraySubscriptExpr>(c) || isa<CallExpr>(c) ||
                 (isa<Expr>(c) && cast<Expr>(c)->HasSideEffects(ast))) {
        if (why.empty())
          why = "the divisor '" + t + "' of the 1-D id reads memory, calls or has effects";
      }
    });
    p.divisor = bo->getRHS();
    text = t;
  });
  if (!why.empty())
    return why;
  if (!p.divisor)
    return "the kernel has a 1-D id '" + p.x->getNameAsString() +
           "' that is not split into (row, col) by '/' or '%' (no 2-D index space to tile)";
  // The divisor's parameters must keep their values (each thread reads W).
  forEachStmt(p.body, [&](const Stmt *c) {
    const DeclRefExpr *dre = changedVariable(c);
    if (dre && why.empty() && (isa<ParmVarDecl>(dre->getDecl()) || dre->getDecl() == p.x))
      why = "the kernel changes (or takes the address of) '" + dre->getDecl()->getNameAsString() +
            "' at line " + std::to_string(lineOf(ast, dre->getBeginLoc())) +
            ", which each element's thread must see as the original thread did";
  });
  return why;
}

/// Evaluates an integer index expression of the kernel for the original
/// thread whose id is `id` (parameters bound to `params`); nullopt when it
/// reads memory or uses something other than integer arithmetic on the id,
/// parameters and locals derived from them.
struct IndexEval {
  ASTContext &ast;
  const Pattern &p;
  std::map<const ParmVarDecl *, int64_t> params;
  int64_t id = 0;
  int depth = 0;

  std::optional<int64_t> operator()(const Expr *e) {
    if (++depth > 64) {
      --depth;
      return std::nullopt;
    }
    std::optional<int64_t> v = eval(e);
    --depth;
    return v;
  }
  std::optional<int64_t> eval(const Expr *e) {
    e = e->IgnoreParenImpCasts();
    if (auto *ce = dyn_cast<CStyleCastExpr>(e))
      return ce->getType()->isIntegerType() ? (*this)(ce->getSubExpr()) : std::nullopt;
    if (auto *fc = dyn_cast<CXXFunctionalCastExpr>(e))
      return fc->getType()->isIntegerType() ? (*this)(fc->getSubExpr()) : std::nullopt;
    if (auto *sc = dyn_cast<CXXStaticCastExpr>(e))
      return sc->getType()->isIntegerType() ? (*this)(sc->getSubExpr()) : std::nullopt;
    if (auto *il = dyn_cast<IntegerLiteral>(e))
      return int64_t(il->getValue().getZExtValue());
    if (auto *dre = dyn_cast<DeclRefExpr>(e)) {
      if (dre->getDecl() == p.x)
        return id;
      if (auto *pv = dyn_cast<ParmVarDecl>(dre->getDecl())) {
        auto it = params.find(pv);
        return it == params.end() ? std::nullopt : std::optional<int64_t>(it->second);
      }
      if (auto *vd = dyn_cast<VarDecl>(dre->getDecl());
          vd && vd->getType()->isIntegerType() && vd->hasInit())
        return (*this)(vd->getInit());
      return std::nullopt;
    }
    if (auto *uo = dyn_cast<UnaryOperator>(e)) {
      auto v = (*this)(uo->getSubExpr());
      if (!v)
        return v;
      if (uo->getOpcode() == UO_Minus)
        return -*v;
      if (uo->getOpcode() == UO_Plus)
        return *v;
      return std::nullopt;
    }
    if (auto *bo = dyn_cast<BinaryOperator>(e)) {
      auto a = (*this)(bo->getLHS()), b = (*this)(bo->getRHS());
      if (!a || !b)
        return std::nullopt;
      switch (bo->getOpcode()) {
      case BO_Add:
        return *a + *b;
      case BO_Sub:
        return *a - *b;
      case BO_Mul:
        return *a * *b;
      case BO_Div:
        return *b == 0 ? std::nullopt : std::optional<int64_t>(*a / *b);
      case BO_Rem:
        return *b == 0 ? std::nullopt : std::optional<int64_t>(*a % *b);
      case BO_Shl:
        return *b < 0 || *b > 30 ? std::nullopt : std::optional<int64_t>(*a << *b);
      default:
        return std::nullopt;
      }
    }
    return std::nullopt;
  }
};

/// The direction of the 1-D form: the strides of every access along the
/// column (id + 1) and the row (id + W), sampled at several parameter values
/// and positions away from the edges (a stride that changes between samples
/// is symbolic).
std::string checkFlatStrides(TransformContext &ctx, unsigned kernel, Pattern &p) {
  ASTContext &ast = ctx.unit.ast();
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  for (const MemAccess &a : ctx.model().kernels[kernel].accesses)
    if (a.atomic)
      return "the kernel updates " + a.param + "[" + a.index + "] at line " +
             std::to_string(a.pos.line) + " atomically";
  // The accesses: the store and every read its guard, value and locals make.
  struct Access {
    const ArraySubscriptExpr *e;
    bool isWrite;
  };
  std::vector<Access> accesses;
  auto *lhs = cast<ArraySubscriptExpr>(p.store->getLHS()->IgnoreParenImpCasts());
  accesses.push_back({lhs, true});
  std::vector<const Stmt *> roots = {p.guard, p.store->getRHS()};
  for (const DeclStmt *d : p.locals)
    roots.push_back(d);
  for (const Stmt *r : roots)
    forEachStmt(r, [&](const Stmt *c) {
      if (auto *as = dyn_cast<ArraySubscriptExpr>(c))
        accesses.push_back({as, false});
    });
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  auto next = [&](int64_t lo, int64_t hi) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return lo + int64_t(seed % uint64_t(hi - lo + 1));
  };
  std::vector<std::optional<int64_t>> dx(accesses.size()), dy(accesses.size());
  std::vector<bool> varies(accesses.size() * 2, false);
  for (int sample = 0; sample < 8; ++sample) {
    IndexEval ev{ast, p, {}, 0, 0};
    for (const ParmVarDecl *pv : fd->parameters())
      if (pv->getType()->isIntegerType())
        ev.params[pv] = next(40, 300);
    std::optional<int64_t> w = ev(p.divisor);
    if (!w || *w < 4)
      return "the divisor '" + spelled(ast, p.divisor) +
             "' of the 1-D id is not an integer function of the parameters";
    int64_t row = next(1, 20), col = next(1, *w - 3);
    for (size_t i = 0; i < accesses.size(); ++i) {
      const ArraySubscriptExpr *as = accesses[i].e;
      auto at = [&](int64_t g) {
        ev.id = g;
        return ev(as->getIdx());
      };
      auto base = at(row * *w + col), right = at(row * *w + col + 1),
           down = at((row + 1) * *w + col);
      if (!base || !right || !down)
        return "the index of " + spelled(ast, as) + " at line " +
               std::to_string(lineOf(ast, as->getBeginLoc())) +
               " is not an integer function of the 1-D id and the parameters";
      int64_t sx = *right - *base, sy = *down - *base;
      if (dx[i] && *dx[i] != sx)
        varies[2 * i] = true;
      if (dy[i] && *dy[i] != sy)
        varies[2 * i + 1] = true;
      dx[i] = sx, dy[i] = sy;
    }
  }
  auto strideOf = [&](size_t i, bool alongY) {
    Stride s;
    if (varies[2 * i + alongY]) {
      s.kind = Stride::Kind::Symbolic;
      s.text = "depends on the parameters";
    } else {
      s.kind = Stride::Kind::Constant;
      s.value = *(alongY ? dy[i] : dx[i]);
    }
    return s;
  };
  std::vector<Strided> reads;
  Strided write;
  for (size_t i = 0; i < accesses.size(); ++i) {
    Strided s{spelled(ast, accesses[i].e) + " at line " +
                  std::to_string(lineOf(ast, accesses[i].e->getBeginLoc())),
              strideOf(i, false), strideOf(i, true)};
    if (accesses[i].isWrite)
      write = s;
    else
      reads.push_back(s);
  }
  return directionOf(reads, write, p, "the column (idx + 1)",
                     "the row (idx + " + spelled(ast, p.divisor) + ")");
}

/// The 1-D form keeps every launch: each needs a 1-D grid and a constant
/// 1-D block of B threads, a multiple of 32 up to 1024; `p.block` is B.
std::string flatLaunches(TransformContext &ctx, unsigned kernel, Pattern &p) {
  if (std::string why = referencedOutsideLaunches(ctx, kernel); !why.empty())
    return why;
  std::vector<unsigned> launches = distinctLaunches(ctx, kernel);
  if (launches.empty())
    return "the kernel is never launched in this file, so its block shape cannot be derived";
  p.block = 0;
  for (unsigned l : launches) {
    std::optional<uint64_t> threads;
    if (std::string why = oneDimLaunch(ctx, l, threads); !why.empty())
      return why;
    std::string at = "launch #" + std::to_string(l);
    if (!threads || *threads % 32 || *threads > 1024 || (*threads & (*threads - 1)))
      return at + " needs a constant block of 32, 64, ..., 1024 threads (the tile's rows are "
                  "the block's threads over T)";
    if (p.block && p.block != *threads)
      return "the kernel's launches use different block sizes (" + std::to_string(p.block) +
             " and " + std::to_string(*threads) + ")";
    p.block = unsigned(*threads);
  }
  return "";
}

/// The tiles a block of B threads can stage in the 1-D form: T divides B
/// (whole tile rows) and B divides T * T (whole passes).
std::vector<std::string> flatTiles(unsigned block) {
  std::vector<std::string> out;
  for (unsigned t : {32u, 16u})
    if (block % t == 0 && (t * t) % block == 0)
      out.push_back(std::to_string(t));
  return out;
}

/// "" when the launches show that `a` and `b` never point into the same
/// allocation: both are __restrict__, or every launch passes two different
/// variables that hold fresh allocations (HostEffects: cudaMalloc, new, ...).
std::string distinctBuffers(TransformContext &ctx, unsigned kernel, const ParmVarDecl *a,
                            const ParmVarDecl *b) {
  if (a->getType().isRestrictQualified() && b->getType().isRestrictQualified())
    return "";
  std::string pair = a->getNameAsString() + " and " + b->getNameAsString();
  for (unsigned id : distinctLaunches(ctx, kernel)) {
    const CUDAKernelCallExpr *call = ctx.unit.launchExpr(id);
    const VarSet &fresh = freshAllocations(ctx, ctx.unit.launchFunction(id));
    const VarDecl *va = nullptr, *vb = nullptr;
    for (auto [param, var] : {std::make_pair(a, &va), std::make_pair(b, &vb)}) {
      unsigned i = param->getFunctionScopeIndex();
      auto *dre = i < call->getNumArgs()
                      ? dyn_cast<DeclRefExpr>(call->getArg(i)->IgnoreParenImpCasts())
                      : nullptr;
      *var = dre ? dyn_cast<VarDecl>(dre->getDecl()) : nullptr;
      if (!*var || !fresh.count(*var))
        return "nothing shows that " + pair + " do not alias: launch #" + std::to_string(id) +
               " passes for " + param->getNameAsString() +
               " something other than a variable holding its own allocation (or mark both "
               "__restrict__)";
    }
    if (va == vb)
      return "launch #" + std::to_string(id) + " passes " + va->getNameAsString() + " for both " +
             pair;
  }
  return "";
}

/// A call in `e` to a function that may have effects (not constexpr, not
/// from a system header such as dim3's constructor), or "".
std::string userCall(ASTContext &ast, const Stmt *e) {
  std::string found;
  forEachStmt(e, [&](const Stmt *c) {
    const FunctionDecl *f = nullptr;
    if (auto *ce = dyn_cast<CallExpr>(c))
      f = ce->getDirectCallee();
    else if (auto *cc = dyn_cast<CXXConstructExpr>(c))
      f = cc->getConstructor();
    else
      return;
    if (found.empty() &&
        (!f || (!f->isConstexpr() && !ast.getSourceManager().isInSystemHeader(f->getLocation()))))
      found = f ? f->getNameAsString() + "()" : "a function through a pointer";
  });
  return found;
}

std::string legalityOf(TransformContext &ctx, unsigned kernel, Pattern &p) {
  if (std::string why = matchPattern(ctx, kernel, p); !why.empty())
    return why;
  if (p.flat) {
    std::string why = flatSplit(ctx.unit.ast(), p);
    if (why.empty())
      why = checkFlatStrides(ctx, kernel, p);
    if (why.empty())
      why = flatLaunches(ctx, kernel, p);
    if (!why.empty())
      return "the 1-D mapping: " + why;
  } else if (std::string why = checkStrides(ctx, kernel, p); !why.empty())
    return why;
  if (!p.flat && !ctx.analysis(kernel).guarded)
    return "the store is not bounded in both thread indices by its guard (the tiles run up to "
           "T-1 threads past the launch's in each dimension)";
  // Reads move before other threads' writes: no buffer read may be `out`.
  const Kernel &k = ctx.model().kernels[kernel];
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  for (const MemAccess &a : k.accesses)
    if (a.kind == AccessKind::Read && a.paramIndex >= 0 &&
        unsigned(a.paramIndex) < fd->getNumParams())
      if (std::string why = distinctBuffers(ctx, kernel, p.out, fd->getParamDecl(a.paramIndex));
          !why.empty())
        return why;
  if (p.flat)
    return ""; // the launches are kept (flatLaunches checked them)
  // Every launch gets the tile's block and a grid derived from its own.
  if (std::string why = referencedOutsideLaunches(ctx, kernel); !why.empty())
    return why;
  std::vector<unsigned> launches = distinctLaunches(ctx, kernel);
  if (launches.empty())
    return "the kernel is never launched in this file, so its block shape cannot be derived";
  const SourceManager &sm = ctx.unit.ast().getSourceManager();
  for (unsigned l : launches)
    for (unsigned which : {0u, 1u}) {
      const Expr *e = launchConfigArg(ctx, l, which);
      if (e)
        e = e->IgnoreUnlessSpelledInSource();
      if (!e || e->HasSideEffects(ctx.unit.ast(), /*IncludePossibleEffects=*/false))
        return "launch #" + std::to_string(l) +
               ": the grid or block has side effects (the new grid evaluates both again)";
      if (std::string f = userCall(ctx.unit.ast(), e); !f.empty())
        return "launch #" + std::to_string(l) + ": the grid or block calls " + f +
               ", which the new grid would evaluate more than once";
      if (std::string why; configRange(ctx, l, which, &why).isInvalid())
        return why;
      if (!sm.isInMainFile(sm.getFileLoc(e->getBeginLoc())))
        return "launch #" + std::to_string(l) + ": the grid or block is written in another file";
    }
  return "";
}

std::string typeName(ASTContext &ast, QualType t) {
  return t.getAsString(PrintingPolicy(ast.getLangOpts()));
}

/// The 1-D form's body: the original body when the divisor is not positive
/// (W is uniform, so every thread takes the same branch), else the tiles.
std::string flatRewrite(ASTContext &ast, const Pattern &p, const Params &q) {
  std::string T = std::to_string(q.tile), B = std::to_string(p.block),
              BY = std::to_string(p.block / q.tile);
  std::string elem = typeName(ast, p.element.getUnqualifiedType());
  std::string tile = tileName, j = rowName;
  auto declare = [&](const VarDecl *v, const std::string &init) {
    return typeName(ast, v->getType()) + " " + v->getNameAsString() + " = " + init + ";\n";
  };
  auto *lhs = cast<ArraySubscriptExpr>(p.store->getLHS()->IgnoreParenImpCasts());
  std::string guard = spelled(ast, p.guard);
  if (p.earlyReturn)
    guard = "!(" + guard + ")";
  // One phase: element (row, col) of the tile; `alongCol`: threadIdx.x walks
  // the column. The original thread of the element is g = row * W + col.
  auto phase = [&](bool alongCol, bool store) {
    std::string across = "cudal1_tx", down = "(cudal1_ty + " + j + ")";
    std::string rowOff = alongCol ? down : across, colOff = alongCol ? across : down;
    std::string slot = tile + (alongCol ? "[cudal1_ty + " + j + "][cudal1_tx]"
                                        : "[cudal1_tx][cudal1_ty + " + j + "]");
    std::set<const VarDecl *> use =
        store ? needed(p, {p.guard, lhs->getIdx()}) : needed(p, {p.guard, p.store->getRHS()});
    std::string s = "#pragma unroll\n    for (int " + j + " = 0; " + j + " < " + T + "; " + j +
                    " += " + BY + ") {\n";
    s += "      const unsigned long long cudal1_row = cudal1_r0 + " + rowOff +
         ", cudal1_col = cudal1_c0 + " + colOff + ";\n";
    s += "      const unsigned long long cudal1_g = cudal1_row * cudal1_w + cudal1_col;\n";
    s += "      if (cudal1_col < cudal1_w && cudal1_g < cudal1_threads) {\n";
    for (const VarDecl *v : p.leading) {
      if (v == p.x)
        s += "        " + declare(v, "(unsigned)cudal1_g") +
             "        (void)" + // the original's unsigned id
             v->getNameAsString() + ";\n";
      else if (use.count(v))
        s += "        " + declare(v, spelled(ast, v->getInit()));
    }
    s += "        if (" + guard + ") {\n";
    if (!store) {
      for (const DeclStmt *d : p.locals)
        for (const Decl *v : d->decls())
          if (use.count(cast<VarDecl>(v)))
            s +=
                "          " + declare(cast<VarDecl>(v), spelled(ast, cast<VarDecl>(v)->getInit()));
      s += "          " + slot + " = " + spelled(ast, p.store->getRHS()) + ";\n";
    } else {
      for (const VarDecl *v : storeLocals(p))
        s += "          " + declare(v, spelled(ast, v->getInit()));
      s += "          " + spelled(ast, p.store->getLHS()) + " = " + slot + ";\n";
    }
    s += "        }\n      }\n    }\n";
    return s;
  };
  std::string s = "{\n";
  s += "  // stage-shared(tile=" + T + ", pad=" + std::to_string(q.pad) +
       ", flat=1): the 1-D id's threads as rows of " + spelled(ast, p.divisor) + ", in " + T + "x" +
       T + " tiles over which the blocks of " + B +
       " threads stride; the values are computed with threadIdx.x along the " +
       (p.readAlongX ? "column" : "row") + " and stored with it along the " +
       (p.readAlongX ? "row" : "column") + "\n";
  s += "  __shared__ " + elem + " " + tile + "[" + T + "][" + T + " + " + std::to_string(q.pad) +
       "];\n";
  s += "  const long long cudal1_cols = (long long)(" + spelled(ast, p.divisor) + ");\n";
  s += "  if (cudal1_cols <= 0) " + spelled(ast, p.body) + "\n";
  s += "  else {\n";
  s += "  const unsigned long long cudal1_threads = (unsigned long long)gridDim.x * " + B +
       ", cudal1_w = (unsigned long long)cudal1_cols;\n";
  s += "  const unsigned long long cudal1_colTiles = (cudal1_w + " + T + " - 1) / " + T + ";\n";
  s += "  const unsigned long long cudal1_tiles = ((cudal1_threads + cudal1_w - 1) / cudal1_w + " +
       T + " - 1) / " + T + " * cudal1_colTiles;\n";
  s += "  const unsigned cudal1_tx = threadIdx.x % " + T + "u, cudal1_ty = threadIdx.x / " + T +
       "u;\n";
  s += "  for (unsigned long long cudal1_t = blockIdx.x; cudal1_t < cudal1_tiles; cudal1_t += "
       "gridDim.x) {\n";
  s += "    const unsigned long long cudal1_r0 = cudal1_t / cudal1_colTiles * " + T +
       ", cudal1_c0 = cudal1_t % cudal1_colTiles * " + T + ";\n";
  s += "    // 1. Each element's value, as its original thread computes it.\n";
  s += "    " + phase(p.readAlongX, false);
  s += "    __syncthreads();\n";
  s += "    // 2. Its store, by the same original thread, from the tile.\n";
  s += "    " + phase(!p.readAlongX, true);
  s += "    __syncthreads(); // the next tile reuses the shared tile\n";
  s += "  }\n  }\n}";
  return s;
}

} // namespace

std::string StageShared::legality(TransformContext &ctx, Target t) const {
  Pattern p;
  return legalityOf(ctx, t.kernel, p);
}

std::vector<ParamSpace> StageShared::space(TransformContext &ctx, Target t) const {
  // The 1-D form keeps the launch: the tile rows per pass are the block's
  // threads over T, and `flat=1` tells remapLaunch (which sees only the
  // step) that the launch does not change.
  if (Pattern p; legalityOf(ctx, t.kernel, p).empty() && p.flat)
    return {{"tile", flatTiles(p.block)}, {"pad", {"1", "0"}}, {"flat", {"1"}}};
  return {{"tile", {"32", "16"}}, {"pad", {"1", "0"}}, {"rows", {"4", "2", "1"}}};
}

std::string StageShared::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  Pattern p;
  legalityOf(ctx, t.kernel, p);
  bool flat = step.param("flat").has_value();
  if (p.flat && !flat)
    return "the kernel has a 1-D mapping, whose form keeps the launch: write flat=1 "
           "(stage-shared(flat=1, tile=..., pad=...); rows is the block's size over the tile)";
  if (!p.flat && flat)
    return "parameter flat=1 is not legal: the kernel has a 2-D mapping (its form re-derives "
           "the launch)";
  if (p.flat && step.param("rows"))
    return "parameter rows is not legal for the 1-D form: the launch's block of " +
           std::to_string(p.block) + " threads sets it";
  if (std::string why = Transform::checkParams(ctx, t, step); !why.empty())
    return why;
  Params q = paramsOf(step);
  uint64_t bytes = uint64_t(q.tile) * (q.tile + q.pad) *
                   ctx.unit.ast().getTypeSizeInChars(p.element).getQuantity();
  if (bytes > kSharedLimit)
    return "a " + std::to_string(q.tile) + "x" + std::to_string(q.tile + q.pad) + " tile of " +
           typeName(ctx.unit.ast(), p.element) + " needs " + std::to_string(bytes) +
           " bytes of shared memory, past the 48 KiB limit";
  return "";
}

llvm::Error StageShared::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  Pattern p;
  if (std::string why = legalityOf(ctx, t.kernel, p); !why.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", why.c_str());
  Params q = paramsOf(step);
  if (p.flat) {
    ctx.rewriter.ReplaceText(CharSourceRange::getTokenRange(p.body->getSourceRange()),
                             flatRewrite(ctx.unit.ast(), p, q));
    return llvm::Error::success();
  }
  ASTContext &ast = ctx.unit.ast();
  std::string T = std::to_string(q.tile), BY = std::to_string(q.blockY());
  std::string elem = typeName(ast, p.element.getUnqualifiedType());
  std::string tile = tileName, j = rowName;
  // The two ways of laying the block over the tile: threadIdx.x walks x
  // (tile[ty + j][tx]) or walks y (tile[tx][ty + j]); the tile is always
  // indexed [y - tile's y][x - tile's x].
  std::string across = "threadIdx.x", down = "(threadIdx.y + " + j + ")";
  auto declare = [&](const VarDecl *v, const std::string &init) {
    return typeName(ast, v->getType()) + " " + v->getNameAsString() + " = " + init + ";\n";
  };
  // The ids for this phase's layout, and the derived values it needs.
  auto indices = [&](bool alongX, const std::set<const VarDecl *> &use, const std::string &ind) {
    std::string s;
    for (const VarDecl *v : p.leading) {
      if (v != p.x && v != p.y) {
        if (use.count(v))
          s += ind + declare(v, spelled(ast, v->getInit()));
        continue;
      }
      bool isX = v == p.x;
      std::string local = isX == alongX ? across : down;
      s += ind +
           declare(v, std::string("blockIdx.") + (isX ? "x" : "y") + " * " + T + " + " + local);
    }
    return s;
  };
  auto *lhs = cast<ArraySubscriptExpr>(p.store->getLHS()->IgnoreParenImpCasts());
  std::set<const VarDecl *> forValue = needed(p, {p.guard, p.store->getRHS()});
  auto slot = [&](bool alongX) {
    return tile + (alongX ? "[threadIdx.y + " + j + "][threadIdx.x]"
                          : "[threadIdx.x][threadIdx.y + " + j + "]");
  };
  std::string guard = spelled(ast, p.guard);
  if (p.earlyReturn)
    guard = "!(" + guard + ")";
  std::string head = "#pragma unroll\n  for (int " + j + " = 0; " + j + " < " + T + "; " + j +
                     " += " + BY + ") {\n";
  std::string s = "{\n";
  s += "  // stage-shared(tile=" + T + ", pad=" + std::to_string(q.pad) +
       ", rows=" + std::to_string(q.rows) + "): a " + T + "x" + T + " tile per block of " + T +
       "x" + BY + " threads; the values are computed with threadIdx.x along " +
       (p.readAlongX ? "x" : "y") + " and stored with it along " + (p.readAlongX ? "y" : "x") +
       "\n";
  s += "  __shared__ " + elem + " " + tile + "[" + T + "][" + T + " + " + std::to_string(q.pad) +
       "];\n";
  // 1. Each element's value, by its own (x, y), under its guard.
  s += head + indices(p.readAlongX, forValue, "    ");
  s += "    if (" + guard + ") {\n";
  for (const DeclStmt *d : p.locals)
    for (const Decl *v : d->decls())
      if (forValue.count(cast<VarDecl>(v)))
        s += "      " + declare(cast<VarDecl>(v), spelled(ast, cast<VarDecl>(v)->getInit()));
  s += "      " + slot(p.readAlongX) + " = " + spelled(ast, p.store->getRHS()) + ";\n";
  s += "    }\n  }\n  __syncthreads();\n";
  // 2. The store, by the same (x, y) under the same guard, from the tile.
  s += head + indices(!p.readAlongX, needed(p, {p.guard, lhs->getIdx()}), "    ");
  std::vector<const VarDecl *> locals = storeLocals(p);
  s += "    if (" + guard + ")" + (locals.empty() ? "\n" : " {\n");
  for (const VarDecl *v : locals)
    s += "      " + declare(v, spelled(ast, v->getInit()));
  s += "      " + spelled(ast, p.store->getLHS()) + " = " + slot(!p.readAlongX) + ";\n";
  if (!locals.empty())
    s += "    }\n";
  s += "  }\n}";
  ctx.rewriter.ReplaceText(CharSourceRange::getTokenRange(p.body->getSourceRange()), s);
  // 3. Every launch: blocks of T x T/rows, a grid covering the threads the
  // original grid had in x and y (z: each of the original's z threads
  // repeated the same stores; one layer per z thread keeps them).
  for (unsigned l : distinctLaunches(ctx, t.kernel)) {
    const Expr *grid = launchConfigArg(ctx, l, 0)->IgnoreUnlessSpelledInSource();
    const Expr *block = launchConfigArg(ctx, l, 1)->IgnoreUnlessSpelledInSource();
    std::string g = "dim3(" + spelled(ast, grid) + ")", b = "dim3(" + spelled(ast, block) + ")";
    auto cover = [&](const char *d) {
      return "(unsigned)(((size_t)" + g + "." + d + " * " + b + "." + d + " + " +
             std::to_string(q.tile - 1) + ") / " + T + ")";
    };
    ctx.rewriter.ReplaceText(configRange(ctx, l, 0), "dim3(" + cover("x") + ", " + cover("y") +
                                                         ", " + g + ".z * " + b + ".z)");
    ctx.rewriter.ReplaceText(configRange(ctx, l, 1), "dim3(" + T + ", " + BY + ")");
  }
  LLVM_DEBUG(llvm::dbgs() << "stage-shared: tile " << q.tile << ", pad " << q.pad << ", rows "
                          << q.rows << ", computed along " << (p.readAlongX ? "x" : "y") << "\n");
  return llvm::Error::success();
}

std::optional<LaunchRemapStep> StageShared::remapLaunch(const PlanStep &step) const {
  // What apply writes into each launch: tiles of T, blocks of T x T/rows.
  Params q = paramsOf(step);
  if (step.param("flat"))
    return std::nullopt; // the 1-D form keeps the launch
  return LaunchRemapStep::tiles(q.tile, q.blockY());
}
