// The policy's encoding of states and plans (docs/Policy.md, "Encoding").
#include "cudal1/Policy/Encoding.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

using namespace llvm;

namespace cudal1 {

double signedLog(double x) { return x < 0 ? -std::log1p(-x) : std::log1p(x); }

bool EncodingSchema::operator==(const EncodingSchema &o) const {
  return encodingVersion == o.encodingVersion && featureVersion == o.featureVersion &&
         stepCap == o.stepCap && stateNames == o.stateNames && stateMean == o.stateMean &&
         stateStd == o.stateStd && transforms == o.transforms && params == o.params &&
         effectVersion == o.effectVersion && effectNames == o.effectNames &&
         effectMean == o.effectMean && effectStd == o.effectStd;
}

std::vector<std::pair<std::string, double>> rawStateInputs(const KernelState &s) {
  // What is unknown is left out rather than given as 0, and encodes as the
  // training mean: an original not yet timed, a floor not computed, a GPU
  // known only by name must not look like a 0 ms kernel on a 0-SM GPU.
  std::vector<std::pair<std::string, double>> out;
  for (const auto &[name, value] : s.features)
    out.emplace_back("kernel." + name, value);
  out.emplace_back("kernel.host", s.host ? 1 : 0);
  auto known = [&](const char *name, double v) {
    if (v > 0)
      out.emplace_back(name, v);
  };
  const GpuDescriptor &g = s.gpu;
  known("gpu.sm_count", g.smCount);
  known("gpu.mem_bandwidth_gbs", g.memBandwidthGBs);
  known("gpu.l2_bytes", g.l2Bytes);
  known("gpu.shared_per_sm_bytes", g.sharedPerSmBytes);
  known("gpu.registers_per_sm", g.registersPerSm);
  known("gpu.compute_capability", g.computeMajor * 10 + g.computeMinor);
  // The original kernel's time (replay) and its program's (a whole-program
  // judge): different quantities, so two inputs.
  known("time.original_us", s.originalMs ? *s.originalMs * 1000 : 0);
  known("time.program_us", s.programMs ? *s.programMs * 1000 : 0);
  known("time.floor_bytes", s.floorBytes);
  known("time.floor_flops", s.floorFlops);
  return out;
}

namespace {

/// Names, means and deviations of signed logs over the values given, by
/// name in sorted order: each over the items that have it.
struct Moments {
  std::map<std::string, std::pair<double, double>> sums; // sum, sum of squares
  std::map<std::string, unsigned> counts;
  void add(const std::string &name, double value) {
    double v = signedLog(value);
    sums[name].first += v;
    sums[name].second += v * v;
    ++counts[name];
  }
  void into(std::vector<std::string> &names, std::vector<double> &means,
            std::vector<double> &stds) const {
    for (const auto &[name, sum] : sums) {
      double n = counts.at(name);
      double mean = sum.first / n;
      double var = std::max(0.0, sum.second / n - mean * mean);
      names.push_back(name);
      means.push_back(mean);
      // A constant input carries no information; std 1 keeps it at 0.
      stds.push_back(var > 1e-12 ? std::sqrt(var) : 1.0);
    }
  }
};

} // namespace

EncodingSchema fitSchema(const std::vector<const KernelState *> &states,
                         const std::vector<std::vector<PlanStep>> &plans, int featureVersion,
                         const std::vector<const EffectFeatures *> &effects, int effectVersion) {
  EncodingSchema schema;
  schema.featureVersion = featureVersion;
  // 1. The state names and their statistics (over the states given: the
  // training split only, so that validation and test stay unseen).
  Moments state;
  for (const KernelState *s : states)
    for (const auto &[name, value] : rawStateInputs(*s))
      state.add(name, value);
  state.into(schema.stateNames, schema.stateMean, schema.stateStd);
  // The effects, over the plans and exemplars whose effect is known.
  Moments effect;
  for (const EffectFeatures *e : effects)
    if (e)
      for (const auto &[name, value] : *e)
        effect.add(name, value);
  for (const KernelState *s : states)
    for (const Exemplar &x : s->exemplars)
      if (x.effect)
        for (const auto &[name, value] : *x.effect)
          effect.add(name, value);
  effect.into(schema.effectNames, schema.effectMean, schema.effectStd);
  schema.effectVersion = schema.effectNames.empty() ? 0 : effectVersion;
  // 2. The vocabularies, sorted so that the schema does not depend on the
  // order of the data.
  std::set<std::string> transforms, params;
  for (const auto &plan : plans)
    for (const PlanStep &s : plan) {
      transforms.insert(s.transform);
      for (const auto &p : s.params)
        params.insert(p.first);
    }
  for (const KernelState *s : states)
    for (const Exemplar &e : s->exemplars)
      for (const PlanStep &st : e.steps) {
        transforms.insert(st.transform);
        for (const auto &p : st.params)
          params.insert(p.first);
      }
  schema.transforms.assign(transforms.begin(), transforms.end());
  schema.params.assign(params.begin(), params.end());
  return schema;
}

std::vector<float> encodeState(const EncodingSchema &schema, const KernelState &state,
                               std::pair<std::string, double> *worst) {
  std::vector<float> out(schema.stateDim(), 0.0f);
  std::map<std::string, double> raw;
  for (const auto &[name, value] : rawStateInputs(state))
    raw[name] = value;
  if (worst)
    *worst = {"", 0};
  for (unsigned i = 0; i < schema.stateDim(); ++i) {
    auto it = raw.find(schema.stateNames[i]);
    double z = it == raw.end() ? 0.0 // unknown: the training mean
                               : (signedLog(it->second) - schema.stateMean[i]) / schema.stateStd[i];
    if (worst && std::fabs(z) > std::fabs(worst->second))
      *worst = {schema.stateNames[i], z};
    out[i] = float(z);
  }
  return out;
}

namespace {

/// A parameter value as one number: an integer n as log2(2 + n), a shape
/// "32x8" by its product the same way, anything else (a name) as 1; absent
/// parameters are 0, so that loop=0 and "no loop" differ.
double paramValue(const std::string &text) {
  SmallVector<StringRef, 3> parts;
  StringRef(text).split(parts, 'x');
  double product = 1;
  for (StringRef p : parts) {
    unsigned long long n = 0;
    if (p.empty() || p.getAsInteger(10, n))
      return text.empty() ? 0 : 1;
    product *= double(n);
  }
  return std::log2(2 + product);
}

void encodeStep(const EncodingSchema &schema, const PlanStep &step, unsigned position, float *out) {
  unsigned i = 0;
  out[i++] = 1; // present
  out[i++] = float(position + 1) / float(schema.stepCap);
  auto t = std::lower_bound(schema.transforms.begin(), schema.transforms.end(), step.transform);
  unsigned tid = t != schema.transforms.end() && *t == step.transform
                     ? 1 + unsigned(t - schema.transforms.begin())
                     : 0;
  out[i + tid] = 1;
  i += 1 + unsigned(schema.transforms.size());
  // Scope kind: kernel, launch, host loop, host sync, host copy, none.
  const PlanScope &sc = step.scope;
  int kind = !sc.kernel.empty() ? 0
             : sc.launch >= 0   ? 1
             : sc.loop >= 0     ? 2
             : sc.sync >= 0     ? 3
             : sc.copy >= 0     ? 4
                                : 5;
  out[i + kind] = 1;
  i += 6;
  int site = std::max({sc.launch, sc.loop, sc.sync, sc.copy});
  out[i++] = site >= 0 ? float(std::log2(2.0 + site)) : 0.0f;
  for (const auto &[name, value] : step.params) {
    auto p = std::lower_bound(schema.params.begin(), schema.params.end(), name);
    if (p != schema.params.end() && *p == name)
      out[i + unsigned(p - schema.params.begin())] = float(paramValue(value));
  }
}

} // namespace

std::vector<float> encodePlan(const EncodingSchema &schema, const std::vector<PlanStep> &steps,
                              const EffectFeatures *effect) {
  std::vector<float> out(schema.planDim(), 0.0f);
  unsigned n = std::min<unsigned>(unsigned(steps.size()), schema.stepCap);
  for (unsigned k = 0; k < n; ++k)
    encodeStep(schema, steps[k], k, out.data() + k * schema.stepDim());
  unsigned tail = schema.stepCap * schema.stepDim();
  out[tail] = float(steps.size()) / float(schema.stepCap);
  out[tail + 1] = steps.size() > schema.stepCap ? 1.0f : 0.0f;
  if (effect && schema.effectDim() > 0) {
    // Known: a flag, then each effect as a normalized signed log; a name the
    // schema does not have is left out, one it has and the effect lacks is 0.
    float *e = out.data() + tail + 2;
    e[0] = 1;
    for (const auto &[name, value] : *effect) {
      auto it = std::lower_bound(schema.effectNames.begin(), schema.effectNames.end(), name);
      if (it == schema.effectNames.end() || *it != name)
        continue;
      size_t i = size_t(it - schema.effectNames.begin());
      e[1 + i] = float((signedLog(value) - schema.effectMean[i]) / schema.effectStd[i]);
    }
  }
  return out;
}

std::vector<float> encodeExemplar(const EncodingSchema &schema, const Exemplar &e) {
  std::vector<float> out = encodePlan(schema, e.steps, e.effect ? &*e.effect : nullptr);
  const Measurement &m = e.measured;
  bool timed = m.timed && m.speedup > 0;
  double y = timed ? std::clamp(std::log(m.speedup), -kMaxLogSpeedup, kMaxLogSpeedup) : 0.0;
  bool wrong = m.outcome == Outcome::Wrong || m.outcome == Outcome::WrongAfterTiming;
  bool failed = m.outcome != Outcome::Ok && !wrong && m.outcome != Outcome::NotRun;
  for (double v : {y, timed ? 1.0 : 0.0, m.outcome == Outcome::Ok ? 1.0 : 0.0, wrong ? 1.0 : 0.0,
                   failed ? 1.0 : 0.0, e.thisRun ? 1.0 : 0.0})
    out.push_back(float(v));
  return out;
}

EncodedInput encodeInput(const EncodingSchema &schema, const KernelState &state,
                         const std::vector<std::vector<PlanStep>> &plans,
                         const std::vector<const EffectFeatures *> *effects) {
  EncodedInput in;
  in.state = encodeState(schema, state);
  size_t first =
      state.exemplars.size() > kMaxExemplars ? state.exemplars.size() - kMaxExemplars : 0;
  for (size_t i = first; i < state.exemplars.size(); ++i) {
    std::vector<float> e = encodeExemplar(schema, state.exemplars[i]);
    in.exemplars.insert(in.exemplars.end(), e.begin(), e.end());
    ++in.numExemplars;
  }
  for (size_t i = 0; i < plans.size(); ++i) {
    const auto &plan = plans[i];
    std::vector<float> p =
        encodePlan(schema, plan, effects && i < effects->size() ? (*effects)[i] : nullptr);
    in.plans.insert(in.plans.end(), p.begin(), p.end());
    ++in.numPlans;
  }
  return in;
}

json::Value schemaToJson(const EncodingSchema &s) {
  json::Array state;
  for (unsigned i = 0; i < s.stateDim(); ++i)
    state.push_back(
        json::Object{{"name", s.stateNames[i]}, {"mean", s.stateMean[i]}, {"std", s.stateStd[i]}});
  json::Array transforms, params, effects;
  for (const std::string &t : s.transforms)
    transforms.push_back(t);
  for (const std::string &p : s.params)
    params.push_back(p);
  for (size_t i = 0; i < s.effectNames.size(); ++i)
    effects.push_back(json::Object{
        {"name", s.effectNames[i]}, {"mean", s.effectMean[i]}, {"std", s.effectStd[i]}});
  return json::Object{
      {"encoding_version", s.encodingVersion}, {"feature_version", s.featureVersion},
      {"step_cap", int64_t(s.stepCap)},        {"state", std::move(state)},
      {"transforms", std::move(transforms)},   {"params", std::move(params)},
      {"effect_version", s.effectVersion},     {"effects", std::move(effects)},
      {"state_dim", int64_t(s.stateDim())},    {"plan_dim", int64_t(s.planDim())},
      {"effect_dim", int64_t(s.effectDim())},  {"exemplar_dim", int64_t(s.exemplarDim())}};
}

Expected<EncodingSchema> schemaFromJson(const json::Value &value) {
  auto fail = [](const Twine &what) {
    return createStringError(inconvertibleErrorCode(), "feature schema: " + what);
  };
  const json::Object *o = value.getAsObject();
  if (!o)
    return fail("not an object");
  EncodingSchema s;
  std::optional<int64_t> ev = o->getInteger("encoding_version"),
                         fv = o->getInteger("feature_version"), cap = o->getInteger("step_cap");
  if (!ev || !fv || !cap)
    return fail("'encoding_version', 'feature_version' and 'step_cap' must be integers");
  if (*cap < 1 || *cap > 64)
    return fail("'step_cap' " + Twine(*cap) + " is out of range 1..64");
  s.encodingVersion = int(*ev);
  s.featureVersion = int(*fv);
  s.stepCap = unsigned(*cap);
  const json::Array *state = o->getArray("state");
  const json::Array *transforms = o->getArray("transforms");
  const json::Array *params = o->getArray("params");
  if (!state || !transforms || !params)
    return fail("'state', 'transforms' and 'params' must be arrays");
  std::optional<int64_t> effectVersion = o->getInteger("effect_version");
  const json::Array *effects = o->getArray("effects");
  if (!effectVersion || !effects)
    return fail("'effect_version' must be an integer and 'effects' an array");
  s.effectVersion = int(*effectVersion);
  for (auto [array, what, names, means, stds] :
       {std::tuple{state, "state", &s.stateNames, &s.stateMean, &s.stateStd},
        std::tuple{effects, "effect", &s.effectNames, &s.effectMean, &s.effectStd}})
    for (const json::Value &v : *array) {
      const json::Object *e = v.getAsObject();
      std::optional<StringRef> name = e ? e->getString("name") : std::nullopt;
      std::optional<double> mean = e ? e->getNumber("mean") : std::nullopt;
      std::optional<double> sd = e ? e->getNumber("std") : std::nullopt;
      if (!name || !mean || !sd || !(*sd > 0))
        return fail(Twine(what) + " entry " + Twine(names->size()) +
                    " needs a 'name', a 'mean' and a positive 'std'");
      names->push_back(name->str());
      means->push_back(*mean);
      stds->push_back(*sd);
    }
  // Effects are looked up by bisection.
  if (!std::is_sorted(s.effectNames.begin(), s.effectNames.end()) ||
      std::adjacent_find(s.effectNames.begin(), s.effectNames.end()) != s.effectNames.end())
    return fail("'effects' must be sorted by name and distinct");
  for (auto [array, out] : {std::pair{transforms, &s.transforms}, std::pair{params, &s.params}}) {
    for (const json::Value &v : *array) {
      std::optional<StringRef> t = v.getAsString();
      if (!t)
        return fail("'transforms' and 'params' must hold strings");
      out->push_back(t->str());
    }
    // Lookups bisect: an unsorted vocabulary would silently mis-encode.
    if (!std::is_sorted(out->begin(), out->end()) ||
        std::adjacent_find(out->begin(), out->end()) != out->end())
      return fail("'transforms' and 'params' must be sorted and distinct");
  }
  // The dimensions are stored too so that a hand-edited schema that no
  // longer matches its weights is caught here, not as a shape error later.
  std::optional<int64_t> sd = o->getInteger("state_dim"), pd = o->getInteger("plan_dim"),
                         xd = o->getInteger("exemplar_dim"), ed = o->getInteger("effect_dim");
  if (!sd || !pd || !xd || !ed || *sd != s.stateDim() || *pd != s.planDim() ||
      *xd != s.exemplarDim() || *ed != s.effectDim())
    return fail("the stored dimensions do not match the entries (state " + Twine(s.stateDim()) +
                ", plan " + Twine(s.planDim()) + ", effect " + Twine(s.effectDim()) +
                ", exemplar " + Twine(s.exemplarDim()) + ")");
  return s;
}

} // namespace cudal1
