// The policy network in libtorch: a set-attention over the kernel's
// exemplars, queried by each candidate, and an MLP that scores the
// candidate (docs/Policy.md, "The network"). The only file that includes
// libtorch; every entry point catches c10::Error (and anything else) and
// returns it as a string.
#include "Network.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
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
};

class TorchNetwork : public Network {
public:
  TorchNetwork(const NetConfig &c, uint64_t seed) : config(c), net(nullptr) {
    // Inference and training are bit-identical across runs only on one
    // thread (and one thread is also the fastest on a small model).
    at::set_num_threads(1);
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
      torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(tc.learningRate));
      std::vector<size_t> order(trainSet.size());
      std::iota(order.begin(), order.end(), 0);
      std::vector<torch::Tensor> best;
      double bestLoss = 0;
      size_t bestPoint = 0;
      for (unsigned epoch = 1; epoch <= tc.epochs; ++epoch) {
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
          LossParts l = loss(g, context, targets, tc);
          if (!l.total.defined())
            continue;
          opt.zero_grad();
          l.total.backward();
          opt.step();
        }
        if (epoch % std::max(1u, tc.evalEvery) == 0 || epoch == tc.epochs) {
          net->eval();
          CurvePoint pt;
          pt.epoch = epoch;
          evaluate(trainSet, tc, pt.trainLoss, pt.trainPairAccuracy, pt.trainTop1);
          evaluate(validation, tc, pt.validationLoss, pt.validationPairAccuracy, pt.validationTop1);
          curve.push_back(pt);
          if (tc.selectOnValidation && !validation.empty() &&
              (best.empty() || pt.validationLoss < bestLoss)) {
            torch::NoGradGuard ng;
            best.clear();
            for (const torch::Tensor &p : net->parameters())
              best.push_back(p.detach().clone());
            bestLoss = pt.validationLoss;
            bestPoint = curve.size() - 1;
          }
        }
      }
      if (!best.empty()) {
        torch::NoGradGuard ng;
        std::vector<torch::Tensor> params = net->parameters();
        for (size_t i = 0; i < params.size(); ++i)
          params[i].copy_(best[i]);
        curve[bestPoint].selected = true;
      } else if (!curve.empty()) {
        curve.back().selected = true;
      }
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

  static torch::Tensor select(const std::vector<float> &data, unsigned dim,
                              const std::vector<unsigned> &idx) {
    std::vector<float> out;
    out.reserve(idx.size() * dim);
    for (unsigned i : idx)
      out.insert(out.end(), data.begin() + size_t(i) * dim, data.begin() + size_t(i + 1) * dim);
    return rows(out, int64_t(idx.size()), dim);
  }

  /// The four losses of stage (a) on one kernel's targets.
  LossParts loss(const TrainGroup &g, const std::vector<unsigned> &context,
                 const std::vector<unsigned> &targets, const TrainConfig &tc) {
    LossParts l;
    if (targets.empty())
      return l;
    torch::Tensor state =
        torch::from_blob(const_cast<float *>(g.state.data()), {int64_t(config.stateDim)}).clone();
    torch::Tensor out = net->forward(state, select(g.asExemplar, config.exemplarDim, context),
                                     select(g.plans, config.planDim, targets));
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
    l.total = total;
    return l;
  }

  void evaluate(const std::vector<TrainGroup> &groups, const TrainConfig &tc, double &lossOut,
                double &pairAccuracy, double &top1) {
    torch::NoGradGuard ng;
    double sum = 0;
    unsigned n = 0, pairs = 0, correct = 0, withBest = 0, hits = 0;
    for (const TrainGroup &g : groups) {
      std::vector<unsigned> all(g.numPlans);
      std::iota(all.begin(), all.end(), 0u);
      LossParts l = loss(g, {}, all, tc);
      if (!l.total.defined())
        continue;
      sum += l.total.item<double>();
      ++n;
      pairs += l.pairs;
      correct += l.correctPairs;
      withBest += l.hasBest;
      hits += l.top1;
    }
    lossOut = n ? sum / n : 0;
    pairAccuracy = pairs ? double(correct) / pairs : 0;
    top1 = withBest ? double(hits) / withBest : 0;
  }

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
