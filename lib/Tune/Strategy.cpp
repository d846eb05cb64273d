// The random and heuristic search strategies.
#include "cudal1/Tune/Strategy.h"
#include "cudal1/Tune/PolicyStrategy.h"

#include <algorithm>
#include <set>

namespace cudal1 {

SearchStrategy::~SearchStrategy() = default;

namespace {

std::string paramOf(const PlanStep &s, const char *name) {
  for (const auto &p : s.params)
    if (p.first == name)
      return p.second;
  return "";
}

/// Two steps of the same transform at the same scope conflict (unrolling a
/// loop twice, two block shapes); the driver would refuse the plan anyway.
bool compatible(const std::vector<PlanStep> &plan, const PlanStep &s) {
  for (const PlanStep &p : plan)
    if (p.transform == s.transform && p.scope == s.scope)
      return false;
  return true;
}

bool compatible(const std::vector<PlanStep> &plan, const std::vector<PlanStep> &move) {
  for (const PlanStep &s : move)
    if (!compatible(plan, s))
      return false;
  return true;
}

/// What the heuristic ranks: a legal step alone, or a composed step with
/// its prerequisites (drop-sync before fuse), in the listing's order.
struct Move {
  std::vector<PlanStep> steps;
  int rank = 0;
};

/// A move's fuse chain length (count=N of its last step; 0 for anything
/// else, plain fuse included): among moves of one rank the longest chain
/// comes first, after its drop-syncs.
unsigned chainOf(const Move &m) {
  if (m.steps.empty() || m.steps.back().transform != "fuse")
    return 0;
  unsigned n = 0;
  return llvm::StringRef(paramOf(m.steps.back(), "count")).getAsInteger(10, n) ? 0 : n;
}

class RandomStrategy : public SearchStrategy {
public:
  explicit RandomStrategy(uint64_t seed) : rng(seed) {}
  const char *name() const override { return "random"; }
  std::vector<Proposal> propose(const KernelState &k, unsigned count) override {
    std::vector<Proposal> out;
    std::set<std::string> seen = k.tried;
    // Fast-math steps are opt-in: never proposed by default. A composed
    // step is one move: its prerequisites, then it.
    std::vector<std::vector<PlanStep>> pool;
    for (const PlanStep &s : k.steps)
      if (!isFastMath(s))
        pool.push_back({s});
    for (const ComposedStep &c : k.composed)
      if (!isFastMath(c.step))
        pool.push_back(c.steps());
    if (pool.empty())
      return out;
    for (unsigned attempt = 0; out.size() < count && attempt < count * 20; ++attempt) {
      unsigned len = 1 + unsigned(rng() % 3);
      Proposal p;
      for (unsigned i = 0, moves = 0; i < len * 4 && moves < len; ++i) {
        const std::vector<PlanStep> &m = pool[rng() % pool.size()];
        if (compatible(p.steps, m)) {
          p.steps.insert(p.steps.end(), m.begin(), m.end());
          ++moves;
        }
      }
      if (seen.insert(p.text()).second)
        out.push_back(p);
    }
    return out;
  }

private:
  std::mt19937_64 rng;
};

class HeuristicStrategy : public SearchStrategy {
public:
  const char *name() const override { return "heuristic"; }
  std::vector<Proposal> propose(const KernelState &k, unsigned count) override {
    std::vector<Move> ranked;
    for (const PlanStep &s : k.steps)
      if (!isFastMath(s) && heuristicRank(s) < kNever)
        ranked.push_back({{s}, heuristicRank(s)});
    for (const ComposedStep &c : k.composed)
      if (!isFastMath(c.step) && heuristicRank(c) < kNever)
        ranked.push_back({c.steps(), heuristicRank(c)});
    std::stable_sort(ranked.begin(), ranked.end(), [](const Move &a, const Move &b) {
      return a.rank != b.rank ? a.rank < b.rank : chainOf(a) > chainOf(b);
    });
    std::vector<Proposal> out;
    std::set<std::string> seen = k.tried;
    auto add = [&](Proposal p) {
      if (out.size() < count && !p.steps.empty() && seen.insert(p.text()).second)
        out.push_back(std::move(p));
    };
    auto joined = [](std::vector<PlanStep> a, const std::vector<PlanStep> &b) {
      a.insert(a.end(), b.begin(), b.end());
      return Proposal{std::move(a)};
    };
    // 1. Extend the best correct plan measured in this run by one more move.
    const Exemplar *best = nullptr;
    for (const Exemplar &r : k.exemplars)
      if (r.thisRun && r.measured.outcome == Outcome::Ok && r.measured.timed && r.measured.faster &&
          (!best || r.measured.speedup > best->measured.speedup))
        best = &r;
    if (best && best->steps.size() < 4)
      for (const Move &m : ranked)
        if (compatible(best->steps, m.steps))
          add(joined(best->steps, m.steps));
    // 2. Single moves in rank order.
    for (const Move &m : ranked)
      add(Proposal{m.steps});
    // 3. With the singles spent and nothing measured yet to extend (the
    // split path proposes a whole budget in one round), pairs of the
    // highest-ranked compatible moves, best rank sum first.
    std::vector<std::pair<size_t, size_t>> pairs;
    for (size_t i = 0; i < ranked.size(); ++i)
      for (size_t j = i + 1; j < ranked.size(); ++j)
        pairs.emplace_back(i, j);
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](auto x, auto y) { return x.first + x.second < y.first + y.second; });
    for (auto [i, j] : pairs)
      if (compatible(ranked[i].steps, ranked[j].steps))
        add(joined(ranked[i].steps, ranked[j].steps));
    return out;
  }

private:
  static constexpr int kNever = 1000;
};

} // namespace

