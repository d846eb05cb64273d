// A plan's effect: the analysis of the rewritten unit against the
// original's (docs/Policy.md, "The effect encoding").
#include "cudal1/Tune/Effect.h"

#include "cudal1/Analysis/KernelAnalysis.h"
#include "cudal1/Frontend/ParsedUnit.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <set>
#include <thread>

using namespace clang;

namespace cudal1 {
namespace {

/// A compile-time integer, if the expression is one.
std::optional<int64_t> constInt(const Expr *e, const ASTContext &ctx) {
  if (!e || e->isValueDependent() || e->isTypeDependent())
    return std::nullopt;
  Expr::EvalResult r;
  if (!e->EvaluateAsInt(r, ctx))
    return std::nullopt;
  return r.Val.getInt().getExtValue();
}

/// A launch dimension as a compile-time (x, y, z): an integer, a dim3 of
/// integers, or a local dim3 variable initialized so (a later assignment to
/// it is not followed: this is a feature, not a proof).
std::optional<std::array<int64_t, 3>> constDims(const Expr *e, const ASTContext &ctx,
                                                int depth = 0) {
  if (!e || depth > 8)
    return std::nullopt;
  e = e->IgnoreImplicit()->IgnoreParens();
  if (auto *fc = dyn_cast<CXXFunctionalCastExpr>(e))
    return constDims(fc->getSubExpr(), ctx, depth + 1);
  if (auto *ce = dyn_cast<CXXConstructExpr>(e)) {
    if (ce->getNumArgs() == 1 &&
        ctx.hasSameUnqualifiedType(ce->getArg(0)->getType(), ce->getType()))
      return constDims(ce->getArg(0), ctx, depth + 1); // a copy
    std::array<int64_t, 3> d = {1, 1, 1};
    for (unsigned i = 0; i < ce->getNumArgs() && i < 3; ++i) {
      std::optional<int64_t> v = constInt(ce->getArg(i), ctx);
      if (!v)
        return std::nullopt;
      d[i] = *v;
    }
    return d;
  }
  if (auto *dre = dyn_cast<DeclRefExpr>(e))
    if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
      if (vd->getInit() && !vd->getType()->isIntegerType())
        return constDims(vd->getInit(), ctx, depth + 1);
  if (e->getType()->isIntegerType())
    if (std::optional<int64_t> v = constInt(e, ctx))
      return std::array<int64_t, 3>{*v, 1, 1};
  return std::nullopt;
}

/// Shuffles reached from a kernel: its body and the bodies of the device
/// functions it calls (runtime helpers such as cudal1WarpAtomicAdd), each
/// function counted once.
struct DeviceCalls {
  const SourceManager &sm;
  std::set<const FunctionDecl *> seen;
  double shuffles = 0;

