// The policy network in libtorch: a set-attention over the kernel's
// exemplars, queried by each candidate, and an MLP that scores the
// candidate (docs/Policy.md, "The network"). The only file that includes
// libtorch; every entry point catches c10::Error (and anything else) and
// returns it as a string.
#include "Network.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <dlfcn.h>
#include <numeric>
#include <random>

namespace cudal1::policynet {
namespace {

namespace nn = torch::nn;

struct PolicyNetImpl : nn::Module {
  PolicyNetImpl(const NetConfig &c)
      : h(int64_t(c.hidden)), s1(c.stateDim, c.hidden), s2(c.hidden, c.hidden),
        p1(c.planDim, c.hidden), p2(c.hidden, c.hidden), e1(c.exemplarDim, c.hidden),
        e2(c.hidden, c.hidden), q(2 * c.hidden, c.hidden), k(c.hidden, c.hidden),
        v(c.hidden, c.hidden), o1(3 * c.hidden, c.hidden), o2(c.hidden, 3) {
    register_module("s1", s1);
    register_module("s2", s2);
    register_module("p1", p1);
    register_module("p2", p2);
    register_module("e1", e1);
    register_module("e2", e2);
    register_module("q", q);
    register_module("k", k);
    register_module("v", v);
    register_module("o1", o1);
    register_module("o2", o2);
    // The token every candidate may attend to when nothing (relevant) was
    // measured yet: attention over an empty set is then well defined.
    empty = register_parameter("empty", torch::zeros({1, h}));
  }

  /// state [S], exemplars [E, X] (E may be 0), plans [P, D] → [P, 3].
  torch::Tensor forward(const torch::Tensor &state, const torch::Tensor &exemplars,
                        const torch::Tensor &plans) {
    int64_t p = plans.size(0);
    torch::Tensor hs = torch::relu(s2(torch::relu(s1(state)))).unsqueeze(0).expand({p, h});
    torch::Tensor hp = torch::relu(p2(torch::relu(p1(plans))));
    torch::Tensor tokens = empty;
    if (exemplars.size(0) > 0)
      tokens = torch::cat({empty, torch::relu(e2(torch::relu(e1(exemplars))))}, 0);
    torch::Tensor query = q(torch::cat({hs, hp}, 1));
    torch::Tensor att =
        torch::softmax(torch::matmul(query, k(tokens).t()) / std::sqrt(double(h)), 1);
    torch::Tensor context = torch::matmul(att, v(tokens));
    return o2(torch::relu(o1(torch::cat({hs, hp, context}, 1))));
  }

  int64_t h;
  nn::Linear s1, s2, p1, p2, e1, e2, q, k, v, o1, o2;
  torch::Tensor empty;
};
TORCH_MODULE(PolicyNet);

std::string shapeText(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

torch::Tensor rows(const std::vector<float> &data, int64_t n, int64_t dim) {
  if (n == 0)
    return torch::zeros({0, dim});
  return torch::from_blob(const_cast<float *>(data.data()), {n, dim}, torch::kFloat32).clone();
}

/// The log variance is kept in a range where the likelihood stays finite.
torch::Tensor clampLogVar(const torch::Tensor &lv) { return torch::clamp(lv, -8.0, 4.0); }

struct LossParts {
  torch::Tensor total;
  unsigned pairs = 0, correctPairs = 0;
  bool hasBest = false, top1 = false;
  unsigned verifyPlans = 0, verifyRight = 0; ///< stage (b): plans of known outcome, right ones
};

/// OpenBLAS to one thread, when it is the BLAS. Looked up through this
/// library's own handle: dlsym searches a handle's dependencies, where
/// RTLD_DEFAULT misses libraries loaded with RTLD_LOCAL (the policy's
/// backend is dlopened so).
void singleThreadedBlas() {
  Dl_info self;
  if (!::dladdr(reinterpret_cast<void *>(&singleThreadedBlas), &self) || !self.dli_fname)
    return;
  void *handle = ::dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (!handle)
    return;
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(::dlsym(handle, "openblas_set_num_threads")))
    set(1);
  ::dlclose(handle); // NOLOAD took a reference
}

class TorchNetwork : public Network {
public:
  TorchNetwork(const NetConfig &c, uint64_t seed) : config(c), net(nullptr) {
    // Inference and training are bit-identical across runs only on one
    // thread (and one thread is also the fastest on a small model).
    at::set_num_threads(1);
    // OpenBLAS has its own thread pool, which at::set_num_threads leaves
    // alone. Its fork handler stops that pool: a fork on another thread (the
    // tuner's capture build runs in the background) while a product runs
    // here left the product waiting forever for its workers. One thread
    // never hands work to the pool.
    singleThreadedBlas();
    torch::manual_seed(seed);
    net = PolicyNet(c);
    net->eval();
  }

  std::string score(const Batch &b, Scores &out) override {
    return guard([&] {
      c10::InferenceMode mode;
      torch::Tensor r = net->forward(torch::from_blob(const_cast<float *>(b.state.data()),
                                                      {int64_t(config.stateDim)})
                                         .clone(),
                                     rows(b.exemplars, b.numExemplars, config.exemplarDim),
                                     rows(b.plans, b.numPlans, config.planDim))
                            .contiguous();
      out.mean.resize(b.numPlans);
      out.logVar.resize(b.numPlans);
      out.verifyLogit.resize(b.numPlans);
      torch::Tensor lv = clampLogVar(r.select(1, 1));
      auto acc = r.accessor<float, 2>();
      auto lva = lv.accessor<float, 1>();
      for (unsigned i = 0; i < b.numPlans; ++i) {
        out.mean[i] = acc[i][0];
        out.logVar[i] = lva[i];
        out.verifyLogit[i] = acc[i][2];
      }
    });
  }

