// Launch-to-launch dependences with MLIR's Presburger library.
//
// Each access becomes a linear map from the global thread id g (one per
// dimension, g = blockIdx * blockDim + threadIdx) and the loop counters of
// its enclosing loops to an element: e = c·g + l·k + (affine in symbols).
// For accesses a (first launch) and b (second launch) to one buffer we ask
// whether  e_a(g1, k1) = e_b(g2, k2)  with g1 ≠ g2  has an integer solution
// under the guards' bounds (0 ≤ g, g < n). Parameters are renamed to the
// launch arguments bound to them, so `n` in both kernels is the same symbol
// only when both launches pass the same expression.
#include "cudal1/Analysis/Dependence.h"
#include "cudal1/Analysis/AffineIndex.h"

#include "mlir/Analysis/Presburger/IntegerRelation.h"
#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <map>

using namespace cudal1;
using mlir::AffineExpr;
namespace pb = mlir::presburger;

const char *cudal1::toString(DependenceResult r) {
  switch (r) {
  case DependenceResult::Disjoint:
    return "disjoint";
  case DependenceResult::SameThread:
    return "same-thread";
  case DependenceResult::CrossThread:
    return "cross-thread";
  case DependenceResult::Unknown:
    return "unknown";
  }
  return "unknown";
}

namespace {
/// Order of severity: a worse result dominates when combining.
int rank(DependenceResult r) {
  switch (r) {
  case DependenceResult::Disjoint:
    return 0;
  case DependenceResult::SameThread:
    return 1;
  case DependenceResult::Unknown:
    return 2;
  case DependenceResult::CrossThread:
    return 3;
  }
  return 2;
}
} // namespace

DependenceResult LaunchDependence::overall() const {
  DependenceResult worst = DependenceResult::Disjoint;
  for (const BufferDependence &b : buffers)
    if (rank(b.result) > rank(worst))
      worst = b.result;
  return worst;
}