  void walk(const Stmt *s) {
    if (!s)
      return;
    if (auto *call = dyn_cast<CallExpr>(s))
      if (const FunctionDecl *f = call->getDirectCallee()) {
        StringRef name = f->getDeclName().isIdentifier() ? f->getName() : StringRef();
        if (name.starts_with("__shfl"))
          ++shuffles;
        else
          function(f);
      }
    for (const Stmt *c : s->children())
      walk(c);
  }
  void function(const FunctionDecl *f) {
    const FunctionDecl *def = nullptr;
    if (!f->hasBody(def) || !def || sm.isInSystemHeader(def->getLocation()) ||
        !seen.insert(def).second)
      return;
    walk(def->getBody());
  }
};

/// The widest load or store through a pointer in a kernel's body: an
/// access the analysis does not model (a vector load through a cast
/// pointer, `*reinterpret_cast<const float4 *>(a + i)`) counts too.
double widestDeref(const Stmt *s, const ASTContext &ctx) {
  if (!s)
    return 0;
  double widest = 0;
  const Expr *through = nullptr;
  if (auto *u = dyn_cast<UnaryOperator>(s); u && u->getOpcode() == UO_Deref)
    through = u;
  else if (auto *a = dyn_cast<ArraySubscriptExpr>(s);
           a && a->getBase()->IgnoreParenImpCasts()->getType()->isPointerType())
    through = a;
  if (through) {
    QualType t = through->getType();
    if (!t.isNull() && !t->isDependentType() && !t->isIncompleteType() && t->isConstantSizeType())
      widest = double(ctx.getTypeSizeInChars(t).getQuantity());
  }
  for (const Stmt *c : s->children())
    widest = std::max(widest, widestDeref(c, ctx));
  return widest;
}

/// Host API calls in the main file, by what they are for.
struct HostCalls : RecursiveASTVisitor<HostCalls> {
  const SourceManager &sm;
  double graph = 0, library = 0;
  explicit HostCalls(const SourceManager &s) : sm(s) {}
  // Calls inside templates (the runtime's helpers) resolve only there.
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool VisitCallExpr(CallExpr *call) {
    const FunctionDecl *f = call->getDirectCallee();
    if (!f || !sm.isInMainFile(sm.getExpansionLoc(call->getBeginLoc())))
      return true;
    std::string q = f->getQualifiedNameAsString();
    StringRef n(q);
    if (n.starts_with("cudaGraph") || n == "cudaStreamBeginCapture" || n == "cudaStreamEndCapture")
      ++graph;
    else if (n.starts_with("cublas") || n.starts_with("cub::"))
      ++library;
    return true;
  }
};

double feature(const std::vector<std::pair<std::string, double>> &fs, const std::string &name) {
  for (const auto &[n, v] : fs)
    if (n == name)
      return v;
  return 0;
}

/// The analysis features whose change the effect reports (docs/Analysis.md).
const char *const kDeltaFeatures[] = {"frac_unit_stride",
                                      "frac_uniform",
                                      "frac_strided",
                                      "frac_unknown_stride",
                                      "global_reads",
                                      "global_writes",
                                      "accesses_in_loops",
                                      "atomics",
                                      "barriers",
                                      "shared_decls",
                                      "shared_bytes_static",
                                      "dynamic_shared",
                                      "loops",
                                      "max_loop_depth",
                                      "flops_static",
                                      "int_ops_static",
                                      "math_calls",
                                      "branches",
                                      "restrict_pointer_params",
                                      "params",
                                      "device_calls",
                                      "grid_stride",
                                      "guarded"};

} // namespace

const std::vector<std::string> &effectFeatureNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {
        // The unit.
        "kernels_delta", "launch_sites_delta", "launched_kernels_delta", "syncs_delta",
        "graph_calls_delta", "library_calls_delta", "stream_launches_delta",
        // The target kernel (or the kernel its work moved to).
        "target_runs", "moved", "block_threads", "block_threads_log2_delta", "grid_changed",
        "dynamic_shared_bytes_delta", "vector_bytes", "vector_bytes_log2_delta",
        "launch_bounds_threads", "launch_bounds_min_blocks", "shuffles_delta"};
    for (const char *f : kDeltaFeatures)
      n.push_back(std::string(f) + "_delta");
    return n;
  }();
  return names;
}

