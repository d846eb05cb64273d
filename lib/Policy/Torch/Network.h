// The policy network's interface, standard types only: the one header that
// both the libtorch side (TorchNetwork.cpp, in libCudaL1PolicyTorch.so) and
// the LLVM side (lib/Policy) include. Errors are strings, empty for
// success: no exception and no LLVM type crosses this line.
#ifndef CUDAL1_POLICY_TORCH_NETWORK_H
#define CUDAL1_POLICY_TORCH_NETWORK_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cudal1::policynet {

struct NetConfig {
  unsigned stateDim = 0, planDim = 0, exemplarDim = 0;
  unsigned hidden = 64;
};

/// One kernel: its state, its exemplars and its candidates, row-major.
struct Batch {
  std::vector<float> state;
  std::vector<float> exemplars;
  unsigned numExemplars = 0;
  std::vector<float> plans;
  unsigned numPlans = 0;
};

/// Per plan: predicted log speedup, log variance, logit of verifying.
struct Scores {
  std::vector<float> mean, logVar, verifyLogit;
};

/// One kernel's measured plans for training. The exemplar pool is every
/// measurement of the kernel; each epoch a seeded random part of it is the
/// context and the rest the targets, so that the network learns to use
/// exemplars without seeing a target's own result.
struct TrainGroup {
  std::vector<float> state;
  std::vector<float> plans;      ///< numPlans x planDim
  std::vector<float> asExemplar; ///< numPlans x exemplarDim: the same plans with results
  unsigned numPlans = 0;
  std::vector<float> logSpeedup; ///< 0 where not timed
  std::vector<uint8_t> timed, verified;
  std::vector<float> noise; ///< half-width of the log interval: ties within it are ignored
  /// The same plans with their effects left out (effect dropout: the
  /// network must also score a plan whose effect is not computed); empty
  /// when no plan of the group has an effect.
  std::vector<float> plansBare, asExemplarBare;
  /// Whether the outcome is known (verified, wrong, failed): stage (b).
  std::vector<uint8_t> outcomeKnown;
  /// Stage (c)'s reward: the log of the speedup's lower bound for a timed
  /// verified plan, -penalty for a wrong or failed one; NaN where unknown
  /// (verified but not timed, not run).
  std::vector<float> reward;
  /// The probability with which the strategy that proposed the plan chose
  /// it (the database's proposal_probability; 1 for the heuristic), 0
  /// where not recorded.
  std::vector<float> behaviour;
  /// The recorded sessions' proposals for this kernel, each in proposal
  /// order (indices into the plans): the episodes other strategies played.
  std::vector<std::vector<unsigned>> episodes;
  /// The heuristic's preference per plan (higher: tried earlier; the
  /// heuristic's rank, compositions after singles), for the imitation of
  /// its order; empty: none.
  std::vector<float> heuristic;
  /// Legal plans of the kernel that nobody measured (cudal1-train
  /// --unmeasured): rows as `plans` (with their effects where known; the
  /// bare rows without, empty when none has one) and the heuristic's
  /// preference for each. They are targets of the heuristic's imitation
  /// alone: never context, never in the other losses, ranked below every
  /// plan measured faster than the original.
  std::vector<float> priorPlans, priorPlansBare, priorHeuristic;
  unsigned numPrior = 0;
};

struct TrainConfig {
  unsigned epochs = 200;
  double learningRate = 3e-3;
  uint64_t seed = 1;
  double rankWeight = 1, imitationWeight = 0.5, regressionWeight = 0.5, verifyWeight = 0.5;
  /// Imitation of the heuristic's order: a pairwise logistic loss on the
  /// target pairs the heuristic orders strictly and that are not both timed
  /// (a prior where nothing was measured; measured pairs, ties included,
  /// are left to the ranking loss). 0: none. Never part of the loss that
  /// curve points report (configurations stay comparable).
  double heuristicWeight = 0;
  /// The unmeasured plans' term (TrainGroup::priorPlans) at this share of
  /// heuristicWeight; 0: they are not used.
  double priorShare = 1;
  double contextFraction = 0.5; ///< at most this share of a group is context
  unsigned evalEvery = 10;      ///< curve points every N epochs
  /// Keep the parameters of the curve point with the lowest validation
  /// loss (early stopping chosen on validation, never on test).
  bool selectOnValidation = true;
  /// The share of targets and exemplars given without their effect.
  double effectDropout = 0.3;

