// How the learned policy sees a kernel and a candidate plan: fixed-length
// float vectors built from a KernelState and plan steps (docs/Policy.md,
// "Encoding"). Pure C++: the network (lib/Policy/Torch) only ever sees the
// vectors. The schema says what each position means and holds the
// normalization fitted on the training split; it is stored with the model.
#ifndef CUDAL1_POLICY_ENCODING_H
#define CUDAL1_POLICY_ENCODING_H

#include "cudal1/Tune/KernelState.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <utility>
#include <vector>

namespace cudal1 {

/// Bumped whenever a position of an encoding changes meaning: a model of
/// another encoding version is refused (a major model version). Version 2:
/// a plan is encoded by its steps and by its effect (Tune/Effect.h).
constexpr int kEncodingVersion = 2;
/// The longest plan the policy encodes (it generates up to 3 steps; one
/// more slot holds longer exemplars' first steps, the rest is flagged).
constexpr unsigned kPolicyStepCap = 4;
/// The most exemplars one state carries: the most recent ones.
constexpr unsigned kMaxExemplars = 32;
/// Log speedups are clamped here (a 20x change is as informative as 100x).
constexpr double kMaxLogSpeedup = 3.0;

/// What each position of an encoding means.
struct EncodingSchema {
  int encodingVersion = kEncodingVersion;
  int featureVersion = 0; ///< the analysis features' version it was fitted on
  unsigned stepCap = kPolicyStepCap;
  /// State inputs by name ("kernel.loops", "gpu.sm_count", "time.original_us")
  /// with the mean and standard deviation of their signed log over the
  /// training split's kernels that have them.
  std::vector<std::string> stateNames;
  std::vector<double> stateMean, stateStd;
  /// Transform vocabulary (slot 0 of the one-hot is "unknown").
  std::vector<std::string> transforms;
  /// Parameter names, one value slot each.
  std::vector<std::string> params;
  /// The effect encoding (Tune/Effect.h): its version, 0 when plans are
  /// encoded by their steps alone (no effect slots: trained without
  /// effects), and the effect names with the mean and standard deviation of
  /// their signed log over the training plans whose effect is known.
  int effectVersion = 0;
  std::vector<std::string> effectNames;
  std::vector<double> effectMean, effectStd;

  unsigned stateDim() const { return unsigned(stateNames.size()); }
  /// present, position, transform one-hot (unknown + vocabulary), scope
  /// kind one-hot (6), site id, parameter slots.
  unsigned stepDim() const {
    return 2 + 1 + unsigned(transforms.size()) + 6 + 1 + unsigned(params.size());
  }
  /// "The effect is known", then one slot per effect name; none without effects.
  unsigned effectDim() const { return effectNames.empty() ? 0 : 1 + unsigned(effectNames.size()); }
  /// The steps padded to stepCap, the step count, a "longer than the cap"
  /// flag, and the effect.
  unsigned planDim() const { return stepCap * stepDim() + 2 + effectDim(); }
  /// A plan plus: clamped log speedup, timed, ok, wrong, failed, this run.
  unsigned exemplarDim() const { return planDim() + 6; }

  bool operator==(const EncodingSchema &o) const;
};

/// The state's raw inputs by name, before normalization: the kernel's
/// analysis features, the GPU's descriptor, the original's time and floor;
/// unknown ones (zero figures, no original time) are left out.
std::vector<std::pair<std::string, double>> rawStateInputs(const KernelState &state);

/// sign(x) * log1p(|x|): counts and byte sizes over many orders of magnitude.
double signedLog(double x);

/// Fits a schema on training data: the state names (sorted union), their
/// normalization, the transforms and parameter names seen in `plans`, and,
/// where `effects` (parallel to `plans`, null: unknown) or the states'
/// exemplars know effects, the effect names and their normalization at
/// `effectVersion`. Without any effect the schema has no effect slots.
EncodingSchema fitSchema(const std::vector<const KernelState *> &states,
                         const std::vector<std::vector<PlanStep>> &plans, int featureVersion,
                         const std::vector<const EffectFeatures *> &effects = {},
                         int effectVersion = 0);

/// The normalized state, schema.stateDim() floats; a missing input is the
/// training mean (0). `worst` receives the largest |z| and its name (the
/// policy refuses states far outside the training range).
std::vector<float> encodeState(const EncodingSchema &schema, const KernelState &state,
                               std::pair<std::string, double> *worst = nullptr);
/// schema.planDim() floats; `effect` null: the effect is unknown (its slots
/// 0, the training mean, and the "known" slot 0).
std::vector<float> encodePlan(const EncodingSchema &schema, const std::vector<PlanStep> &steps,
                              const EffectFeatures *effect = nullptr);
/// schema.exemplarDim() floats (the exemplar's effect where it has one).
std::vector<float> encodeExemplar(const EncodingSchema &schema, const Exemplar &exemplar);

/// A kernel and its candidates, row-major: what the network scores.
struct EncodedInput {
  std::vector<float> state;
  std::vector<float> exemplars; ///< numExemplars x exemplarDim
  std::vector<float> plans;     ///< numPlans x planDim
  unsigned numExemplars = 0, numPlans = 0;
};
/// The last kMaxExemplars exemplars (recording order) and every plan;
/// `effects`, when given, parallel to `plans` (null: unknown).
EncodedInput encodeInput(const EncodingSchema &schema, const KernelState &state,
                         const std::vector<std::vector<PlanStep>> &plans,
                         const std::vector<const EffectFeatures *> *effects = nullptr);

llvm::json::Value schemaToJson(const EncodingSchema &schema);
/// Errors name the field that is missing or wrong.
llvm::Expected<EncodingSchema> schemaFromJson(const llvm::json::Value &value);

} // namespace cudal1

#endif