UnitSummary summarizeUnit(const ParsedUnit &unit) {
  UnitSummary s;
  const ProgramModel &m = unit.model();
  ASTContext &ctx = const_cast<ParsedUnit &>(unit).ast();
  const SourceManager &sm = ctx.getSourceManager();
  mlir::MLIRContext mlir;
  std::set<std::string> names;
  for (unsigned i = 0; i < m.kernels.size(); ++i) {
    const Kernel &k = m.kernels[i];
    if (k.fromHeader || !names.insert(k.name).second)
      continue;
    UnitSummary::KernelInfo ki;
    ki.name = k.name;
    ki.features = analyzeKernel(k, mlir).features;
    for (unsigned a = 0; a < k.accesses.size(); ++a)
      if (const Expr *e = unit.accessExpr(i, a)) {
        QualType t = e->getType();
        if (!t.isNull() && !t->isDependentType() && !t->isIncompleteType() &&
            t->isConstantSizeType())
          ki.vectorBytes =
              std::max(ki.vectorBytes, double(ctx.getTypeSizeInChars(t).getQuantity()));
      }
    if (const FunctionDecl *fd = unit.kernelDecl(i)) {
      const FunctionDecl *body = nullptr;
      if (fd->hasBody(body) && body)
        ki.vectorBytes = std::max(ki.vectorBytes, widestDeref(body->getBody(), ctx));
      DeviceCalls dc{sm, {}, 0};
      dc.function(fd);
      ki.shuffles = dc.shuffles;
      const FunctionDecl *def = nullptr;
      fd->hasBody(def);
      for (const FunctionDecl *d : {fd, def})
        if (d)
          if (const auto *lb = d->getAttr<CUDALaunchBoundsAttr>()) {
            ki.launchBoundsThreads = double(constInt(lb->getMaxThreads(), ctx).value_or(0));
            ki.launchBoundsMinBlocks = double(constInt(lb->getMinBlocks(), ctx).value_or(0));
          }
    }
    s.keyOfKernel[k.name] = k.key;
    s.kernels.push_back(std::move(ki));
  }
  for (unsigned l = 0; l < m.launches.size(); ++l) {
    const LaunchSite &ls = m.launches[l];
    if (ls.pos.file != m.mainFile)
      continue;
    UnitSummary::LaunchInfo li;
    li.kernel = ls.kernel;
    li.grid = ls.grid;
    li.stream = !ls.stream.empty();
    if (const CUDAKernelCallExpr *call = unit.launchExpr(l))
      if (const CallExpr *cfg = call->getConfig()) {
        if (cfg->getNumArgs() > 1)
          if (auto d = constDims(cfg->getArg(1), ctx))
            li.blockThreads = double((*d)[0] * (*d)[1] * (*d)[2]);
        if (cfg->getNumArgs() > 2)
          li.dynamicShared = double(constInt(cfg->getArg(2), ctx).value_or(0));
      }
    s.launches.push_back(std::move(li));
  }
  for (const HostSync &hs : m.syncs)
    s.syncs += hs.pos.file == m.mainFile;
  HostCalls hc(sm);
  for (Decl *d : ctx.getTranslationUnitDecl()->decls())
    if (sm.isInMainFile(sm.getExpansionLoc(d->getLocation())))
      hc.TraverseDecl(d);
  s.graphCalls = hc.graph;
  s.libraryCalls = hc.library;
  s.hostKey = m.hostKey;
  return s;
}

EffectFeatures effectBetween(const UnitSummary &before, const UnitSummary &after,
                             const std::string &kernel) {
  auto launchedKernels = [](const UnitSummary &u) {
    std::set<std::string> k;
    for (const auto &l : u.launches)
      k.insert(l.kernel);
    return k;
  };
  auto streamLaunches = [](const UnitSummary &u) {
    double n = 0;
    for (const auto &l : u.launches)
      n += l.stream;
    return n;
  };
  std::set<std::string> launchedBefore = launchedKernels(before),
                        launchedAfter = launchedKernels(after);
  std::vector<double> v = {double(after.kernels.size()) - double(before.kernels.size()),
                           double(after.launches.size()) - double(before.launches.size()),
                           double(launchedAfter.size()) - double(launchedBefore.size()),
                           after.syncs - before.syncs,
                           after.graphCalls - before.graphCalls,
                           after.libraryCalls - before.libraryCalls,
                           streamLaunches(after) - streamLaunches(before)};
  // The target and its successor: the kernel itself while it still runs,
  // else the first kernel the input did not have that runs (fusion), else
  // none (its launches went to a library, or to a graph).
  auto kernelIn = [](const UnitSummary &u, const std::string &name) {
    for (const auto &k : u.kernels)
      if (k.name == name)
        return &k;
    return static_cast<const UnitSummary::KernelInfo *>(nullptr);
  };
  auto firstLaunch = [](const UnitSummary &u, const std::string &name) {
    for (const auto &l : u.launches)
      if (l.kernel == name)
        return &l;
    return static_cast<const UnitSummary::LaunchInfo *>(nullptr);
  };
  const UnitSummary::KernelInfo *was = kernel.empty() ? nullptr : kernelIn(before, kernel);
  const UnitSummary::KernelInfo *now = nullptr;
  bool moved = false;
  if (was) {
    if (launchedAfter.count(kernel) || !launchedBefore.count(kernel))
      now = kernelIn(after, kernel);
    if (!now)
      for (const auto &k : after.kernels)
        if (!kernelIn(before, k.name) && launchedAfter.count(k.name)) {
          now = &k;
          moved = true;
          break;
        }
  }
  const UnitSummary::LaunchInfo *lb = was ? firstLaunch(before, kernel) : nullptr;
  const UnitSummary::LaunchInfo *la = now ? firstLaunch(after, now->name) : nullptr;
  auto log2Ratio = [](double a, double b) { return a > 0 && b > 0 ? std::log2(a / b) : 0.0; };
  v.push_back(now ? 1 : 0);
  v.push_back(moved ? 1 : 0);
  v.push_back(la ? la->blockThreads : 0);
  v.push_back(la && lb ? log2Ratio(la->blockThreads, lb->blockThreads) : 0);
  v.push_back(la && lb && la->grid != lb->grid ? 1 : 0);
  v.push_back(la && lb ? la->dynamicShared - lb->dynamicShared : 0);
  v.push_back(now ? now->vectorBytes : 0);
  v.push_back(now && was ? log2Ratio(now->vectorBytes, was->vectorBytes) : 0);
  v.push_back(now ? now->launchBoundsThreads : 0);
  v.push_back(now ? now->launchBoundsMinBlocks : 0);
  v.push_back(now && was ? now->shuffles - was->shuffles : 0);
  for (const char *f : kDeltaFeatures)
    v.push_back(now && was ? feature(now->features, f) - feature(was->features, f) : 0);
  const std::vector<std::string> &names = effectFeatureNames();
  EffectFeatures out;
  for (size_t i = 0; i < names.size(); ++i)
    out.emplace_back(names[i], v[i]);
  return out;
}