  std::string save(const std::string &path) override {
    return guard([&] { torch::save(net, path); });
  }
  std::string load(const std::string &path) override {
    std::string mismatch;
    std::string err = guard([&] {
      // torch::load replaces parameters whatever their shape: compare them
      // with the shapes this schema needs, or a schema edited apart from
      // its weights would run with the weights' shapes.
      std::vector<std::pair<std::string, std::vector<int64_t>>> want;
      for (const auto &p : net->named_parameters())
        want.emplace_back(p.key(), p.value().sizes().vec());
      torch::load(net, path);
      size_t i = 0;
      for (const auto &p : net->named_parameters()) {
        if (i < want.size() && p.value().sizes().vec() != want[i].second && mismatch.empty())
          mismatch = "parameter " + p.key() + " has shape " + shapeText(p.value().sizes().vec()) +
                     ", the schema needs " + shapeText(want[i].second);
        ++i;
      }
      net->eval();
    });
    return err.empty() ? mismatch : err;
  }

  std::vector<float> parameters() override {
    std::vector<float> all;
    for (const torch::Tensor &p : net->parameters()) {
      torch::Tensor c = p.detach().contiguous().view({-1});
      all.insert(all.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    return all;
  }

  std::string train(const std::vector<TrainGroup> &trainSet,
                    const std::vector<TrainGroup> &validation, const TrainConfig &tc,
                    std::vector<CurvePoint> &curve) override {
    return guard([&] {
      torch::manual_seed(tc.seed);
      std::mt19937_64 rng(tc.seed);
      if (tc.epochs > 0)
        supervised(trainSet, validation, tc, curve, rng, "a", tc.epochs, tc.learningRate);
      if (tc.verifyEpochs > 0)
        supervised(trainSet, validation, tc, curve, rng, "b", tc.verifyEpochs, tc.learningRate);
      if (tc.rlEpochs > 0)
        reinforce(trainSet, validation, tc, curve, rng);
      net->eval();
    });
  }

private:
  template <typename F> std::string guard(F &&f) {
    try {
      f();
      return "";
    } catch (const c10::Error &e) {
      return std::string("libtorch: ") + e.what_without_backtrace();
    } catch (const std::exception &e) {
      return std::string("libtorch: ") + e.what();
    }
  }

  std::vector<torch::Tensor> snapshot() {
    torch::NoGradGuard ng;
    std::vector<torch::Tensor> out;
    for (const torch::Tensor &p : net->parameters())
      out.push_back(p.detach().clone());
    return out;
  }
  void restore(const std::vector<torch::Tensor> &saved) {
    torch::NoGradGuard ng;
    std::vector<torch::Tensor> params = net->parameters();
    for (size_t i = 0; i < params.size(); ++i)
      params[i].copy_(saved[i]);
  }

  /// Stages (a) and (b): epochs over the kernels in a seeded order, one
  /// kernel per step; the curve point of lowest validation loss is kept.
  void supervised(const std::vector<TrainGroup> &trainSet,
                  const std::vector<TrainGroup> &validation, const TrainConfig &tc,
                  std::vector<CurvePoint> &curve, std::mt19937_64 &rng, const std::string &stage,
                  unsigned epochs, double lr) {
    torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(lr));
    std::vector<size_t> order(trainSet.size());
    std::iota(order.begin(), order.end(), 0);
    if (stage == "b")
      balance = classWeights(trainSet);
    std::vector<torch::Tensor> best;
    double bestLoss = 0;
    size_t bestPoint = 0, first = curve.size();
    for (unsigned epoch = 1; epoch <= epochs; ++epoch) {
      net->train();
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t gi : order) {
        const TrainGroup &g = trainSet[gi];
        if (g.numPlans == 0)
          continue;
        // 1. A random part of the kernel's measurements is the context.
        std::vector<unsigned> perm(g.numPlans);
        std::iota(perm.begin(), perm.end(), 0u);
        std::shuffle(perm.begin(), perm.end(), rng);
        unsigned most = unsigned(std::floor(tc.contextFraction * g.numPlans));
        unsigned ctx = g.numPlans >= 2 && most > 0 ? unsigned(rng() % (most + 1)) : 0;
        std::vector<unsigned> context(perm.begin(), perm.begin() + ctx);
        std::vector<unsigned> targets(perm.begin() + ctx, perm.end());
        Dropout drop = dropout(g, tc, rng, unsigned(context.size()), unsigned(targets.size()));
        LossParts l = stage == "b" ? verifyLoss(g, context, targets, tc, &drop)
                                   : loss(g, context, targets, tc, &drop);
        if (!l.total.defined())
          continue;
        opt.zero_grad();
        l.total.backward();
        opt.step();
      }
      if (epoch % std::max(1u, tc.evalEvery) == 0 || epoch == epochs) {
        net->eval();
        CurvePoint pt;
        pt.stage = stage;
        pt.epoch = epoch;
        evaluate(trainSet, tc, stage, pt.trainLoss, pt.trainPairAccuracy, pt.trainTop1,
                 pt.trainVerifyAccuracy);
        evaluate(validation, tc, stage, pt.validationLoss, pt.validationPairAccuracy,
                 pt.validationTop1, pt.validationVerifyAccuracy, &pt.validationPairs,
                 &pt.validationKernels);
        curve.push_back(pt);
        if (tc.selectOnValidation && !validation.empty() &&
            (best.empty() || pt.validationLoss < bestLoss)) {
          best = snapshot();
          bestLoss = pt.validationLoss;
          bestPoint = curve.size() - 1;
        }
        if (tc.checkpoint)
          tc.checkpoint(stage, epoch);
      }
    }
    if (!best.empty()) {
      restore(best);
      curve[bestPoint].selected = true;
    } else if (curve.size() > first) {
      curve.back().selected = true;
    }
    net->eval();
  }

