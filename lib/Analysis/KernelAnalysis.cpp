// Strides, read/write sets, guards and features of one kernel.
#include "cudal1/Analysis/KernelAnalysis.h"

#include "mlir/IR/MLIRContext.h"

#include <algorithm>

using namespace cudal1;
using mlir::AffineExpr;

namespace {

/// Thread dimension d (0=x, 1=y, 2=z) is used by `e` through threadIdx.d or blockIdx.d.
bool usesThreadDim(AffineExpr e, unsigned d) {
  return e.isFunctionOfDim(IndexSpace::ThreadX + d) || e.isFunctionOfDim(IndexSpace::BlockX + d);
}

bool threadDependent(AffineExpr e, const IndexSpace &space) {
  for (unsigned d = 0; d < 3; ++d)
    if (usesThreadDim(e, d))
      return true;
  return usesOpaque(e, space);
}

/// The thread dimensions a guard "L op R" bounds from above: L grows with
/// the dimension and R does not depend on threads (or the mirror image).
/// `L == R` bounds too; `L != R` does not.
std::vector<unsigned> boundedDims(const Guard &guard, IndexSpace &space) {
  if (guard.op == GuardOp::NE)
    return {};
  auto l = space.parse(guard.lhs);
  auto r = space.parse(guard.rhs);
  if (!l || !r)
    return {};
  AffineExpr grows = *l, limit = *r;
  if (guard.op == GuardOp::GT || guard.op == GuardOp::GE)
    std::swap(grows, limit);
  if (threadDependent(limit, space) || usesOpaque(grows, space))
    return {};
  std::vector<unsigned> dims;
  for (unsigned d = 0; d < 3; ++d)
    if (usesThreadDim(grows, d))
      dims.push_back(d);
  return dims;
}

} // namespace

KernelAnalysis cudal1::analyzeKernel(const Kernel &k, mlir::MLIRContext &ctx) {
  KernelAnalysis r;
  IndexSpace space(ctx);
  r.params.resize(k.params.size());
  unsigned unit = 0, uniform = 0, strided = 0, unknown = 0, guardedCount = 0;
  unsigned threadDims = 0; // bit set of x, y, z used by any access
  std::vector<std::optional<AffineExpr>> parsed;
  for (const MemAccess &a : k.accesses) {
    AccessAnalysis aa;
    auto e = space.parse(a.normalized);
    parsed.push_back(e);
    if (e) {
      if (!usesOpaque(*e, space))
        aa.affine = space.print(*e);
      aa.strideX = strideAlong(*e, IndexSpace::ThreadX, space);
      aa.threadDependent = threadDependent(*e, space);
      for (unsigned d = 0; d < 3; ++d)
        if (usesThreadDim(*e, d))
          threadDims |= 1u << d;
    } else {
      aa.threadDependent = true;
    }
    switch (aa.strideX.kind) {
    case Stride::Kind::Constant:
      if (aa.strideX.value == 0)
        ++uniform;
      else if (aa.strideX.value == 1 || aa.strideX.value == -1)
        ++unit;
      else
        ++strided;
      break;
    case Stride::Kind::Symbolic:
      ++strided;
      break;
    case Stride::Kind::Unknown:
      ++unknown;
      break;
    }
    if (a.paramIndex >= 0 && size_t(a.paramIndex) < r.params.size())
      (a.kind == AccessKind::Read ? r.params[a.paramIndex].reads : r.params[a.paramIndex].writes) =
          true;
    r.accesses.push_back(aa);
  }
  // An access is guarded when its guards bound every thread dimension the
  // kernel's accesses use (a uniform access under the same guard counts too:
  // extra threads must not repeat its atomics).
  for (size_t i = 0; i < k.accesses.size(); ++i) {
    unsigned bounded = 0;
    for (const Guard &g : k.accesses[i].guards)
      for (unsigned d : boundedDims(g, space))
        bounded |= 1u << d;
    r.accesses[i].guarded = threadDims != 0 && (bounded & threadDims) == threadDims;
    guardedCount += r.accesses[i].guarded;
  }
  r.guarded = !k.accesses.empty() && guardedCount == k.accesses.size();
  r.gridStride =
      std::any_of(k.loops.begin(), k.loops.end(), [](const KernelLoop &l) { return l.gridStride; });

  // Features for the policy (docs/Analysis.md, version featureVersion).
  unsigned maxDepth = 0, pointers = 0, constPointers = 0, restrictPointers = 0, reads = 0,
           writes = 0, inLoop = 0;
  for (const KernelLoop &l : k.loops)
    maxDepth = std::max(maxDepth, l.depth + 1);
  for (const KernelParam &p : k.params) {
    pointers += p.isPointer;
    constPointers += p.isPointer && p.pointeeConst;
    restrictPointers += p.isPointer && p.isRestrict;
  }
  for (const MemAccess &a : k.accesses) {
    (a.kind == AccessKind::Read ? reads : writes)++;
    inLoop += !a.loops.empty();
  }
  long long sharedBytes = 0;
  bool dynamicShared = false;
  for (const SharedDecl &s : k.shared) {
    if (s.bytes > 0)
      sharedBytes += s.bytes;
    dynamicShared |= s.dynamic;
  }
  double n = std::max<size_t>(1, k.accesses.size());
  auto f = [&](const char *name, double v) { r.features.emplace_back(name, v); };
  f("params", k.params.size());
  f("pointer_params", pointers);
  f("const_pointer_params", constPointers);
  f("restrict_pointer_params", restrictPointers);
  f("loops", k.loops.size());
  f("max_loop_depth", maxDepth);
  f("global_reads", reads);
  f("global_writes", writes);
  f("accesses_in_loops", inLoop);
  f("frac_unit_stride", unit / n);
  f("frac_uniform", uniform / n);
  f("frac_strided", strided / n);
  f("frac_unknown_stride", unknown / n);
  f("thread_dims", __builtin_popcount(threadDims));
  f("atomics", k.atomics.size());
  f("barriers", k.barriers.size());
  f("shared_decls", k.shared.size());
  f("shared_bytes_static", sharedBytes);
  f("dynamic_shared", dynamicShared);
  f("device_calls", k.calls.size());
  f("flops_static", k.flops);
  f("int_ops_static", k.intOps);
  f("math_calls", k.mathCalls);
  f("branches", k.branches);
  f("arith_intensity_static", double(k.flops) / n);
  f("guarded", r.guarded);
  f("grid_stride", r.gridStride);
  return r;
}