namespace {

/// An affine form over symbols: name → coefficient, plus a constant.
struct SymbolicForm {
  std::map<std::string, int64_t> terms;
  int64_t constant = 0;
};

/// e = Σ coef[d]·g_d + Σ loopCoef[i]·k_i + invariant, with upper bounds on g_d.
struct LinearAccess {
  bool ok = false;
  std::string why;
  int64_t coef[3] = {0, 0, 0};
  std::vector<int64_t> loopCoef;
  SymbolicForm invariant;
  /// g_d ≤ bound (inclusive), when a guard gives one.
  std::optional<SymbolicForm> upper[3];
  unsigned dims = 3;
};

std::optional<SymbolicForm> flattenInvariant(AffineExpr e, const IndexSpace &space) {
  mlir::SimpleAffineExprFlattener fl(space.numDims(), space.numSymbols());
  if (mlir::failed(fl.walkPostOrder(e)) || fl.numLocals != 0)
    return std::nullopt;
  const auto &v = fl.operandExprStack.back();
  SymbolicForm f;
  for (unsigned d = 0; d < space.numDims(); ++d)
    if (v[d] != 0)
      return std::nullopt;
  for (unsigned s = 0; s < space.numSymbols(); ++s)
    if (v[space.numDims() + s] != 0)
      f.terms[space.symbolName(s)] = v[space.numDims() + s];
  f.constant = v.back();
  return f;
}

LinearAccess linearize(const AccessInstance &in, mlir::MLIRContext &ctx) {
  LinearAccess la;
  la.dims = in.launchDims == 0 ? 3 : in.launchDims;
  IndexSpace space(ctx);
  auto rename = [&](llvm::StringRef n) -> std::string {
    for (const auto &[from, to] : in.rename)
      if (n == from)
        return to;
    return n.str();
  };
  auto e = space.parse(in.index, rename);
  if (!e) {
    la.why = "index '" + in.index + "' is outside the affine grammar";
    return la;
  }
  if (usesOpaque(*e, space)) {
    la.why = "index '" + space.print(*e) + "' uses a value of unknown origin";
    return la;
  }
  // A grid-stride loop (i = g + k * blockDim * gridDim) walks logical
  // indices: fold its counter into the thread dimension, so that the
  // question becomes whether the logical element indices meet.
  bool folded = false;
  llvm::SmallVector<AffineExpr> fold = gridStrideFold(*e, space, folded);
  auto applyFold = [&](AffineExpr x) { return folded ? x.replaceDims(fold) : x; };
  e = applyFold(*e);
  for (unsigned d = 0; d < 3; ++d) {
    auto c = globalCoefficient(*e, d, space);
    if (!c) {
      la.why = "index '" + space.print(*e) +
               "' is not linear in the global thread id with a constant stride";
      return la;
    }
    la.coef[d] = *c;
  }
  for (unsigned d = IndexSpace::NumBuiltinDims; d < space.numDims(); ++d) {
    if (!e->isFunctionOfDim(d))
      continue;
    auto c = coefficientOf(*e, d, space);
    auto k = c ? llvm::dyn_cast<mlir::AffineConstantExpr>(
                     mlir::simplifyAffineExpr(*c, space.numDims(), space.numSymbols()))
               : mlir::AffineConstantExpr();
    if (!k) {
      la.why = "loop counter " + space.dimName(d) + " has a symbolic coefficient";
      return la;
    }
    la.loopCoef.push_back(k.getValue());
  }
  auto inv = flattenInvariant(dropDims(*e, space), space);
  if (!inv) {
    la.why = "index '" + space.print(*e) + "' has a non-affine invariant part";
    return la;
  }
  la.invariant = *inv;
  // Guards of the form g_d < bound or g_d <= bound.
  for (const Guard &g : in.guards) {
    if (g.op == GuardOp::EQ || g.op == GuardOp::NE)
      continue;
    auto l = space.parse(g.lhs, rename);
    auto r = space.parse(g.rhs, rename);
    if (!l || !r)
      continue;
    AffineExpr grows = applyFold(*l), limit = applyFold(*r);
    if (g.op == GuardOp::GT || g.op == GuardOp::GE)
      std::swap(grows, limit);
    bool inclusive = g.op == GuardOp::LE || g.op == GuardOp::GE;
    auto lim = flattenInvariant(limit, space);
    if (!lim || usesOpaque(grows, space))
      continue;
    // grows must be exactly g_d: coefficient 1 in d, 0 elsewhere, nothing invariant.
    for (unsigned d = 0; d < 3; ++d) {
      auto c = globalCoefficient(grows, d, space);
      if (!c || *c != 1)
        continue;
      bool only = true;
      for (unsigned o2 = 0; o2 < 3; ++o2)
        if (o2 != d &&
            (!globalCoefficient(grows, o2, space) || *globalCoefficient(grows, o2, space) != 0))
          only = false;
      for (unsigned x = IndexSpace::NumBuiltinDims; x < space.numDims(); ++x)
        only &= !grows.isFunctionOfDim(x);
      auto rest = flattenInvariant(dropDims(grows, space), space);
      if (!only || !rest || !rest->terms.empty() || rest->constant != 0)
        continue;
      if (!inclusive)
        lim->constant -= 1;
      la.upper[d] = *lim;
    }
  }
  la.ok = true;
  return la;
}

/// Builds and queries the Presburger relation (g1, k1) ↔ (g2, k2).
class PairProblem {
public:
  PairProblem(const LinearAccess &a, const LinearAccess &b) : a(a), b(b) {
    auto addNames = [&](const SymbolicForm &f) {
      for (const auto &t : f.terms)
        if (!symbolCol.count(t.first))
          symbolCol.emplace(t.first, symbolCol.size());
    };
    for (const LinearAccess *x : {&a, &b}) {
      addNames(x->invariant);
      for (const auto &u : x->upper)
        if (u)
          addNames(*u);
    }
    space = pb::PresburgerSpace::getRelationSpace(3, 3, symbolCol.size(),
                                                  a.loopCoef.size() + b.loopCoef.size());
  }