  /// Rows of a group: its plans or exemplars, each with or without its
  /// effect (effect dropout).
  struct Dropout {
    std::vector<uint8_t> context, targets; ///< 1: without the effect
    std::vector<uint8_t> prior;            ///< the unmeasured plans' rows
  };
  Dropout dropout(const TrainGroup &g, const TrainConfig &tc, std::mt19937_64 &rng, unsigned nc,
                  unsigned nt) {
    Dropout d;
    d.context.assign(nc, 0);
    d.targets.assign(nt, 0);
    if (g.plansBare.empty() || tc.effectDropout <= 0)
      return d;
    auto coin = [&] { return double(rng() >> 11) * 0x1.0p-53 < tc.effectDropout; };
    for (auto &x : d.context)
      x = coin();
    for (auto &x : d.targets)
      x = coin();
    // Drawn only where the unmeasured plans are used, so that a run
    // without them draws what it drew before.
    if (usesPrior(g, tc) && !g.priorPlansBare.empty()) {
      d.prior.assign(g.numPrior, 0);
      for (auto &x : d.prior)
        x = coin();
    }
    return d;
  }

  static bool usesPrior(const TrainGroup &g, const TrainConfig &tc) {
    return tc.heuristicWeight > 0 && tc.priorShare > 0 && g.numPrior > 0 &&
           g.priorHeuristic.size() == g.numPrior && g.heuristic.size() == g.numPlans;
  }

  static torch::Tensor select(const std::vector<float> &data, const std::vector<float> &bare,
                              unsigned dim, const std::vector<unsigned> &idx,
                              const std::vector<uint8_t> *useBare = nullptr) {
    std::vector<float> out;
    out.reserve(idx.size() * dim);
    for (size_t r = 0; r < idx.size(); ++r) {
      const std::vector<float> &src =
          useBare && r < useBare->size() && (*useBare)[r] && !bare.empty() ? bare : data;
      unsigned i = idx[r];
      out.insert(out.end(), src.begin() + size_t(i) * dim, src.begin() + size_t(i + 1) * dim);
    }
    return rows(out, int64_t(idx.size()), dim);
  }

  torch::Tensor stateOf(const TrainGroup &g) {
    return torch::from_blob(const_cast<float *>(g.state.data()), {int64_t(config.stateDim)})
        .clone();
  }

  torch::Tensor forwardGroup(const TrainGroup &g, const std::vector<unsigned> &context,
                             const std::vector<unsigned> &targets, const Dropout *drop) {
    return net->forward(
        stateOf(g),
        select(g.asExemplar, g.asExemplarBare, config.exemplarDim, context,
               drop ? &drop->context : nullptr),
        select(g.plans, g.plansBare, config.planDim, targets, drop ? &drop->targets : nullptr));
  }

  /// The four losses of stage (a) on one kernel's targets.
  LossParts loss(const TrainGroup &g, const std::vector<unsigned> &context,
                 const std::vector<unsigned> &targets, const TrainConfig &tc,
                 const Dropout *drop = nullptr) {
    LossParts l;
    if (targets.empty())
      return l;
    torch::Tensor prior;
    torch::Tensor out = forwardWithPrior(g, context, targets, tc, drop, prior);
    l = lossOf(out, g, targets, tc);
    if (prior.defined())
      l.total = l.total + priorLoss(out, prior, g, targets, tc);
    return l;
  }

  /// The targets' scores; with the unmeasured plans in use, theirs too
  /// (`prior`), from the same forward pass (a candidate's score depends on
  /// the state and the context only, not on the other candidates).
  torch::Tensor forwardWithPrior(const TrainGroup &g, const std::vector<unsigned> &context,
                                 const std::vector<unsigned> &targets, const TrainConfig &tc,
                                 const Dropout *drop, torch::Tensor &prior) {
    if (!usesPrior(g, tc))
      return forwardGroup(g, context, targets, drop);
    std::vector<unsigned> all(g.numPrior);
    std::iota(all.begin(), all.end(), 0u);
    torch::Tensor planRows = torch::cat(
        {select(g.plans, g.plansBare, config.planDim, targets, drop ? &drop->targets : nullptr),
         select(g.priorPlans, g.priorPlansBare, config.planDim, all,
                drop && !drop->prior.empty() ? &drop->prior : nullptr)},
        0);
    torch::Tensor out = net->forward(stateOf(g),
                                     select(g.asExemplar, g.asExemplarBare, config.exemplarDim,
                                            context, drop ? &drop->context : nullptr),
                                     planRows);
    int64_t nt = int64_t(targets.size());
    prior = out.narrow(0, nt, int64_t(g.numPrior));
    return out.narrow(0, 0, nt);
  }