int heuristicRank(const PlanStep &s) {
  const std::string &t = s.transform;
  // What usually pays most first (CUDA-L1's measured wins and the roofline
  // reasoning of docs/passes): a serialized reduction, then data reuse, then
  // memory access shape, then instruction-level and launch shape tweaks.
  if (t == "break") // test-only faults (passes/Break.h): proposed first, so tests see them judged
    return -1;
  if (t == "warp-reduce")
    return 0;
  if (t == "warp-rows") { // offered where row loops read strided across threads (packed)
    std::string lanes = paramOf(s, "lanes"); // or where they are coalesced but few (spread)
    // Spread: more lanes per column first. The H100 sweep of 2026-12-07
    // (docs/results/warp-rows-h200.md) ranked 16 lanes first on 5 of its 8
    // train and validation programs, 8 second on 5; 2 lanes never paid.
    if (paramOf(s, "layout") == "spread")
      return 5 + (lanes == "16" ? 0 : lanes == "8" ? 1 : lanes == "4" ? 2 : 3);
    return 5 + (lanes == "32" ? 0 : lanes == "16" ? 1 : lanes == "8" ? 2 : 3);
  }
  if (t == "tile-shared")
    return paramOf(s, "tile") == "32" ? 10 : 11;
  if (t == "stage-shared") // offered only where a store and its reads disagree on the unit stride
    return 12 + (paramOf(s, "tile") == "16") + (paramOf(s, "rows") == "1") +
           2 * (paramOf(s, "pad") == "0");
  if (t == "coalesce")
    return 20;
  if (t == "vectorize")
    return paramOf(s, "width") == "16" ? 30 : 31;
  if (t == "restrict")
    return 40;
  if (t == "unroll") {
    std::string f = paramOf(s, "factor");
    return f == "4" ? 50 : f == "8" ? 51 : 55;
  }
  if (t == "launch-config") {
    std::string b = paramOf(s, "block");
    if (b == "256" || b == "32x8" || b == "16x16")
      return 60;
    if (b == "512" || b == "128" || b == "32x4")
      return 61;
    return 65;
  }
  if (t == "coarsen")
    return paramOf(s, "factor") == "4" ? 70 : 71;
  if (t == "launch-bounds")
    return 80;
  if (t == "grid-stride")
    return 85;
  // Host-side moves: for launch-bound programs these are where the time is.
  // persistent is offered only on loops that do nothing but launch (and
  // replayable host arithmetic), and its helper falls back to the loop's
  // own launches where its cost rule says the form would lose: the owner
  // form (the same threads, no barrier, one launch for the loop) first,
  // then the cooperative grid, both before a graph (0.5 us per node
  // against a barrier per phase); one block only after the graph, as it
  // pays only where a launch fits one block. Dropping a synchronization
  // comes first of all: it removes a host stall at no cost to the device
  // and never loses, where the persistent grid form measured 0.44x-1.17x
  // on the H200 (docs/results/issue18-transforms-h200.md).
  if (t == "drop-sync")
    return 12;
  if (t == "persistent") {
    std::string f = paramOf(s, "form");
    return f == "owner" ? 13 : f == "block" ? 16 : 14;
  }
  if (t == "graph")
    return 15;
  // Fusing an element-wise chain saves a round trip through memory per
  // launch pair: the expert's main move on such chains, tried right after
  // the reuse transforms; the longest chain first (HeuristicStrategy's
  // order within a rank, chainOf).
  if (t == "fuse")
    return 12;
  if (t == "streams")
    return 25;
  // The iterations of a loop over independent buffers on side streams: pays
  // where each launch leaves most of the GPU idle, as streams does; two
  // streams first (less fork and join).
  if (t == "loop-streams")
    return paramOf(s, "streams") == "4" ? 26 : 25;
  return 90;
}

int heuristicRank(const ComposedStep &c) {
  // The enabled step decides: the prerequisites (drop-sync, restrict) are
  // proposed alone too, at their own rank.
  return heuristicRank(c.step);
}

std::unique_ptr<SearchStrategy> makeRandomStrategy(uint64_t seed) {
  return std::make_unique<RandomStrategy>(seed);
}
std::unique_ptr<SearchStrategy> makeHeuristicStrategy() {
  return std::make_unique<HeuristicStrategy>();
}
std::unique_ptr<SearchStrategy> makeStrategy(const std::string &name, uint64_t seed) {
  if (name == "random")
    return makeRandomStrategy(seed);
  if (name == "heuristic")
    return makeHeuristicStrategy();
  if (name == "policy") // the model of defaultPolicyModelDir(); heuristic without one
    return makePolicyStrategy({{}, seed});
  return nullptr;
}

} // namespace cudal1