  pb::IntegerRelation base() const {
    pb::IntegerRelation rel(space);
    unsigned cols = rel.getNumCols();
    unsigned dom = rel.getVarKindOffset(pb::VarKind::Domain);
    unsigned ran = rel.getVarKindOffset(pb::VarKind::Range);
    unsigned sym = rel.getVarKindOffset(pb::VarKind::Symbol);
    unsigned loc = rel.getVarKindOffset(pb::VarKind::Local);
    auto addForm = [&](std::vector<int64_t> &row, const SymbolicForm &f, int64_t sign) {
      for (const auto &[name, c] : f.terms)
        row[sym + symbolCol.at(name)] += sign * c;
      row[cols - 1] += sign * f.constant;
    };
    // e_a(g1, k1) - e_b(g2, k2) = 0
    std::vector<int64_t> eq(cols, 0);
    for (unsigned d = 0; d < 3; ++d) {
      eq[dom + d] += a.coef[d];
      eq[ran + d] -= b.coef[d];
    }
    for (size_t i = 0; i < a.loopCoef.size(); ++i)
      eq[loc + i] += a.loopCoef[i];
    for (size_t i = 0; i < b.loopCoef.size(); ++i)
      eq[loc + a.loopCoef.size() + i] -= b.loopCoef[i];
    addForm(eq, a.invariant, 1);
    addForm(eq, b.invariant, -1);
    rel.addEquality(eq);
    // Thread ranges: 0 ≤ g ≤ upper; dimensions a launch does not have are 0.
    for (unsigned side = 0; side < 2; ++side) {
      const LinearAccess &x = side ? b : a;
      unsigned off = side ? ran : dom;
      for (unsigned d = 0; d < 3; ++d) {
        std::vector<int64_t> row(cols, 0);
        row[off + d] = 1;
        if (d >= x.dims) {
          rel.addEquality(row);
          continue;
        }
        rel.addInequality(row);
        if (x.upper[d]) {
          std::vector<int64_t> up(cols, 0);
          up[off + d] = -1;
          addForm(up, *x.upper[d], 1);
          rel.addInequality(up);
        }
      }
    }
    // Loop counters count iterations: k ≥ 0.
    for (size_t i = 0; i < a.loopCoef.size() + b.loopCoef.size(); ++i) {
      std::vector<int64_t> row(cols, 0);
      row[loc + i] = 1;
      rel.addInequality(row);
    }
    return rel;
  }

  /// A witness g1 ≠ g2 (differing in dimension d) when one exists.
  std::optional<std::string> crossThread() const {
    for (unsigned d = 0; d < 3; ++d) {
      if (d >= a.dims && d >= b.dims)
        continue;
      for (int dir : {1, -1}) {
        pb::IntegerRelation rel = base();
        std::vector<int64_t> row(rel.getNumCols(), 0);
        unsigned dom = rel.getVarKindOffset(pb::VarKind::Domain);
        unsigned ran = rel.getVarKindOffset(pb::VarKind::Range);
        // dir = 1: g2_d ≥ g1_d + 1; dir = -1: g1_d ≥ g2_d + 1.
        row[ran + d] = dir;
        row[dom + d] = -dir;
        row.back() = -1;
        rel.addInequality(row);
        if (rel.isIntegerEmpty())
          continue;
        return witness(rel);
      }
    }
    return std::nullopt;
  }

private:
  const LinearAccess &a, &b;
  std::map<std::string, unsigned> symbolCol;
  pb::PresburgerSpace space = pb::PresburgerSpace::getRelationSpace();

  std::string witness(const pb::IntegerRelation &rel) const {
    auto sample = rel.findIntegerSample();
    if (!sample)
      return "a dependence exists (no sample found)";
    auto v = [&](unsigned i) { return std::to_string(int64_t((*sample)[i])); };
    unsigned dom = rel.getVarKindOffset(pb::VarKind::Domain);
    unsigned ran = rel.getVarKindOffset(pb::VarKind::Range);
    unsigned sym = rel.getVarKindOffset(pb::VarKind::Symbol);
    static const char *axis[] = {"x", "y", "z"};
    std::string s = "thread (";
    for (unsigned d = 0; d < a.dims; ++d)
      s += std::string(d ? ", " : "") + axis[d] + "=" + v(dom + d);
    s += ") of the first launch and thread (";
    for (unsigned d = 0; d < b.dims; ++d)
      s += std::string(d ? ", " : "") + axis[d] + "=" + v(ran + d);
    s += ") of the second touch the same element";
    if (!symbolCol.empty()) {
      s += " when";
      bool first = true;
      for (const auto &[name, col] : symbolCol) {
        s += (first ? " " : ", ") + name + "=" + v(sym + col);
        first = false;
      }
    }
    return s;
  }
};

} // namespace