  /// The heuristic's order on the unmeasured plans: among them, and
  /// against the measured targets that are not timed or not faster than
  /// the original; every target timed faster than the original (beyond its
  /// noise) ranks above every unmeasured plan. Pairs of measured plans are
  /// not here: a measurement is never overridden.
  torch::Tensor priorLoss(const torch::Tensor &out, const torch::Tensor &prior, const TrainGroup &g,
                          const std::vector<unsigned> &targets, const TrainConfig &tc) {
    torch::Tensor mp = prior.select(1, 0), mt = out.select(1, 0);
    torch::Tensor m = torch::cat({mt, mp}, 0); // targets, then the unmeasured plans
    int64_t nt = int64_t(targets.size());
    // Two means: the heuristic's pairs, and those of a measured-faster
    // plan over an unmeasured one (few beside the former, and a
    // measurement: not diluted by them).
    std::vector<int64_t> hi, lo, fhi, flo;
    for (unsigned a = 0; a < g.numPrior; ++a)
      for (unsigned b = 0; b < g.numPrior; ++b)
        if (g.priorHeuristic[a] > g.priorHeuristic[b]) {
          hi.push_back(nt + a);
          lo.push_back(nt + b);
        }
    for (size_t r = 0; r < targets.size(); ++r) {
      unsigned i = targets[r];
      bool faster = g.timed[i] && g.logSpeedup[i] > std::max(g.noise[i], 1e-3f);
      for (unsigned a = 0; a < g.numPrior; ++a) {
        if (faster) {
          fhi.push_back(int64_t(r));
          flo.push_back(nt + a);
        } else if (g.heuristic[i] > g.priorHeuristic[a]) {
          hi.push_back(int64_t(r));
          lo.push_back(nt + a);
        } else if (g.priorHeuristic[a] > g.heuristic[i]) {
          hi.push_back(nt + a);
          lo.push_back(int64_t(r));
        }
      }
    }
    torch::Tensor total = torch::zeros({});
    for (auto [h, l] : {std::pair{&hi, &lo}, std::pair{&fhi, &flo}})
      if (!h->empty()) {
        torch::Tensor d = m.index_select(0, torch::tensor(*h, torch::kInt64)) -
                          m.index_select(0, torch::tensor(*l, torch::kInt64));
        total = total + torch::softplus(-d).mean();
      }
    return tc.heuristicWeight * tc.priorShare * total;
  }

  LossParts lossOf(const torch::Tensor &out, const TrainGroup &g,
                   const std::vector<unsigned> &targets, const TrainConfig &tc) {
    LossParts l;
    torch::Tensor mean = out.select(1, 0), logVar = clampLogVar(out.select(1, 1)),
                  logit = out.select(1, 2);
    std::vector<float> verified, y;
    std::vector<int64_t> timedRows;
    for (size_t r = 0; r < targets.size(); ++r) {
      unsigned i = targets[r];
      verified.push_back(g.verified[i] ? 1.0f : 0.0f);
      if (g.timed[i]) {
        timedRows.push_back(int64_t(r));
        y.push_back(g.logSpeedup[i]);
      }
    }
    // Verification: every target, timed or not.
    torch::Tensor total =
        tc.verifyWeight * torch::binary_cross_entropy_with_logits(
                              logit, rows(verified, int64_t(verified.size()), 1).view({-1}));
    if (!timedRows.empty()) {
      torch::Tensor idx = torch::tensor(timedRows, torch::kInt64);
      torch::Tensor m = mean.index_select(0, idx), lv = logVar.index_select(0, idx);
      torch::Tensor yt = rows(y, int64_t(y.size()), 1).view({-1});
      // Regression with a learned variance: the uncertainty the policy reports.
      total = total + tc.regressionWeight * (0.5 * (lv + (yt - m).pow(2) * torch::exp(-lv))).mean();
      // 2. Pairwise ranking on non-tied pairs (a tie: within the noise).
      std::vector<int64_t> hi, lo;
      torch::Tensor md = m.detach().contiguous();
      std::vector<float> mv(md.data_ptr<float>(), md.data_ptr<float>() + md.numel());
      for (size_t a = 0; a < y.size(); ++a)
        for (size_t b = 0; b < y.size(); ++b) {
          unsigned ia = targets[size_t(timedRows[a])], ib = targets[size_t(timedRows[b])];
          double tie = std::max({g.noise[ia], g.noise[ib], 1e-3f});
          if (y[a] - y[b] > tie) {
            hi.push_back(int64_t(a));
            lo.push_back(int64_t(b));
            ++l.pairs;
            l.correctPairs += mv[a] > mv[b];
          }
        }
      if (!hi.empty()) {
        torch::Tensor d = m.index_select(0, torch::tensor(hi, torch::kInt64)) -
                          m.index_select(0, torch::tensor(lo, torch::kInt64));
        total = total + tc.rankWeight * torch::softplus(-d).mean();
      }
      // 3. Imitation of the best plan, where it is best beyond the noise.
      size_t best = size_t(std::max_element(y.begin(), y.end()) - y.begin());
      bool clear = y.size() >= 2;
      for (size_t b = 0; b < y.size() && clear; ++b) {
        unsigned ib = targets[size_t(timedRows[b])], ibest = targets[size_t(timedRows[best])];
        if (b != best && y[best] - y[b] <= std::max({g.noise[ib], g.noise[ibest], 1e-3f}))
          clear = false;
      }
      if (clear) {
        l.hasBest = true;
        l.top1 = size_t(std::max_element(mv.begin(), mv.end()) - mv.begin()) == best;
        total = total - tc.imitationWeight * torch::log_softmax(m, 0)[int64_t(best)];
      }
    }
    // 4. Imitation of the heuristic's order, a prior where nothing was
    // measured: target pairs the heuristic orders strictly, unless both are
    // timed (then the measurements decide, a measured tie included).
    if (tc.heuristicWeight > 0 && g.heuristic.size() == g.numPlans) {
      std::vector<int64_t> hi, lo;
      for (size_t a = 0; a < targets.size(); ++a)
        for (size_t b = 0; b < targets.size(); ++b) {
          unsigned ia = targets[a], ib = targets[b];
          if (g.timed[ia] && g.timed[ib])
            continue;
          if (g.heuristic[ia] > g.heuristic[ib]) {
            hi.push_back(int64_t(a));
            lo.push_back(int64_t(b));
          }
        }
      if (!hi.empty()) {
        torch::Tensor d = mean.index_select(0, torch::tensor(hi, torch::kInt64)) -
                          mean.index_select(0, torch::tensor(lo, torch::kInt64));
        total = total + tc.heuristicWeight * torch::softplus(-d).mean();
      }
    }
    l.total = total;
    return l;
  }

