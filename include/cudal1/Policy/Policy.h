// The learned policy: scores candidate plans for a kernel from what is
// known of it (its KernelState), as a predicted log speedup, how unsure
// that prediction is and how likely the plan is to verify (docs/Policy.md).
// Its API speaks standard and cudal1 types only; libtorch stays behind it in
// lib/Policy/Torch (a shared library loaded on first use, so that tools
// that never score pay nothing for it).
#ifndef CUDAL1_POLICY_POLICY_H
#define CUDAL1_POLICY_POLICY_H

#include "cudal1/Policy/Encoding.h"
#include "cudal1/Rewrite/Plan.h"
#include "cudal1/Tune/KernelState.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cudal1 {

namespace policynet {
class Network;
}

/// The model format's major version: bumped when a model directory's
/// layout or the encoding breaks (a model of another major is refused).
/// 2: plans encoded by their effect too (encoding version 2).
constexpr int kPolicyModelMajor = 2;
/// |z| beyond which a state input counts as far outside the training range.
constexpr double kMaxStateZ = 10.0;

/// The prior's standard deviation of a plan's log speedup (a plan is
/// within 0.14x to 7.4x of the original at 95%): the spread of the log
/// speedups measured in bench/data is 1.07 (2,246 timed measurements).
constexpr double kPolicyPriorSd = 1.0;

struct PlanScore {
  /// The log of the speedup over the original: the network's prediction
  /// combined with the prior N(0, priorSd^2), each weighed by its
  /// precision. Where the network says it does not know (its variance far
  /// above the prior's: inputs unlike its training data), this stays near
  /// 0 instead of following the network's extrapolation.
  double logSpeedup = 0;
  double uncertainty = 0; ///< standard deviation of logSpeedup (posterior)
  double verifyProbability = 0;
  /// What the network itself predicted: mean and standard deviation.
  double networkLogSpeedup = 0, networkUncertainty = 0;
};

/// What a model directory says about itself besides its weights.
struct PolicyModelInfo {
  int major = kPolicyModelMajor, minor = 0;
  unsigned hidden = 64;
  uint64_t seed = 1;
  std::string trainedAt; ///< UTC
  std::string stages;    ///< e.g. "a"
  /// The longest plan in the training data: the network is not asked about
  /// longer compositions (it would extrapolate; the strategy composes them
  /// from measured plans instead).
  unsigned maxPlanSteps = kPolicyStepCap;
  std::string data; ///< the databases it was trained on, for people
  /// Whether the network reads exemplars: a model trained without them
  /// (cudal1-train --ablate exemplars) is given none.
  bool useExemplars = true;
  std::string ablations; ///< what it was trained without, for people ("exemplars,stage-c")
  /// The prior of PlanScore::logSpeedup (model.json "prior_sd"; absent:
  /// kPolicyPriorSd). 0: none, the network's prediction as it is.
  /// $CUDAL1_POLICY_PRIOR_SD overrides it, for experiments.
  double priorSd = kPolicyPriorSd;
};

class Policy {
public:
  /// An untrained network on `schema` (training starts here).
  static llvm::Expected<std::unique_ptr<Policy>> create(EncodingSchema schema, unsigned hidden,
                                                        uint64_t seed);
  /// A model directory: model.json (info, feature schema) and weights.pt.
  /// A missing directory or file, a corrupt file, another major version or
  /// encoding version is an error that names the directory and the reason.
  static llvm::Expected<std::unique_ptr<Policy>> load(const std::string &dir);
  /// Writes the directory (created if needed), each file atomically. An
  /// existing model is replaced only with `overwrite`.
  llvm::Error save(const std::string &dir, bool overwrite) const;

  /// One score per plan, in order. Refuses (an error, for the caller to
  /// fall back on) a state whose features are of another version or names
  /// than the schema's, or far outside the training range.
  llvm::Expected<std::vector<PlanScore>> score(const KernelState &state,
                                               const std::vector<Plan> &plans) const;
  /// The same with the plans' effects (Tune/Effect.h), parallel to `plans`
  /// (null: unknown); ignored by a model trained without effects.
  llvm::Expected<std::vector<PlanScore>>
  score(const KernelState &state, const std::vector<Plan> &plans,
        const std::vector<const EffectFeatures *> &effects) const;

  const EncodingSchema &schema() const { return encoding; }
  PolicyModelInfo &info() { return modelInfo; }
  const PolicyModelInfo &info() const { return modelInfo; }
  /// The network itself (lib/Policy/Torch/Network.h): for the trainer and tests.
  policynet::Network &network() const { return *net; }

  ~Policy();

private:
  Policy(EncodingSchema schema, PolicyModelInfo info, std::unique_ptr<policynet::Network> net);
  EncodingSchema encoding;
  PolicyModelInfo modelInfo;
  std::unique_ptr<policynet::Network> net;
};

/// Whether this build can run the network (libtorch was found).
bool policyBackendAvailable();

/// $CUDAL1_POLICY_MODEL, else the shipped model (models/policy in the source tree).
std::string defaultPolicyModelDir();

} // namespace cudal1

#endif