BufferDependence cudal1::testAccessPair(const AccessInstance &ia, const AccessInstance &ib,
                                        mlir::MLIRContext &ctx) {
  BufferDependence r;
  LinearAccess a = linearize(ia, ctx), b = linearize(ib, ctx);
  if (!a.ok || !b.ok) {
    r.result = DependenceResult::Unknown;
    r.detail = !a.ok ? a.why : b.why;
    return r;
  }
  PairProblem p(a, b);
  if (p.base().isIntegerEmpty()) {
    r.result = DependenceResult::Disjoint;
    return r;
  }
  if (auto w = p.crossThread()) {
    r.result = DependenceResult::CrossThread;
    r.detail = *w;
    return r;
  }
  r.result = DependenceResult::SameThread;
  return r;
}

namespace {

unsigned launchDims(const LaunchSite &l) {
  if (l.gridDims == 0 || l.blockDims == 0)
    return 0;
  return std::max(l.gridDims, l.blockDims);
}

/// Renames a kernel's scalar parameters to the launch's arguments, so that
/// two kernels agree on a symbol exactly when their launches pass the same
/// expression.
std::vector<std::pair<std::string, std::string>> renaming(const Kernel &k, const LaunchSite &l) {
  std::vector<std::pair<std::string, std::string>> r;
  for (size_t i = 0; i < k.params.size() && i < l.args.size(); ++i)
    if (!k.params[i].isPointer)
      r.emplace_back(k.params[i].name, "[" + l.args[i] + "]");
  return r;
}

} // namespace

LaunchDependence cudal1::analyzeLaunchPair(const ProgramModel &model, unsigned first,
                                           unsigned second, mlir::MLIRContext &ctx) {
  LaunchDependence dep;
  dep.first = first;
  dep.second = second;
  const LaunchSite &la = model.launches[first], &lb = model.launches[second];
  if (la.kernelIndex < 0 || lb.kernelIndex < 0)
    return dep;
  const Kernel &ka = model.kernels[la.kernelIndex], &kb = model.kernels[lb.kernelIndex];
  // Buffers both launches touch.
  std::map<std::string, BufferDependence> perBuffer;
  for (const MemAccess &x : ka.accesses) {
    if (x.paramIndex < 0 || size_t(x.paramIndex) >= la.argBuffers.size())
      continue;
    const std::string &buf = la.argBuffers[x.paramIndex];
    if (buf.empty())
      continue;
    for (const MemAccess &y : kb.accesses) {
      if (y.paramIndex < 0 || size_t(y.paramIndex) >= lb.argBuffers.size() ||
          lb.argBuffers[y.paramIndex] != buf)
        continue;
      if (x.kind == AccessKind::Read && y.kind == AccessKind::Read)
        continue;
      std::string kind = std::string(toString(x.kind)) + "-" + toString(y.kind);
      BufferDependence bd;
      if (la.args[x.paramIndex] != buf || lb.args[y.paramIndex] != buf) {
        bd.result = DependenceResult::Unknown;
        bd.detail = "a pointer argument with an offset";
      } else {
        AccessInstance ia{x.normalized, x.guards, launchDims(la), renaming(ka, la)};
        AccessInstance ib{y.normalized, y.guards, launchDims(lb), renaming(kb, lb)};
        bd = testAccessPair(ia, ib, ctx);
      }
      bd.buffer = buf;
      bd.kind = kind;
      auto it = perBuffer.find(buf);
      if (it == perBuffer.end() || rank(bd.result) > rank(it->second.result))
        perBuffer[buf] = bd;
    }
  }
  for (auto &[name, bd] : perBuffer)
    dep.buffers.push_back(bd);
  return dep;
}

std::vector<LaunchDependence> cudal1::analyzeLaunchPairs(const ProgramModel &model,
                                                         const HostFunction &fn,
                                                         mlir::MLIRContext &ctx) {
  std::vector<LaunchDependence> out;
  int prev = -1;
  bool syncSincePrev = false;
  for (const HostEvent &ev : fn.events) {
    if (ev.kind != HostEventKind::Launch) {
      syncSincePrev |= ev.kind == HostEventKind::Sync || ev.kind == HostEventKind::Memcpy;
      continue;
    }
    if (prev >= 0) {
      LaunchDependence dep = analyzeLaunchPair(model, prev, ev.launch, ctx);
      dep.syncBetween = syncSincePrev;
      out.push_back(std::move(dep));
    }
    prev = ev.launch;
    syncSincePrev = false;
  }
  return out;
}