  /// Class weights of stage (b): verified and not verified count alike.
  std::pair<double, double> classWeights(const std::vector<TrainGroup> &groups) {
    double pos = 0, neg = 0;
    for (const TrainGroup &g : groups)
      for (unsigned i = 0; i < g.numPlans; ++i)
        if (i < g.outcomeKnown.size() && g.outcomeKnown[i])
          (g.verified[i] ? pos : neg) += 1;
    double n = pos + neg;
    if (pos == 0 || neg == 0)
      return {1, 1};
    return {std::min(10.0, n / (2 * pos)), std::min(10.0, n / (2 * neg))};
  }

  /// Stage (b) on one kernel: the class-balanced verification loss on the
  /// targets of known outcome, plus stage (a)'s losses at the anchor weight
  /// (what was learned of speedups is kept). Counts of right predictions
  /// go to `pairs`/`correctPairs` (reused: plans, right ones).
  LossParts verifyLoss(const TrainGroup &g, const std::vector<unsigned> &context,
                       const std::vector<unsigned> &targets, const TrainConfig &tc,
                       const Dropout *drop = nullptr) {
    LossParts l;
    if (targets.empty())
      return l;
    torch::Tensor prior;
    torch::Tensor out = forwardWithPrior(g, context, targets, tc, drop, prior);
    LossParts a = lossOf(out, g, targets, tc);
    if (prior.defined())
      a.total = a.total + priorLoss(out, prior, g, targets, tc);
    std::vector<int64_t> known;
    std::vector<float> label, weight;
    for (size_t r = 0; r < targets.size(); ++r) {
      unsigned i = targets[r];
      if (i < g.outcomeKnown.size() && g.outcomeKnown[i]) {
        known.push_back(int64_t(r));
        label.push_back(g.verified[i] ? 1.0f : 0.0f);
        weight.push_back(float(g.verified[i] ? balance.first : balance.second));
      }
    }
    torch::Tensor total = tc.verifyAnchor * a.total;
    if (!known.empty()) {
      torch::Tensor logit = out.select(1, 2).index_select(0, torch::tensor(known, torch::kInt64));
      torch::Tensor yt = rows(label, int64_t(label.size()), 1).view({-1});
      torch::Tensor wt = rows(weight, int64_t(weight.size()), 1).view({-1});
      total = total + torch::binary_cross_entropy_with_logits(logit, yt, wt);
      torch::Tensor ld = logit.detach().contiguous();
      for (size_t j = 0; j < known.size(); ++j) {
        ++l.verifyPlans;
        l.verifyRight += (ld.data_ptr<float>()[j] > 0) == (label[j] > 0.5f);
      }
    }
    l.pairs = a.pairs;
    l.correctPairs = a.correctPairs;
    l.hasBest = a.hasBest;
    l.top1 = a.top1;
    l.total = total;
    return l;
  }

  /// The losses reported (and selected on) leave the heuristic's prior out:
  /// configurations that differ in its weight stay comparable.
  void evaluate(const std::vector<TrainGroup> &groups, const TrainConfig &config,
                const std::string &stage, double &lossOut, double &pairAccuracy, double &top1,
                double &verifyAccuracy, unsigned *pairsOut = nullptr,
                unsigned *kernelsOut = nullptr) {
    torch::NoGradGuard ng;
    TrainConfig tc = config;
    tc.heuristicWeight = 0;
    double sum = 0;
    unsigned n = 0, pairs = 0, correct = 0, withBest = 0, hits = 0, vp = 0, vr = 0;
    for (const TrainGroup &g : groups) {
      std::vector<unsigned> all(g.numPlans);
      std::iota(all.begin(), all.end(), 0u);
      LossParts l = stage == "b" ? verifyLoss(g, {}, all, tc) : loss(g, {}, all, tc);
      if (!l.total.defined())
        continue;
      if (stage != "b") { // the verification counts of stage (a)'s points too
        LossParts v = verifyLoss(g, {}, all, tc);
        l.verifyPlans = v.verifyPlans;
        l.verifyRight = v.verifyRight;
      }
      sum += l.total.item<double>();
      ++n;
      pairs += l.pairs;
      correct += l.correctPairs;
      withBest += l.hasBest;
      hits += l.top1;
      vp += l.verifyPlans;
      vr += l.verifyRight;
    }
    lossOut = n ? sum / n : 0;
    if (pairsOut)
      *pairsOut = pairs;
    if (kernelsOut)
      *kernelsOut = n;
    pairAccuracy = pairs ? double(correct) / pairs : 0;
    top1 = withBest ? double(hits) / withBest : 0;
    verifyAccuracy = vp ? double(vr) / vp : 0;
  }

