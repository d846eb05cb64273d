// The tuner's search space, taken from the plan driver's LegalSpace.
#include "cudal1/Tune/Space.h"
#include "cudal1/Analysis/KernelAnalysis.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/Rewrite/Transform.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <set>

namespace cudal1 {

std::string stepText(const PlanStep &step) { return printPlan(Plan{{step}}); }

bool isFastMath(const PlanStep &step) {
  const Transform *t = findTransform(step.transform);
  return t && t->fastMath();
}

Plan planOf(const std::vector<PlanStep> &steps) {
  Plan p{steps};
  for (PlanStep &s : p.steps)
    s.column = 0;
  return p;
}

std::string planText(const std::vector<PlanStep> &steps) { return printPlan(planOf(steps)); }

size_t TuneSpace::ownerOf(const PlanScope &scope) const {
  if (scope.loop >= 0 || scope.sync >= 0 || scope.copy >= 0) {
    for (size_t k = 0; k < kernels.size(); ++k)
      if (kernels[k].host)
        return k;
    return kNoKernel;
  }
  if (scope.launch >= 0) {
    auto it = launchOwner.find(scope.launch);
    return it == launchOwner.end() ? kNoKernel : it->second;
  }
  for (size_t k = 0; k < kernels.size(); ++k)
    if (!kernels[k].host && kernels[k].name == scope.kernel)
      return k;
  return kNoKernel;
}

std::vector<PlanStep> ComposedStep::steps() const {
  std::vector<PlanStep> out = prerequisites;
  out.push_back(step);
  return out;
}

std::map<size_t, Plan> TuneSpace::partsOf(const Plan &plan) const {
  std::map<size_t, Plan> parts;
  const std::vector<PlanStep> &ps = plan.steps;
  for (size_t i = 0; i < ps.size();) {
    // A composed step of some entry, prerequisites first, starts here?
    size_t owner = kNoKernel, len = 1;
    for (size_t k = 0; k < kernels.size() && owner == kNoKernel; ++k)
      for (const ComposedStep &c : kernels[k].composed) {
        size_t n = c.prerequisites.size();
        if (i + n < ps.size() &&
            std::equal(c.prerequisites.begin(), c.prerequisites.end(), ps.begin() + long(i)) &&
            ps[i + n].transform == c.step.transform && ps[i + n].scope == c.step.scope) {
          owner = k;
          len = n + 1;
          break;
        }
      }
    if (owner == kNoKernel)
      owner = ownerOf(ps[i].scope);
    if (owner == kNoKernel)
      return {};
    for (size_t j = i; j < i + len; ++j)
      parts[owner].steps.push_back(ps[j]);
    i += len;
  }
  return parts;
}

namespace {

// Every combination of the offered parameter values.
void expand(const PlanScope &scope, const LegalTransform &t, std::vector<PlanStep> &out) {
  PlanStep base;
  base.scope = scope;
  base.transform = t.name;
  std::vector<const ParamSpace *> space;
  for (const ParamSpace &p : t.params)
    if (!p.values.empty())
      space.push_back(&p);
  std::vector<size_t> idx(space.size(), 0);
  while (true) {
    PlanStep s = base;
    for (size_t i = 0; i < space.size(); ++i)
      s.params.push_back({space[i]->name, space[i]->values[idx[i]]});
    out.push_back(s);
    size_t i = 0;
    for (; i < space.size(); ++i) {
      if (++idx[i] < space[i]->values.size())
        break;
      idx[i] = 0;
    }
    if (i == space.size())
      break;
  }
}

/// Every legal transform listed for one site.
void expandLegal(const PlanScope &scope, const LegalSite &site, std::vector<PlanStep> &out) {
  for (const LegalTransform &t : site.transforms)
    if (t.legal)
      expand(scope, t, out);
}

/// Every refused transform of a site that prerequisites enable, each
/// parameter value after the same prerequisites.
void expandEnabled(const PlanScope &scope, const LegalSite &site, std::vector<ComposedStep> &out) {
  for (const LegalTransform &t : site.transforms) {
    if (t.legal || t.enabledBy.empty())
      continue;
    std::vector<PlanStep> steps;
    expand(scope, t, steps);
    for (PlanStep &s : steps)
      out.push_back({t.enabledBy, std::move(s)});
  }
}

} // namespace

TuneSpace tuneSpaceOf(const LegalSpace &legal, const std::string &hostKey) {
  TuneSpace space;
  space.file = legal.file;
  std::map<std::string, size_t> byName;
  for (const LegalSite &k : legal.kernels) {
    TuneKernel tk;
    tk.name = k.kernelName;
    tk.key = k.kernelKey;
    byName.emplace(tk.name, space.kernels.size());
    space.kernels.push_back(tk);
  }
  std::map<std::string, std::vector<const LegalSite *>> launchesOf;
  for (const LegalSite &l : legal.launches) {
    auto it = byName.find(l.kernelName);
    if (it == byName.end())
      continue; // a launch of a kernel defined elsewhere
    space.kernels[it->second].launches.push_back(unsigned(l.scope.launch));
    space.launchOwner[l.scope.launch] = it->second;
    launchesOf[l.kernelName].push_back(&l);
  }
  for (size_t i = 0; i < legal.kernels.size(); ++i) {
    TuneKernel &tk = space.kernels[i];
    expandLegal(legal.kernels[i].scope, legal.kernels[i], tk.steps);
    expandEnabled(legal.kernels[i].scope, legal.kernels[i], tk.composed);
    const auto &ls = launchesOf[tk.name];
    for (const LegalSite *l : ls) {
      const PlanScope &scope = ls.size() == 1 ? legal.kernels[i].scope : l->scope;
      expandLegal(scope, *l, tk.steps);
      expandEnabled(scope, *l, tk.composed);
    }
  }
  // Host-side steps (a loop captured as a graph, a dropped synchronization)
  // belong to no kernel: they form one more entry, keyed by the host code.
  TuneKernel host;
  host.name = "(host)";
  host.key = hostKey;
  host.host = true;
  for (const LegalSite &l : legal.loops) {
    expandLegal(l.scope, l, host.steps);
    expandEnabled(l.scope, l, host.composed);
  }
  for (const LegalSite &s : legal.syncs)
    expandLegal(s.scope, s, host.steps);
  if (!host.steps.empty() || !host.composed.empty())
    space.kernels.push_back(host);
  return space;
}

llvm::Expected<TuneSpace> collectTuneSpace(const RewriteInput &in) {
  auto unit = ParsedUnit::parse(in.file, in.code, in.args);
  if (!unit)
    return unit.takeError();
  llvm::Expected<LegalSpace> legal = legalSpace(**unit, in);
  if (!legal)
    return legal.takeError();
  std::string hostKey = (*unit)->model().hostKey; // hostCodeKey (Frontend.h)
  TuneSpace space = tuneSpaceOf(*legal, hostKey);
  // The features a strategy sees (KernelState), per distinct kernel.
  const ProgramModel &m = (*unit)->model();
  mlir::MLIRContext mlir;
  for (size_t i = 0; i < legal->kernels.size(); ++i) {
    KernelAnalysis a = analyzeKernel(m.kernels[legal->kernels[i].kernel], mlir);
    space.kernels[i].features = std::move(a.features);
    space.kernels[i].featureVersion = featureVersion;
  }
  return space;
}

llvm::Error keepTransforms(TuneSpace &space, const std::vector<std::string> &names) {
  std::set<std::string> keep;
  for (const std::string &n : names) {
    if (!findTransform(n)) {
      std::string known;
      for (const auto &t : allTransforms())
        known += (known.empty() ? "" : ", ") + t->name().str();
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--transforms: unknown transform '%s' (known: %s)", n.c_str(),
                                     known.c_str());
    }
    keep.insert(n);
  }
  for (TuneKernel &k : space.kernels) {
    llvm::erase_if(k.steps, [&](const PlanStep &s) { return !keep.count(s.transform); });
    llvm::erase_if(k.composed,
                   [&](const ComposedStep &c) { return !keep.count(c.step.transform); });
  }
  return llvm::Error::success();
}

} // namespace cudal1
