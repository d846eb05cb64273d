// The policy's model directory and scoring (docs/Policy.md).
#include "cudal1/Policy/Policy.h"

#include "Backend.h"

#include "cudal1/Support/AtomicFile.h"
#include "cudal1/Tune/Effect.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

using namespace llvm;

namespace cudal1 {
namespace {

constexpr const char *kModelFile = "model.json";
constexpr const char *kWeightsFile = "weights.pt";

Error modelError(const std::string &dir, const Twine &what) {
  return createStringError(inconvertibleErrorCode(), "policy model '" + dir + "': " + what);
}

policynet::NetConfig netConfig(const EncodingSchema &s, unsigned hidden) {
  policynet::NetConfig c;
  c.stateDim = s.stateDim();
  c.planDim = s.planDim();
  c.exemplarDim = s.exemplarDim();
  c.hidden = hidden;
  return c;
}

std::string joinPath(const std::string &dir, const char *file) {
  SmallString<256> p(dir);
  sys::path::append(p, file);
  return std::string(p);
}

} // namespace

Policy::Policy(EncodingSchema schema, PolicyModelInfo info, std::unique_ptr<policynet::Network> n)
    : encoding(std::move(schema)), modelInfo(std::move(info)), net(std::move(n)) {}
Policy::~Policy() = default;

Expected<std::unique_ptr<Policy>> Policy::create(EncodingSchema schema, unsigned hidden,
                                                 uint64_t seed) {
  Expected<std::unique_ptr<policynet::Network>> n =
      createPolicyNetwork(netConfig(schema, hidden), seed);
  if (!n)
    return n.takeError();
  PolicyModelInfo info;
  info.hidden = hidden;
  info.seed = seed;
  return std::unique_ptr<Policy>(new Policy(std::move(schema), info, std::move(*n)));
}

Expected<std::unique_ptr<Policy>> Policy::load(const std::string &dir) {
  // 1. model.json: what it is, its version, its schema.
  if (!sys::fs::is_directory(dir))
    return modelError(dir, "no such directory");
  std::string modelPath = joinPath(dir, kModelFile);
  ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(modelPath);
  if (!buf)
    return modelError(dir, Twine(kModelFile) + ": " + buf.getError().message());
  Expected<json::Value> value = json::parse((*buf)->getBuffer());
  if (!value)
    return modelError(dir, Twine(kModelFile) + ": not JSON (" + toString(value.takeError()) + ")");
  const json::Object *o = value->getAsObject();
  if (!o || o->getString("format") != std::optional<StringRef>("cudal1-policy"))
    return modelError(dir, Twine(kModelFile) + ": not a cudal1 policy model");
  PolicyModelInfo info;
  std::optional<int64_t> major = o->getInteger("major"), minor = o->getInteger("minor"),
                         hidden = o->getInteger("hidden");
  if (!major || !minor || !hidden || *hidden < 1 || *hidden > 4096)
    return modelError(dir, Twine(kModelFile) + ": needs integer 'major', 'minor' and 'hidden'");
  if (*major != kPolicyModelMajor)
    return modelError(dir, "model version " + Twine(*major) + "." + Twine(*minor) +
                               ", this cudal1 reads version " + Twine(kPolicyModelMajor) +
                               ".x (retrain with this cudal1-train)");
  info.major = int(*major);
  info.minor = int(*minor);
  info.hidden = unsigned(*hidden);
  if (std::optional<int64_t> seed = o->getInteger("seed"))
    info.seed = uint64_t(*seed);
  if (std::optional<int64_t> steps = o->getInteger("max_plan_steps"))
    info.maxPlanSteps = unsigned(std::clamp<int64_t>(*steps, 1, kPolicyStepCap));
  for (auto [key, out] :
       {std::pair{"trained_at", &info.trainedAt}, std::pair{"stages", &info.stages},
        std::pair{"data", &info.data}, std::pair{"ablations", &info.ablations}})
    if (std::optional<StringRef> s = o->getString(key))
      *out = s->str();
  if (std::optional<bool> ex = o->getBoolean("exemplars"))
    info.useExemplars = *ex;
  if (std::optional<double> prior = o->getNumber("prior_sd"); prior && *prior >= 0)
    info.priorSd = *prior;
  if (const char *env = std::getenv("CUDAL1_POLICY_PRIOR_SD"); env && *env)
    info.priorSd = std::max(0.0, std::strtod(env, nullptr));
  const json::Value *schemaValue = o->get("schema");
  if (!schemaValue)
    return modelError(dir, Twine(kModelFile) + ": no 'schema'");
  Expected<EncodingSchema> schema = schemaFromJson(*schemaValue);
  if (!schema)
    return modelError(dir, toString(schema.takeError()));
  if (schema->encodingVersion != kEncodingVersion)
    return modelError(dir, "schema mismatch: encoding version " + Twine(schema->encodingVersion) +
                               ", this cudal1 encodes version " + Twine(kEncodingVersion));
  if (schema->effectVersion != 0 && schema->effectVersion != kEffectVersion)
    return modelError(dir, "schema mismatch: effect version " + Twine(schema->effectVersion) +
                               ", this cudal1 computes version " + Twine(kEffectVersion));
  // 2. The weights, into a network of the schema's shape.
  std::string weights = joinPath(dir, kWeightsFile);
  if (!sys::fs::exists(weights))
    return modelError(dir, Twine(kWeightsFile) + ": no such file");
  Expected<std::unique_ptr<policynet::Network>> net =
      createPolicyNetwork(netConfig(*schema, info.hidden), info.seed);
  if (!net)
    return modelError(dir, toString(net.takeError()));
  std::string err = (*net)->load(weights);
  if (!err.empty())
    return modelError(dir, Twine(kWeightsFile) + " does not fit the schema or is corrupt: " + err);
  return std::unique_ptr<Policy>(new Policy(std::move(*schema), info, std::move(*net)));
}

Error Policy::save(const std::string &dir, bool overwrite) const {
  std::string modelPath = joinPath(dir, kModelFile);
  if (!overwrite && sys::fs::exists(modelPath))
    return modelError(dir, "a model is already there (use --force to replace it)");
  if (std::error_code ec = sys::fs::create_directories(dir))
    return modelError(dir, "cannot create the directory: " + ec.message());
  // The weights first, through a temporary name: a reader sees the old
  // model or the new one's weights beside the old model.json, which the
  // shape check refuses, never half a file.
  std::string weights = joinPath(dir, kWeightsFile), tmp = weights + ".tmp";
  std::string err = net->save(tmp);
  if (!err.empty())
    return modelError(dir, err);
  if (std::error_code ec = sys::fs::rename(tmp, weights))
    return modelError(dir, Twine(kWeightsFile) + ": " + ec.message());
  json::Object o{
      {"format", "cudal1-policy"},        {"major", modelInfo.major},
      {"minor", modelInfo.minor},         {"hidden", int64_t(modelInfo.hidden)},
      {"seed", int64_t(modelInfo.seed)},  {"trained_at", modelInfo.trainedAt},
      {"stages", modelInfo.stages},       {"max_plan_steps", int64_t(modelInfo.maxPlanSteps)},
      {"data", modelInfo.data},           {"exemplars", modelInfo.useExemplars},
      {"ablations", modelInfo.ablations}, {"prior_sd", modelInfo.priorSd},
      {"schema", schemaToJson(encoding)}};
  std::string text;
  raw_string_ostream os(text);
  os << formatv("{0:2}", json::Value(std::move(o))) << "\n";
  os.flush();
  if (Error e = writeFileAtomically(modelPath, text))
    return e;
  return Error::success();
}

Expected<std::vector<PlanScore>> Policy::score(const KernelState &state,
                                               const std::vector<Plan> &plans) const {
  return score(state, plans, {});
}

Expected<std::vector<PlanScore>>
Policy::score(const KernelState &state, const std::vector<Plan> &plans,
              const std::vector<const EffectFeatures *> &effects) const {
  auto refuse = [&](const Twine &why) {
    return createStringError(inconvertibleErrorCode(),
                             "policy: kernel '" + state.name + "': " + why);
  };
  // 1. The state must be one the model was trained to read.
  if (!state.features.empty() && state.featureVersion != encoding.featureVersion)
    return refuse("features of version " + Twine(state.featureVersion) +
                  ", the model was trained on version " + Twine(encoding.featureVersion));
  std::set<std::string> known(encoding.stateNames.begin(), encoding.stateNames.end());
  for (const auto &f : state.features)
    if (!known.count("kernel." + f.first))
      return refuse("feature '" + f.first + "' is not in the model's schema");
  std::pair<std::string, double> worst;
  encodeState(encoding, state, &worst);
  if (std::fabs(worst.second) > kMaxStateZ)
    return refuse("'" + worst.first + "' is " + formatv("{0:F1}", worst.second) +
                  " standard deviations from the training data");
  // 2. The network's scores.
  std::vector<std::vector<PlanStep>> steps;
  for (const Plan &p : plans)
    steps.push_back(p.steps);
  EncodedInput in = encodeInput(encoding, state, steps, &effects);
  if (!modelInfo.useExemplars) {
    in.exemplars.clear();
    in.numExemplars = 0;
  }
  policynet::Batch b{std::move(in.state), std::move(in.exemplars), in.numExemplars,
                     std::move(in.plans), in.numPlans};
  policynet::Scores s;
  std::string err = net->score(b, s);
  if (!err.empty())
    return refuse(err);
  std::vector<PlanScore> out(plans.size());
  double prior = modelInfo.priorSd * modelInfo.priorSd;
  for (size_t i = 0; i < plans.size(); ++i) {
    PlanScore &o = out[i];
    o.networkLogSpeedup = s.mean[i];
    double var = std::exp(double(s.logVar[i]));
    o.networkUncertainty = std::sqrt(var);
    // Precision-weighted: the posterior of a normal prior and the network's
    // prediction read as a normal observation with its own variance.
    o.logSpeedup = prior > 0 ? o.networkLogSpeedup * prior / (prior + var) : o.networkLogSpeedup;
    o.uncertainty = prior > 0 ? std::sqrt(prior * var / (prior + var)) : o.networkUncertainty;
    o.verifyProbability = 1 / (1 + std::exp(-double(s.verifyLogit[i])));
  }
  return out;
}

std::string defaultPolicyModelDir() {
  if (const char *env = std::getenv("CUDAL1_POLICY_MODEL"); env && *env)
    return env;
  return CUDAL1_DEFAULT_POLICY_MODEL;
}

} // namespace cudal1