  // ---------------------------------------------------------------- stage (c)

  /// The policy's log-probabilities over candidates: a softmax of the
  /// strategy's utility (expected log speedup of a plan that verifies plus
  /// the log of verifying, policyUtility without exploration) over the
  /// temperature.
  static torch::Tensor logPolicy(const torch::Tensor &out, double temperature) {
    torch::Tensor mean = out.select(1, 0), logit = out.select(1, 2);
    // The probability of verifying is what stages (a)/(b) learned from every
    // outcome, held fixed here: rewards move the expected speedup only (a
    // penalty pushes a plan down by its mean, bounded), so that one bad draw
    // cannot drive a plan's probability to nothing, never to be drawn again.
    torch::Tensor lv = logit.detach();
    torch::Tensor u = torch::sigmoid(lv) * mean - torch::softplus(-lv);
    return torch::log_softmax(u / std::max(1e-3, temperature), 0);
  }

  /// The kernel's candidates for episodes: plans whose reward is known.
  static std::vector<unsigned> rewarded(const TrainGroup &g) {
    std::vector<unsigned> out;
    for (unsigned i = 0; i < g.numPlans; ++i)
      if (i < g.reward.size() && !std::isnan(g.reward[i]))
        out.push_back(i);
    return out;
  }

  /// An earlier result of the episode as an exemplar of "this run".
  void pushExemplar(const TrainGroup &g, unsigned i, std::vector<float> &ex, unsigned &n) {
    size_t d = config.exemplarDim;
    ex.insert(ex.end(), g.asExemplar.begin() + i * d, g.asExemplar.begin() + (i + 1) * d);
    ex.back() = 1; // the this-run flag
    ++n;
  }

  torch::Tensor forwardEpisode(PolicyNet &model, const TrainGroup &g, const std::vector<float> &ex,
                               unsigned numEx, const std::vector<unsigned> &remaining) {
    return model->forward(stateOf(g), rows(ex, numEx, config.exemplarDim),
                          select(g.plans, {}, config.planDim, remaining));
  }

  struct Turn {
    std::vector<size_t> picks;  ///< positions in `remaining`
    std::vector<float> weights; ///< importance weights (1 on-policy)
  };

  /// One GRPO step on a turn: advantages relative to the group's mean
  /// reward (over its deviation), the KL to the reference over the
  /// turn's candidates.
  double turnStep(const TrainGroup &g, const std::vector<unsigned> &remaining,
                  const torch::Tensor &out, const torch::Tensor &logp, const torch::Tensor &logpRef,
                  const Turn &t, const TrainConfig &tc, torch::optim::Adam &opt, bool anchor) {
    std::vector<double> r;
    for (size_t p : t.picks)
      r.push_back(g.reward[remaining[p]]);
    double mean = std::accumulate(r.begin(), r.end(), 0.0) / double(r.size()), var = 0;
    for (double x : r)
      var += (x - mean) * (x - mean);
    double sd = std::sqrt(var / double(r.size()));
    torch::Tensor kl = (torch::exp(logp) * (logp - logpRef)).sum();
    torch::Tensor total = tc.klWeight * kl;
    if (r.size() >= 2 && sd > 1e-6) {
      // Over the group's deviation, but not below the noise of a
      // measurement: plans a few percent apart are nearly a tie.
      std::vector<float> adv;
      std::vector<int64_t> idx;
      for (size_t j = 0; j < r.size(); ++j) {
        adv.push_back(float((r[j] - mean) / std::max(sd, tc.advantageFloor)) * t.weights[j]);
        idx.push_back(int64_t(t.picks[j]));
      }
      torch::Tensor a = rows(adv, int64_t(adv.size()), 1).view({-1});
      total = total - (a * logp.index_select(0, torch::tensor(idx, torch::kInt64))).mean();
    }
    // What the turn measured: its plans' speedups (timed) and outcomes teach
    // the value heads, so that the expected speedup in the utility stays
    // one (rewards alone would only scale it).
    if (tc.rlValueWeight > 0) {
      std::vector<int64_t> timedRows, knownRows;
      std::vector<float> y, verified;
      for (size_t p : t.picks) {
        unsigned i = remaining[p];
        if (g.timed[i]) {
          timedRows.push_back(int64_t(p));
          y.push_back(g.logSpeedup[i]);
        }
        if (i < g.outcomeKnown.size() && g.outcomeKnown[i]) {
          knownRows.push_back(int64_t(p));
          verified.push_back(g.verified[i] ? 1.0f : 0.0f);
        }
      }
      if (!timedRows.empty()) {
        torch::Tensor idx = torch::tensor(timedRows, torch::kInt64);
        torch::Tensor m = out.select(1, 0).index_select(0, idx);
        torch::Tensor lv = clampLogVar(out.select(1, 1)).index_select(0, idx);
        torch::Tensor yt = rows(y, int64_t(y.size()), 1).view({-1});
        total = total + tc.rlValueWeight * (0.5 * (lv + (yt - m).pow(2) * torch::exp(-lv))).mean();
      }
      if (!knownRows.empty()) {
        torch::Tensor logit =
            out.select(1, 2).index_select(0, torch::tensor(knownRows, torch::kInt64));
        total = total + tc.rlValueWeight *
                            torch::binary_cross_entropy_with_logits(
                                logit, rows(verified, int64_t(verified.size()), 1).view({-1}));
      }
    }
    if (anchor && tc.rlAnchor > 0) {
      std::vector<unsigned> all(g.numPlans);
      std::iota(all.begin(), all.end(), 0u);
      LossParts l = loss(g, {}, all, tc);
      if (l.total.defined())
        total = total + tc.rlAnchor * l.total;
    }
    opt.zero_grad();
    total.backward();
    torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
    opt.step();
    return kl.item<double>();
  }

