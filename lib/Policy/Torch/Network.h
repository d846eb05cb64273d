// The policy network's interface, standard types only: the one header that
// both the libtorch side (TorchNetwork.cpp, in libCudaL1PolicyTorch.so) and
// the LLVM side (lib/Policy) include. Errors are strings, empty for
// success: no exception and no LLVM type crosses this line.
#ifndef CUDAL1_POLICY_TORCH_NETWORK_H
#define CUDAL1_POLICY_TORCH_NETWORK_H

#include <cstdint>
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
};

struct TrainConfig {
  unsigned epochs = 200;
  double learningRate = 3e-3;
  uint64_t seed = 1;
  double rankWeight = 1, imitationWeight = 0.5, regressionWeight = 0.5, verifyWeight = 0.5;
  double contextFraction = 0.5; ///< at most this share of a group is context
  unsigned evalEvery = 10;      ///< curve points every N epochs
  /// Keep the parameters of the curve point with the lowest validation
  /// loss (early stopping chosen on validation, never on test).
  bool selectOnValidation = true;
};

struct CurvePoint {
  unsigned epoch = 0;
  double trainLoss = 0, validationLoss = 0;
  double trainPairAccuracy = 0, validationPairAccuracy = 0;
  double trainTop1 = 0, validationTop1 = 0; ///< share of kernels whose top plan is the best
  bool selected = false;                    ///< the parameters kept at the end
};

class Network {
public:
  virtual ~Network() = default;
  virtual std::string score(const Batch &batch, Scores &out) = 0;
  virtual std::string save(const std::string &path) = 0;
  virtual std::string load(const std::string &path) = 0;
  /// Stage (a): ranking + imitation + regression + verification.
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