  /// Stage (b), correctness: epochs of verification (class-balanced binary
  /// cross-entropy on every plan of known outcome, wrong and failed ones
  /// and fault campaigns included), the stage (a) losses kept at `anchor`.
  unsigned verifyEpochs = 0;
  double verifyAnchor = 0.25;

  /// Stage (c), contrastive RL offline: per kernel an episode of `budget`
  /// plans in turns of `group`, the environment answering from the
  /// measured plans; the policy sees its episode's earlier results as
  /// exemplars. Rewards: log of the lower bound of the speedup, -penalty for
  /// wrong or failed plans; GRPO advantages within a turn, a KL term to the
  /// policy at the start of stage (c) (that of stages (a)/(b)), and
  /// recorded episodes of other strategies weighted by importance (the
  /// policy's probability over the recorded proposal probability,
  /// self-normalized within the turn and truncated at `truncate`).
  unsigned rlEpochs = 0;
  unsigned budget = 8, group = 4;
  double temperature = 0.5; ///< of the policy's softmax over utilities
  double klWeight = 0.05;
  double truncate = 2.0;
  double rlLearningRate = 1e-3;
  /// Stage (a)'s losses on the episode's kernel at this weight, once per
  /// episode: the predicted speedups stay speedups (the strategy reads
  /// them), not only scores that rank.
  double rlAnchor = 0.5;
  /// The value heads (expected speedup and its variance, verification)
  /// learn from each turn's own measurements at this weight.
  double rlValueWeight = 0.5;
  /// The least deviation GRPO divides advantages by (log units).
  double advantageFloor = 0.05;
  /// Recorded episodes are played too (off-policy, importance-weighted).
  bool replay = true;
  /// Earlier results of the episode are given as exemplars (false: the
  /// "without exemplars" ablation).
  bool useExemplars = true;
  /// Called at each curve point with the stage and epoch (checkpoints).
  std::function<void(const std::string &, unsigned)> checkpoint;
};

struct CurvePoint {
  unsigned epoch = 0;
  double trainLoss = 0, validationLoss = 0;
  double trainPairAccuracy = 0, validationPairAccuracy = 0;
  double trainTop1 = 0, validationTop1 = 0; ///< share of kernels whose top plan is the best
  /// The non-tied pairs validation's pair accuracy counts, and the kernels
  /// its loss and stage (c)'s return average over (pooling across folds).
  unsigned validationPairs = 0, validationKernels = 0, validationEpisodes = 0;
  bool selected = false;   ///< the parameters kept at the end
  std::string stage = "a"; ///< "a", "b" or "c"
  /// Stage (b): the share of plans of known outcome whose verification is
  /// predicted right (probability on the right side of 1/2).
  double trainVerifyAccuracy = 0, validationVerifyAccuracy = 0;
  /// Stage (c), greedy episodes: the mean best reward found within the
  /// budget, the share of kernels whose best plan was found, and the mean
  /// KL to the reference policy over the turns.
  double trainReturn = 0, validationReturn = 0;
  double trainFound = 0, validationFound = 0;
  double kl = 0;
};

class Network {
public:
  virtual ~Network() = default;
  virtual std::string score(const Batch &batch, Scores &out) = 0;
  virtual std::string save(const std::string &path) = 0;
  virtual std::string load(const std::string &path) = 0;
  /// Stage (a): ranking + imitation + regression + verification, then
  /// stages (b) and (c) where the config gives them epochs.
  virtual std::string train(const std::vector<TrainGroup> &train,
                            const std::vector<TrainGroup> &validation, const TrainConfig &config,
                            std::vector<CurvePoint> &curve) = 0;
  /// Every parameter, in registration order (round-trip tests).
  virtual std::vector<float> parameters() = 0;
};

/// The factory libCudaL1PolicyTorch.so exports (C linkage, so that dlsym
/// finds it by this name); null with `error` set on failure.
using CreateNetworkFn = Network *(*)(const NetConfig *config, uint64_t seed, std::string *error);
inline constexpr const char *kCreateNetworkSymbol = "cudal1PolicyCreateNetwork";

} // namespace cudal1::policynet

#endif