  /// Draws `n` of the candidates without replacement from exp(logp).
  static std::vector<size_t> draw(const torch::Tensor &logp, size_t n, std::mt19937_64 &rng) {
    torch::Tensor pd = torch::exp(logp.detach()).contiguous();
    std::vector<double> w(pd.data_ptr<float>(), pd.data_ptr<float>() + pd.numel());
    std::vector<size_t> out;
    for (size_t k = 0; k < n && k < w.size(); ++k) {
      double sum = 0;
      for (double x : w)
        sum += x;
      double u = double(rng() >> 11) * 0x1.0p-53 * sum, acc = 0;
      size_t pick = w.size();
      for (size_t i = 0; i < w.size(); ++i) {
        if (w[i] <= 0)
          continue;
        pick = i;
        acc += w[i];
        if (u < acc)
          break;
      }
      if (pick == w.size())
        break;
      out.push_back(pick);
      w[pick] = 0;
    }
    return out;
  }

  /// Stage (c): sampled episodes on every training kernel (and the recorded
  /// ones of other strategies, importance-weighted); the curve point of
  /// highest validation return is kept.
  void reinforce(const std::vector<TrainGroup> &trainSet, const std::vector<TrainGroup> &validation,
                 const TrainConfig &tc, std::vector<CurvePoint> &curve, std::mt19937_64 &rng) {
    // The reference: the policy of stages (a)/(b), frozen.
    PolicyNet ref(config);
    {
      torch::NoGradGuard ng;
      std::vector<torch::Tensor> src = net->parameters(), dst = ref->parameters();
      for (size_t i = 0; i < src.size(); ++i)
        dst[i].copy_(src[i]);
    }
    ref->eval();
    torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(tc.rlLearningRate));
    std::vector<size_t> order(trainSet.size());
    std::iota(order.begin(), order.end(), 0);
    std::vector<torch::Tensor> best;
    double bestReturn = 0;
    size_t bestPoint = 0, first = curve.size();
    // Epoch 0: the policy stage (c) starts from, kept unless an epoch does
    // better on validation (ties keep the earlier).
    auto point = [&](unsigned epoch, double klMean) {
      net->eval();
      CurvePoint pt;
      pt.stage = "c";
      pt.epoch = epoch;
      pt.kl = klMean;
      episodes(trainSet, tc, pt.trainReturn, pt.trainFound);
      pt.validationEpisodes = episodes(validation, tc, pt.validationReturn, pt.validationFound);
      double unused;
      evaluate(trainSet, tc, "a", pt.trainLoss, pt.trainPairAccuracy, pt.trainTop1, unused);
      evaluate(validation, tc, "a", pt.validationLoss, pt.validationPairAccuracy, pt.validationTop1,
               unused, &pt.validationPairs, &pt.validationKernels);
      curve.push_back(pt);
      if (tc.selectOnValidation && !validation.empty() &&
          (best.empty() || pt.validationReturn > bestReturn + 1e-9)) {
        best = snapshot();
        bestReturn = pt.validationReturn;
        bestPoint = curve.size() - 1;
      }
    };
    point(0, 0);
    for (unsigned epoch = 1; epoch <= tc.rlEpochs; ++epoch) {
      net->train();
      std::shuffle(order.begin(), order.end(), rng);
      double klSum = 0;
      unsigned turns = 0;
      for (size_t gi : order) {
        const TrainGroup &g = trainSet[gi];
        std::vector<unsigned> cands = rewarded(g);
        if (cands.size() < 2)
          continue;
        // 1. An episode of the policy's own choices among the measured plans.
        {
          std::vector<unsigned> remaining = cands;
          std::vector<float> ex;
          unsigned numEx = 0;
          size_t budget = std::min<size_t>(std::max(1u, tc.budget), cands.size()), spent = 0;
          while (spent < budget && !remaining.empty()) {
            size_t n = std::min<size_t>({std::max(1u, tc.group), budget - spent, remaining.size()});
            torch::Tensor out = forwardEpisode(net, g, ex, numEx, remaining);
            torch::Tensor logp = logPolicy(out, tc.temperature);
            torch::Tensor logpRef;
            {
              torch::NoGradGuard ng;
              logpRef = logPolicy(forwardEpisode(ref, g, ex, numEx, remaining), tc.temperature);
            }
            Turn t;
            t.picks = draw(logp, n, rng);
            t.weights.assign(t.picks.size(), 1.0f);
            klSum += turnStep(g, remaining, out, logp, logpRef, t, tc, opt, spent == 0);
            ++turns;
            spent += t.picks.size();
            advance(g, remaining, t.picks, ex, numEx, tc.useExemplars);
          }
        }
        // 2. The recorded episodes of other strategies: their turns as
        // proposed, weighted by how likely this policy is to propose them.
        if (!tc.replay)
          continue;
        for (const std::vector<unsigned> &episode : g.episodes) {
          std::vector<unsigned> played;
          for (unsigned i : episode)
            if (i < g.reward.size() && !std::isnan(g.reward[i]))
              played.push_back(i);
          if (played.size() < 2)
            continue;
          std::vector<unsigned> remaining = cands;
          std::vector<float> ex;
          unsigned numEx = 0;
          for (size_t at = 0; at < played.size();) {
            size_t n = std::min<size_t>(std::max(1u, tc.group), played.size() - at);
            Turn t;
            for (size_t j = at; j < at + n; ++j) {
              auto pos = std::find(remaining.begin(), remaining.end(), played[j]);
              if (pos != remaining.end())
                t.picks.push_back(size_t(pos - remaining.begin()));
            }
            at += n;
            if (t.picks.size() < 2)
              break;
            torch::Tensor out = forwardEpisode(net, g, ex, numEx, remaining);
            torch::Tensor logp = logPolicy(out, tc.temperature);
            torch::Tensor logpRef;
            {
              torch::NoGradGuard ng;
              logpRef = logPolicy(forwardEpisode(ref, g, ex, numEx, remaining), tc.temperature);
            }
            // Importance weights: pi / mu, self-normalized in the turn, truncated.
            torch::Tensor pd = torch::exp(logp.detach()).contiguous();
            std::vector<double> rho;
            for (size_t p : t.picks) {
              double mu = g.behaviour.size() > remaining[p] ? g.behaviour[remaining[p]] : 0;
              rho.push_back(double(pd.data_ptr<float>()[p]) / (mu > 0 ? mu : 1.0));
            }
            double mean = std::accumulate(rho.begin(), rho.end(), 0.0) / double(rho.size());
            for (double x : rho)
              t.weights.push_back(float(mean > 0 ? std::min(tc.truncate, x / mean) : 1.0));
            klSum += turnStep(g, remaining, out, logp, logpRef, t, tc, opt, false);
            ++turns;
            advance(g, remaining, t.picks, ex, numEx, tc.useExemplars);
          }
        }
      }
      if (epoch % std::max(1u, tc.evalEvery) == 0 || epoch == tc.rlEpochs) {
        point(epoch, turns ? klSum / turns : 0);
        if (tc.checkpoint)
          tc.checkpoint("c", epoch);
      }
    }
    if (!best.empty()) {
      restore(best);
      curve[bestPoint].selected = true;
    } else if (curve.size() > first) {
      curve.back().selected = true;
    }
    net->eval();
  }