EffectCache::EffectCache(RewriteInput input) : in(std::move(input)) {}
EffectCache::~EffectCache() = default;

const UnitSummary *EffectCache::input() {
  if (!triedInput) {
    triedInput = true;
    QuietParses quiet;
    auto u = ParsedUnit::parse(in.file, in.code, in.args);
    if (u) {
      parsed = std::move(*u);
      before = summarizeUnit(*parsed);
    } else {
      llvm::consumeError(u.takeError());
    }
  }
  return before ? &*before : nullptr;
}

const EffectFeatures *EffectCache::cached(const std::string &kernel,
                                          const std::vector<PlanStep> &steps) const {
  auto it = effects.find(kernel + "\n" + planText(steps));
  return it != effects.end() && it->second ? &*it->second : nullptr;
}

void EffectCache::computeAll(const std::string &kernel,
                             const std::vector<std::vector<PlanStep>> &plans) {
  std::vector<std::string> keys;
  std::vector<Plan> todo;
  for (const std::vector<PlanStep> &steps : plans) {
    std::string key = kernel + "\n" + planText(steps);
    if (effects.count(key) || std::find(keys.begin(), keys.end(), key) != keys.end())
      continue;
    keys.push_back(key);
    todo.push_back(planOf(steps));
  }
  if (todo.empty())
    return;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::optional<EffectFeatures>> results(todo.size());
  if (const UnitSummary *b = input()) {
    QuietParses quiet;
    std::vector<std::optional<std::string>> sources(todo.size());
    llvm::Error e = applyPlans(
        in, todo,
        [&](size_t i, llvm::Expected<std::string> src) {
          if (src)
            sources[i] = std::move(*src);
          else
            llvm::consumeError(src.takeError());
        },
        parsed.get());
    llvm::consumeError(std::move(e)); // the input parsed once: not expected
    std::string entry = kernel == "(host)" ? "" : kernel;
    std::vector<std::thread> threads;
    for (size_t i = 0; i < todo.size(); ++i)
      if (sources[i])
        threads.emplace_back([&, i] {
          QuietParses silence;
          auto u = ParsedUnit::parse(in.file, *sources[i], in.args);
          if (u)
            results[i] = effectBetween(*b, summarizeUnit(**u), entry);
          else
            llvm::consumeError(u.takeError());
        });
    for (std::thread &t : threads)
      t.join();
  }
  computedCount += unsigned(todo.size());
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < todo.size(); ++i)
    effects.emplace(keys[i], std::move(results[i]));
}

const EffectFeatures *EffectCache::effectOf(const std::string &kernel,
                                            const std::vector<PlanStep> &steps) {
  computeAll(kernel, {steps});
  return cached(kernel, steps);
}

} // namespace cudal1