  /// The picked plans leave the candidates and, with their results, join
  /// the exemplars.
  void advance(const TrainGroup &g, std::vector<unsigned> &remaining,
               const std::vector<size_t> &picks, std::vector<float> &ex, unsigned &numEx,
               bool useExemplars) {
    std::vector<unsigned> taken;
    for (size_t p : picks)
      taken.push_back(remaining[p]);
    for (unsigned i : taken) {
      if (useExemplars)
        pushExemplar(g, i, ex, numEx);
      remaining.erase(std::find(remaining.begin(), remaining.end(), i));
    }
  }

  /// Greedy episodes (the top G by utility each turn): the mean best reward
  /// found within the budget and the share of kernels whose best plan was
  /// found.
  unsigned episodes(const std::vector<TrainGroup> &groups, const TrainConfig &tc,
                    double &meanReturn, double &found) {
    torch::NoGradGuard ng;
    double sum = 0;
    unsigned n = 0, hits = 0;
    for (const TrainGroup &g : groups) {
      std::vector<unsigned> cands = rewarded(g);
      if (cands.size() < 2)
        continue;
      double oracle = -INFINITY, got = -INFINITY;
      for (unsigned i : cands)
        oracle = std::max(oracle, double(g.reward[i]));
      std::vector<unsigned> remaining = cands;
      std::vector<float> ex;
      unsigned numEx = 0;
      size_t budget = std::min<size_t>(std::max(1u, tc.budget), cands.size()), spent = 0;
      while (spent < budget && !remaining.empty()) {
        size_t k = std::min<size_t>({std::max(1u, tc.group), budget - spent, remaining.size()});
        torch::Tensor logp =
            logPolicy(forwardEpisode(net, g, ex, numEx, remaining), tc.temperature).contiguous();
        std::vector<size_t> idx(remaining.size());
        std::iota(idx.begin(), idx.end(), 0);
        const float *lp = logp.data_ptr<float>();
        std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return lp[a] > lp[b]; });
        idx.resize(k);
        for (size_t p : idx)
          got = std::max(got, double(g.reward[remaining[p]]));
        spent += k;
        advance(g, remaining, idx, ex, numEx, tc.useExemplars);
      }
      sum += got;
      ++n;
      hits += got >= oracle - 1e-6;
    }
    meanReturn = n ? sum / n : 0;
    found = n ? double(hits) / n : 0;
    return n;
  }

  std::pair<double, double> balance{1, 1};
  NetConfig config;
  PolicyNet net;
};

} // namespace
} // namespace cudal1::policynet

extern "C" cudal1::policynet::Network *
cudal1PolicyCreateNetwork(const cudal1::policynet::NetConfig *config, uint64_t seed,
                          std::string *error) {
  try {
    if (!config->stateDim || !config->planDim || !config->exemplarDim || !config->hidden) {
      *error = "network dimensions must be positive";
      return nullptr;
    }
    return new cudal1::policynet::TorchNetwork(*config, seed);
  } catch (const c10::Error &e) {
    *error = std::string("libtorch: ") + e.what_without_backtrace();
  } catch (const std::exception &e) {
    *error = std::string("libtorch: ") + e.what();
  }
  return nullptr;
}
