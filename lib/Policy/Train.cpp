// cudal1-train's library: the dataset from tuning databases, the split by
// program, the plans' effects from their programs' sources, the three
// stages of training and the held-out scores (docs/Policy.md).
#include "cudal1/Policy/Train.h"

#include "Plot.h"
#include "Torch/Network.h"

#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Support/AtomicFile.h"
#include "cudal1/Tune/Effect.h"
#include "cudal1/Tune/PolicyStrategy.h"
#include "cudal1/Tune/Space.h"
#include "cudal1/Tune/Strategy.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <tuple>

using namespace llvm;

namespace cudal1 {

const char *splitName(Split s) {
  switch (s) {
  case Split::Train:
    return "train";
  case Split::Validation:
    return "validation";
  case Split::Test:
    return "test";
  }
  return "train";
}

Split splitOf(const std::string &program, const SplitOptions &o) {
  for (const std::string &name : {program, sys::path::stem(program).str()}) {
    auto it = o.programSplits.find(name);
    if (it != o.programSplits.end())
      return it->second;
  }
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : program) {
    h ^= c;
    h *= 1099511628211ull;
  }
  unsigned bucket = unsigned(h % 100);
  if (bucket < o.testPercent)
    return Split::Test;
  if (bucket < o.testPercent + o.validationPercent)
    return Split::Validation;
  return Split::Train;
}

Error readSessionPrograms(const std::string &path, SplitOptions &o) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(path);
  if (!buf)
    return createStringError(buf.getError(), path + ": " + buf.getError().message());
  SmallVector<StringRef, 0> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    StringRef line = lines[i].rtrim("\r");
    if (line.empty() || line.starts_with("#"))
      continue;
    SmallVector<StringRef, 3> f;
    line.split(f, '\t');
    if (f.size() != 3 || f[0].empty() || f[2].empty())
      return createStringError(inconvertibleErrorCode(),
                               path + ":" + Twine(i + 1) +
                                   ": expected FILE<TAB>SESSION<TAB>PROGRAM");
    o.sessionPrograms[(f[0] + "#" + f[1]).str()] = f[2].str();
  }
  return Error::success();
}

Error readProgramSplits(const std::string &dir, SplitOptions &o) {
  for (Split s : {Split::Train, Split::Validation, Split::Test}) {
    SmallString<256> p(dir);
    sys::path::append(p, std::string(splitName(s)) + ".txt");
    ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(p);
    if (!buf)
      return createStringError(buf.getError(), p + ": " + buf.getError().message());
    SmallVector<StringRef, 0> lines;
    (*buf)->getBuffer().split(lines, '\n');
    for (StringRef line : lines) {
      line = line.trim();
      if (line.empty() || line.starts_with("#"))
        continue;
      auto [it, fresh] = o.programSplits.emplace(line.str(), s);
      if (!fresh && it->second != s)
        return createStringError(inconvertibleErrorCode(),
                                 dir + ": program '" + line + "' is in two splits");
    }
  }
  return Error::success();
}

namespace {

/// Union-find over kernel keys and sessions (the program grouping).
struct Groups {
  std::map<std::string, std::string> parent;
  std::string find(const std::string &x) {
    auto it = parent.find(x);
    if (it == parent.end()) {
      parent[x] = x;
      return x;
    }
    if (it->second == x)
      return x;
    std::string root = find(it->second);
    parent[x] = root;
    return root;
  }
  void join(const std::string &a, const std::string &b) {
    std::string ra = find(a), rb = find(b);
    if (ra != rb)
      parent[std::max(ra, rb)] = std::min(ra, rb); // the smaller name is the root
  }
};

struct Accum {
  KernelData data;
  std::map<std::string, MeasuredPlan> plans;
  std::map<std::string, double> logSum, logLoSum, probabilitySum;
  std::map<std::string, unsigned> timedCount, loCount, probabilityCount;
  /// Per session (database and session id), the plan texts in recording order.
  std::map<std::string, std::vector<std::string>> sessions;
  std::vector<double> baselines, programBaselines; ///< by the judge that timed them
};

/// Copies made to migrate older databases, removed at the end.
struct Temporaries {
  std::vector<std::string> paths;
  ~Temporaries() {
    for (const std::string &p : paths)
      sys::fs::remove(p);
  }
};

/// Read-only; a database of an older schema is migrated in a temporary
/// copy (the user's file is never written).
Expected<TuneDB> openForReading(const std::string &path, Temporaries &tmp) {
  TuneDBOptions ro;
  ro.mode = TuneDBMode::ReadOnly;
  Expected<TuneDB> db = TuneDB::open(path, ro);
  if (db)
    return db;
  std::string message = toString(db.takeError());
  if (message.find("older than") == std::string::npos)
    return createStringError(inconvertibleErrorCode(), message);
  SmallString<256> copy;
  if (std::error_code ec = sys::fs::createTemporaryFile("cudal1-train", "db", copy))
    return createStringError(ec, "cannot make a temporary copy of '" + path + "'");
  tmp.paths.push_back(std::string(copy));
  if (std::error_code ec = sys::fs::copy_file(path, copy))
    return createStringError(ec, "cannot copy '" + path + "': " + ec.message());
  return TuneDB::open(copy);
}

} // namespace

Expected<Dataset> loadDataset(const std::vector<std::string> &databases, int featureVersion,
                              const SplitOptions &split) {
  Dataset ds;
  ds.featureVersion = featureVersion;
  std::map<std::pair<std::string, std::string>, Accum> byKernel;
  std::map<std::string, std::optional<KernelFeatures>> features;
  Groups groups;
  std::map<std::string, unsigned> skippedWhy;
  Temporaries temporaries;
  for (const std::string &path : databases) {
    Expected<TuneDB> db = openForReading(path, temporaries);
    if (!db)
      return db.takeError();
    Error e = db->forEachMeasurement([&](const MeasurementRow &m) -> Error {
      ++ds.measurements;
      auto skip = [&](const std::string &why) {
        ++ds.skipped;
        ++skippedWhy[why];
        return Error::success();
      };
      if (StringRef(m.kernelKey).starts_with("program:"))
        return skip("combinations of several kernels' plans");
      std::string session = (sys::path::filename(path) + "#" + m.session).str();
      groups.join("kernel:" + m.kernelKey, "session:" + path + "#" + m.session);
      if (auto named = split.sessionPrograms.find(session); named != split.sessionPrograms.end())
        groups.join("session:" + path + "#" + m.session, "program:" + named->second);
      Accum &acc = byKernel[{m.kernelKey, m.gpu.name}];
      if (m.measured.baselineMs > 0) // the kernel's own time by replay, else the program's
        (m.measured.judge == Judge::Program ? acc.programBaselines : acc.baselines)
            .push_back(m.measured.baselineMs);
      if (countPlanSteps(m.plan) == 0)
        return Error::success(); // the original: the baseline, not a candidate
      Expected<Plan> plan = parsePlan(m.plan);
      if (!plan) {
        consumeError(plan.takeError());
        return skip("plans that do not parse");
      }
      Outcome outcome = m.measured.outcome;
      Accum &a = byKernel[{m.kernelKey, m.gpu.name}];
      if (a.data.state.key.empty()) {
        a.data.state.key = m.kernelKey;
        a.data.state.name = m.kernelName;
        a.data.state.host = m.kernelName == "(host)" || StringRef(m.kernelKey).starts_with("host:");
        a.data.state.gpu = describeGpu(m.gpu.name, m.gpu.arch);
      }
      if (!features.count(m.kernelKey)) {
        Expected<std::optional<KernelFeatures>> f = db->features(m.kernelKey, featureVersion);
        if (!f)
          return f.takeError();
        if (*f)
          features[m.kernelKey] = std::move(*f);
      }
      std::string text = printPlan(*plan);
      MeasuredPlan &mp = a.plans[text];
      if (mp.measurements == 0) {
        mp.steps = plan->steps;
        for (PlanStep &s : mp.steps)
          s.column = 0;
        mp.text = text;
        mp.outcome = outcome;
      } else if (outcome != Outcome::Ok && mp.outcome == Outcome::Ok) {
        mp.outcome = outcome; // wrong or failing once is not a plan to trust
      }
      ++mp.measurements;
      std::vector<std::string> &episode = a.sessions[path + "#" + m.session];
      if (std::find(episode.begin(), episode.end(), text) == episode.end())
        episode.push_back(text);
      if (m.proposalProbability && *m.proposalProbability > 0) {
        a.probabilitySum[text] += *m.proposalProbability;
        ++a.probabilityCount[text];
      }
      const Measurement &r = m.measured;
      if (outcome == Outcome::Ok && r.timed && r.speedup > 0) {
        a.logSum[text] += std::log(r.speedup);
        ++a.timedCount[text];
        if (r.lo > 0) {
          a.logLoSum[text] += std::log(r.lo);
          ++a.loCount[text];
        }
        mp.timed = true;
        if (r.lo > 0 && r.hi >= r.lo)
          mp.noise = std::max(mp.noise, 0.5 * (std::log(r.hi) - std::log(r.lo)));
      }
      return Error::success();
    });
    if (e)
      return std::move(e);
  }
  for (auto &[why, n] : skippedWhy)
    ds.notes.push_back(formatv("{0} measurements skipped: {1}", n, why).str());
  // A group's id: its program's name where one is known (the smallest of
  // several), else its smallest kernel key.
  std::map<std::string, std::string> programNames;
  for (const auto &[node, parent] : groups.parent)
    if (StringRef(node).starts_with("program:")) {
      std::string root = groups.find(node), name = node.substr(8);
      auto [it, fresh] = programNames.emplace(root, name);
      if (!fresh && name < it->second)
        it->second = name;
    }
  // Assemble, in key order (std::map), so that the dataset does not depend
  // on the databases' row order.
  for (auto &[key, a] : byKernel) {
    if (a.plans.empty())
      continue;
    KernelData kd = std::move(a.data);
    auto f = features.find(key.first);
    if (f != features.end() && f->second) {
      kd.state.features = f->second->features;
      kd.state.featureVersion = f->second->featureVersion;
    }
    auto median = [](std::vector<double> &v) -> std::optional<double> {
      if (v.empty())
        return std::nullopt;
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    kd.state.originalMs = median(a.baselines);
    kd.state.programMs = median(a.programBaselines);
    std::map<std::string, unsigned> indexOf;
    for (auto &[text, p] : a.plans) {
      if (p.timed) { // the mean log over the plan's timed measurements
        p.logSpeedup = a.logSum[text] / double(a.timedCount[text]);
        // Without an interval the lower end is the mean less the noise.
        p.logLo =
            a.loCount[text] ? a.logLoSum[text] / double(a.loCount[text]) : p.logSpeedup - p.noise;
      }
      if (a.probabilityCount[text])
        p.probability = a.probabilitySum[text] / double(a.probabilityCount[text]);
      if (p.outcome != Outcome::Ok)
        p.timed = false;
      indexOf[text] = unsigned(kd.plans.size());
      kd.plans.push_back(std::move(p));
    }
    for (const auto &[session, texts] : a.sessions) {
      std::vector<unsigned> episode;
      for (const std::string &t : texts)
        if (auto it = indexOf.find(t); it != indexOf.end())
          episode.push_back(it->second);
      if (!episode.empty())
        kd.episodes.push_back(std::move(episode));
    }
    std::string root = groups.find("kernel:" + key.first);
    auto named = programNames.find(root);
    kd.program = named != programNames.end() ? named->second : root.substr(root.find(':') + 1);
    kd.split = splitOf(kd.program, split);
    ds.kernels.push_back(std::move(kd));
  }
  return ds;
}

Error exportMerged(const std::vector<std::string> &databases, const std::string &out,
                   int featureVersion, unsigned &measurements) {
  measurements = 0;
  if (sys::fs::exists(out))
    return createStringError(inconvertibleErrorCode(),
                             "'" + out + "' exists: the export writes a new database");
  Temporaries temporaries;
  // Read everything first: a failing input leaves no half-written output.
  std::vector<MeasurementRow> all;
  std::map<std::string, KernelFeatures> features;
  for (const std::string &path : databases) {
    Expected<TuneDB> db = openForReading(path, temporaries);
    if (!db)
      return db.takeError();
    std::set<std::string> keys;
    if (Error e = db->forEachMeasurement([&](const MeasurementRow &m) {
          all.push_back(m);
          keys.insert(m.kernelKey);
          return Error::success();
        }))
      return e;
    for (const std::string &key : keys) {
      if (features.count(key))
        continue;
      Expected<std::optional<KernelFeatures>> f = db->features(key, featureVersion);
      if (!f)
        return f.takeError();
      if (*f)
        features[key] = std::move(**f);
    }
  }
  Expected<TuneDB> db = TuneDB::open(out);
  if (!db)
    return db.takeError();
  for (MeasurementRow &m : all)
    m.id = 0;
  Expected<std::vector<int64_t>> ids = db->recordMeasurements(all);
  if (!ids)
    return ids.takeError();
  for (const auto &[key, f] : features)
    if (Error e = db->recordFeatures(f))
      return e;
  measurements = unsigned(all.size());
  return Error::success();
}

// ------------------------------------------------------------------ effects

namespace {

std::string effectText(const std::optional<EffectFeatures> &e) {
  if (!e)
    return "-";
  std::string out;
  for (const auto &[n, v] : *e) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v); // round-trips: the cache changes nothing
    out += (out.empty() ? "" : ",") + n + "=" + buf;
  }
  return out;
}

std::optional<EffectFeatures> parseEffect(StringRef text) {
  if (text == "-")
    return std::nullopt;
  EffectFeatures e;
  SmallVector<StringRef, 48> parts;
  text.split(parts, ',');
  for (StringRef part : parts) {
    auto [name, value] = part.split('=');
    double v = 0;
    if (name.empty() || value.getAsDouble(v))
      return std::nullopt;
    e.emplace_back(name.str(), v);
  }
  return e;
}

} // namespace

Expected<EffectSummary> attachEffects(Dataset &data, const EffectOptions &o) {
  EffectSummary sum;
  auto t0 = std::chrono::steady_clock::now();
  // 1. Effects computed before, keyed by what they depend on: the effect
  // version, the unit (a hash of its text and its compile arguments), the
  // kernel's key and the plan. A kernel whose measured key is not in that
  // unit is remembered as such (plan "*", effect "changed"), so that a
  // second run parses nothing.
  using Key = std::tuple<std::string, std::string, std::string>; // unit, kernel key, plan
  std::map<Key, std::optional<EffectFeatures>> known;
  std::set<std::pair<std::string, std::string>> changed; // unit, kernel key
  if (!o.cacheFile.empty() && sys::fs::exists(o.cacheFile)) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(o.cacheFile);
    if (!buf)
      return createStringError(buf.getError(), o.cacheFile + ": " + buf.getError().message());
    SmallVector<StringRef, 0> lines;
    (*buf)->getBuffer().split(lines, '\n');
    for (size_t i = 0; i < lines.size(); ++i) {
      StringRef line = lines[i].rtrim("\r");
      if (line.empty() || line.starts_with("#"))
        continue;
      SmallVector<StringRef, 5> f;
      line.split(f, '\t');
      int version = 0;
      if (f.size() != 5 || f[0].getAsInteger(10, version) || f[1].empty() || f[2].empty())
        return createStringError(
            inconvertibleErrorCode(),
            o.cacheFile + ":" + Twine(i + 1) +
                ":1: expected VERSION<TAB>UNIT-HASH<TAB>KERNEL-KEY<TAB>PLAN<TAB>EFFECT (an effect "
                "cache of another cudal1: remove it)");
      if (version != kEffectVersion) // another version's effects mean something else
        continue;
      if (f[3] == "*") {
        if (f[4] == "changed")
          changed.insert({f[1].str(), f[2].str()});
        continue;
      }
      known[{f[1].str(), f[2].str(), f[3].str()}] = parseEffect(f[4]);
    }
  }
  // 2. The others, from their programs' sources: one cache (one parse of
  // the input) per program, made only when a plan's effect is not known.
  std::map<std::string, std::vector<KernelData *>> byProgram;
  for (KernelData &k : data.kernels)
    byProgram[k.program].push_back(&k);
  bool added = false;
  for (auto &[program, kernels] : byProgram) {
    SmallString<256> path(o.sourceRoot);
    sys::path::append(path, program);
    ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(path);
    if (!buf) {
      sum.kernelsWithoutSource += unsigned(kernels.size());
      for (KernelData *k : kernels)
        sum.plans += unsigned(k->plans.size());
      continue;
    }
    RewriteInput in{std::string(path), (*buf)->getBuffer().str(),
                    analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90"}, nullptr)};
    std::string hashed = in.code;
    for (const std::string &arg : in.args)
      hashed += '\0' + arg;
    std::string unit = "u" + utohexstr(xxh3_64bits(StringRef(hashed)), true);
    std::unique_ptr<EffectCache> cache;
    bool parsed = false;
    unsigned before = sum.computed;
    for (KernelData *k : kernels) {
      sum.plans += unsigned(k->plans.size());
      if (changed.count({unit, k->state.key})) {
        ++sum.kernelsChanged;
        continue;
      }
      bool usable = true;
      // The measured plans, then the unmeasured ones (attachUnmeasured).
      struct Slot {
        const std::vector<PlanStep> &steps;
        const std::string &text;
        std::optional<EffectFeatures> &effect;
        bool measured;
      };
      std::vector<Slot> slots;
      for (MeasuredPlan &p : k->plans)
        slots.push_back({p.steps, p.text, p.effect, true});
      for (UnmeasuredPlan &p : k->unmeasured)
        slots.push_back({p.steps, p.text, p.effect, false});
      sum.unmeasuredPlans += unsigned(k->unmeasured.size());
      auto counted = [&](const Slot &p) {
        (p.measured ? sum.withEffect : sum.unmeasuredWithEffect) += bool(p.effect);
      };
      for (Slot &p : slots) {
        auto hit = known.find({unit, k->state.key, p.text});
        if (hit != known.end()) {
          p.effect = hit->second;
          ++sum.fromCache;
          counted(p);
          continue;
        }
        if (!usable)
          continue;
        if (!parsed) {
          parsed = true;
          cache = std::make_unique<EffectCache>(in);
          if (!cache->input())
            cache.reset();
        }
        if (!cache) { // the source does not parse
          ++sum.kernelsWithoutSource;
          usable = false;
          continue;
        }
        // The measurement must have been made on this source's kernel.
        const UnitSummary *u = cache->input();
        auto key = u->keyOfKernel.find(k->state.name);
        bool same = k->state.host ? u->hostKey == k->state.key
                                  : key != u->keyOfKernel.end() && key->second == k->state.key;
        if (!same) {
          ++sum.kernelsChanged;
          changed.insert({unit, k->state.key});
          added = true;
          usable = false;
          continue;
        }
        const EffectFeatures *e =
            cache->effectOf(k->state.host ? "(host)" : k->state.name, p.steps);
        if (e)
          p.effect = *e;
        known[{unit, k->state.key, p.text}] = p.effect;
        added = true;
        ++sum.computed;
        counted(p);
      }
    }
    if (o.progress && sum.computed > before)
      o.progress(formatv("effects: {0}: {1} plans in {2:F1} s", program, sum.computed - before,
                         cache ? cache->computeSeconds() : 0.0)
                     .str());
  }
  // 3. The cache, with what was computed now (sorted: the file does not
  // depend on the order of the data), replaced atomically: a reader never
  // sees half of it. Entries of other units are kept (older sources, other
  // datasets sharing the file).
  if (added && !o.cacheFile.empty()) {
    std::string text = "# cudal1-train effects: effect version, unit hash, kernel key, plan, "
                       "values\n";
    for (const auto &[unit, key] : changed)
      text += formatv("{0}\t{1}\t{2}\t*\tchanged\n", kEffectVersion, unit, key).str();
    for (const auto &[key, e] : known)
      text += formatv("{0}\t{1}\t{2}\t{3}\t{4}\n", kEffectVersion, std::get<0>(key),
                      std::get<1>(key), std::get<2>(key), effectText(e))
                  .str();
    if (!sys::path::parent_path(o.cacheFile).empty())
      if (std::error_code ec = sys::fs::create_directories(sys::path::parent_path(o.cacheFile)))
        return createStringError(ec, o.cacheFile + ": " + ec.message());
    if (Error e = writeFileAtomically(o.cacheFile, text))
      return std::move(e);
  }
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sum;
}

Expected<UnmeasuredSummary> attachUnmeasured(Dataset &data, const UnmeasuredOptions &o) {
  UnmeasuredSummary sum;
  auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, std::vector<KernelData *>> byProgram;
  for (KernelData &k : data.kernels) {
    k.unmeasured.clear();
    if (k.split != Split::Test && o.perKernel > 0) // the test split is never trained on
      byProgram[k.program].push_back(&k);
  }
  for (auto &[program, kernels] : byProgram) {
    SmallString<256> path(o.sourceRoot);
    sys::path::append(path, program);
    ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(path);
    if (!buf) {
      sum.kernelsWithoutSource += unsigned(kernels.size());
      continue;
    }
    // The same input the effects are computed from (attachEffects).
    RewriteInput in{std::string(path), (*buf)->getBuffer().str(),
                    analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90"}, nullptr)};
    Expected<TuneSpace> space = collectTuneSpace(in);
    if (!space) {
      consumeError(space.takeError()); // a source that no longer parses: nothing to add
      sum.kernelsWithoutSource += unsigned(kernels.size());
      continue;
    }
    unsigned before = sum.plans;
    for (KernelData *k : kernels) {
      const TuneKernel *tk = nullptr;
      for (const TuneKernel &c : space->kernels)
        if (c.key == k->state.key && c.host == k->state.host)
          tk = &c;
      if (!tk) { // measured on another version of the source
        ++sum.kernelsChanged;
        continue;
      }
      // The policy strategy's candidates: every legal single step and
      // composed step (its prerequisites first), fast-math left out.
      KernelState st;
      st.steps = tk->steps;
      st.composed = tk->composed;
      std::set<std::string> measured;
      for (const MeasuredPlan &p : k->plans)
        measured.insert(planText(p.steps));
      std::vector<std::tuple<uint64_t, std::string, std::vector<PlanStep>>> pool;
      for (std::vector<PlanStep> &steps : policyCandidates(st, UINT_MAX, false)) {
        for (PlanStep &step : steps)
          step.column = 0; // as the measured plans' steps (loadDataset)
        std::string text = planText(steps);
        if (measured.count(text))
          continue;
        uint64_t h = xxh3_64bits(formatv("{0}#{1}#{2}", o.seed, k->state.key, text).str());
        pool.emplace_back(h, std::move(text), std::move(steps));
      }
      sum.legal += unsigned(pool.size());
      std::sort(pool.begin(), pool.end(), [](const auto &a, const auto &b) {
        return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
      });
      pool.resize(std::min<size_t>(pool.size(), o.perKernel));
      std::sort(pool.begin(), pool.end(),
                [](const auto &a, const auto &b) { return std::get<1>(a) < std::get<1>(b); });
      for (auto &[h, text, steps] : pool)
        k->unmeasured.push_back(UnmeasuredPlan{std::move(steps), std::move(text), std::nullopt});
      sum.plans += unsigned(k->unmeasured.size());
      sum.kernels += !k->unmeasured.empty();
    }
    if (o.progress)
      o.progress(formatv("unmeasured: {0}: {1} plans", program, sum.plans - before).str());
  }
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sum;
}

// ------------------------------------------------------------------ training

namespace {

/// What the network trains on for one kernel.
policynet::TrainGroup groupOf(const EncodingSchema &schema, const KernelData &k,
                              const TrainOptions &o, bool training) {
  policynet::TrainGroup g;
  g.state = encodeState(schema, k.state);
  bool anyEffect = false;
  for (const MeasuredPlan &p : k.plans)
    anyEffect |= bool(p.effect);
  anyEffect &= schema.effectDim() > 0;
  for (const MeasuredPlan &p : k.plans) {
    const EffectFeatures *effect = p.effect ? &*p.effect : nullptr;
    std::vector<float> e = encodePlan(schema, p.steps, effect);
    g.plans.insert(g.plans.end(), e.begin(), e.end());
    Exemplar ex;
    ex.steps = p.steps;
    ex.measured.outcome = p.outcome;
    ex.measured.timed = p.timed;
    ex.measured.speedup = p.timed ? std::exp(p.logSpeedup) : 0;
    ex.measured.faster = ex.measured.speedup > 1;
    ex.effect = p.effect;
    std::vector<float> x = encodeExemplar(schema, ex);
    g.asExemplar.insert(g.asExemplar.end(), x.begin(), x.end());
    if (anyEffect) {
      std::vector<float> eb = encodePlan(schema, p.steps);
      g.plansBare.insert(g.plansBare.end(), eb.begin(), eb.end());
      ex.effect.reset();
      std::vector<float> xb = encodeExemplar(schema, ex);
      g.asExemplarBare.insert(g.asExemplarBare.end(), xb.begin(), xb.end());
    }
    g.logSpeedup.push_back(
        float(p.timed ? std::clamp(p.logSpeedup, -kMaxLogSpeedup, kMaxLogSpeedup) : 0));
    g.timed.push_back(p.timed);
    g.verified.push_back(p.outcome == Outcome::Ok);
    g.noise.push_back(float(p.noise));
    g.outcomeKnown.push_back(p.outcome != Outcome::NotRun);
    // Stage (c)'s reward: the lower end of the speedup, or a penalty.
    float reward = NAN;
    if (p.timed)
      reward = float(std::clamp(p.logLo, -kMaxLogSpeedup, kMaxLogSpeedup));
    else if (p.outcome != Outcome::Ok && p.outcome != Outcome::NotRun)
      reward = float(-o.penalty);
    g.reward.push_back(reward);
    g.behaviour.push_back(float(p.probability));
    ++g.numPlans;
  }
  g.episodes = k.episodes;
  for (const MeasuredPlan &p : k.plans)
    g.heuristic.push_back(float(heuristicPlanScore(p.steps)));
  // The legal plans nobody measured: targets of the heuristic's imitation
  // where the kernel is trained on (never scored, never held out).
  if (training && o.unmeasuredShare > 0) {
    bool priorEffect = false;
    for (const UnmeasuredPlan &p : k.unmeasured)
      priorEffect |= bool(p.effect);
    priorEffect &= schema.effectDim() > 0;
    for (const UnmeasuredPlan &p : k.unmeasured) {
      std::vector<float> e = encodePlan(schema, p.steps, p.effect ? &*p.effect : nullptr);
      g.priorPlans.insert(g.priorPlans.end(), e.begin(), e.end());
      if (priorEffect) {
        std::vector<float> eb = encodePlan(schema, p.steps);
        g.priorPlansBare.insert(g.priorPlansBare.end(), eb.begin(), eb.end());
      }
      g.priorHeuristic.push_back(float(heuristicPlanScore(p.steps)));
      ++g.numPrior;
    }
  }
  return g;
}

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

} // namespace

const std::vector<std::string> &knownAblations() {
  static const std::vector<std::string> names = {"exemplars", "stage-c", "effect"};
  return names;
}

double heuristicPlanScore(const std::vector<PlanStep> &steps) {
  // The heuristic's order: singles by rank, then compositions (which it
  // tries after the singles) by their ranks' sum.
  double sum = 0;
  for (const PlanStep &s : steps)
    sum += heuristicRank(s);
  return steps.size() <= 1 ? -sum : -(1000.0 * double(steps.size() - 1) + sum);
}

Expected<SplitScore> evaluateRanking(const Dataset &data, Split split, const RankFn &rank) {
  SplitScore s;
  double correct = 0;
  unsigned withBest = 0, hits = 0, near = 0;
  for (const KernelData &k : data.kernels) {
    if (k.split != split)
      continue;
    std::vector<const MeasuredPlan *> timed;
    for (const MeasuredPlan &p : k.plans)
      if (p.timed)
        timed.push_back(&p);
    ++s.kernels;
    if (timed.empty())
      continue;
    bool refused = false;
    Expected<std::vector<double>> sc = rank(k, timed, refused);
    if (!sc)
      return sc.takeError();
    s.refused += refused;
    size_t best = 0, top = 0;
    for (size_t i = 0; i < timed.size(); ++i) {
      if (timed[i]->logSpeedup > timed[best]->logSpeedup)
        best = i;
      if ((*sc)[i] > (*sc)[top])
        top = i;
      for (size_t j = 0; j < timed.size(); ++j) {
        double tie = std::max({timed[i]->noise, timed[j]->noise, 1e-3});
        if (timed[i]->logSpeedup - timed[j]->logSpeedup > tie) {
          ++s.pairs;
          // A predicted tie is half right (the heuristic ties often).
          correct += (*sc)[i] > (*sc)[j] ? 1 : (*sc)[i] == (*sc)[j] ? 0.5 : 0;
        }
      }
    }
    bool clear = timed.size() >= 2;
    for (size_t j = 0; j < timed.size() && clear; ++j)
      if (j != best && timed[best]->logSpeedup - timed[j]->logSpeedup <=
                           std::max({timed[best]->noise, timed[j]->noise, 1e-3}))
        clear = false;
    if (clear) {
      ++withBest;
      hits += top == best;
    }
    if (timed.size() >= 2) {
      ++s.within5Kernels;
      near += timed[top]->logSpeedup >= timed[best]->logSpeedup + std::log(0.95);
    }
  }
  s.pairAccuracy = s.pairs ? correct / s.pairs : 0;
  s.top1 = withBest ? double(hits) / withBest : 0;
  s.within5 = s.within5Kernels ? double(near) / s.within5Kernels : 0;
  return s;
}

Expected<SplitScore> evaluateHeuristic(const Dataset &data, Split split) {
  return evaluateRanking(data, split,
                         [](const KernelData &, const std::vector<const MeasuredPlan *> &plans,
                            bool &) -> Expected<std::vector<double>> {
                           std::vector<double> out;
                           for (const MeasuredPlan *p : plans)
                             out.push_back(heuristicPlanScore(p->steps));
                           return out;
                         });
}

Expected<SplitScore> evaluatePolicy(const Policy &policy, const Dataset &data, Split split) {
  return evaluateRanking(data, split,
                         [&](const KernelData &k, const std::vector<const MeasuredPlan *> &plans,
                             bool &refused) -> Expected<std::vector<double>> {
                           std::vector<Plan> ps;
                           std::vector<const EffectFeatures *> effects;
                           for (const MeasuredPlan *p : plans) {
                             ps.push_back(Plan{p->steps});
                             effects.push_back(p->effect ? &*p->effect : nullptr);
                           }
                           std::vector<double> out;
                           Expected<std::vector<PlanScore>> sc = policy.score(k.state, ps, effects);
                           if (!sc) {
                             // The strategy falls back to the heuristic here, and so does its
                             // score.
                             consumeError(sc.takeError());
                             refused = true;
                             for (const MeasuredPlan *p : plans)
                               out.push_back(heuristicPlanScore(p->steps));
                             return out;
                           }
                           for (const PlanScore &x : *sc)
                             out.push_back(x.logSpeedup);
                           return out;
                         });
}

Expected<std::vector<int>> assignFolds(const Dataset &data, unsigned folds, uint64_t seed) {
  std::map<std::string, unsigned> sizes; // non-test programs, their kernels
  for (const KernelData &k : data.kernels)
    if (k.split != Split::Test)
      ++sizes[k.program];
  if (folds < 2 || sizes.size() < folds)
    return createStringError(inconvertibleErrorCode(),
                             formatv("cross-validation needs at least 2 folds and a program "
                                     "outside the test split per fold: {0} folds, {1} programs",
                                     folds, sizes.size())
                                 .str());
  // Largest programs first (balance), equal sizes in an order the seed
  // decides; each goes to the fold with the fewest kernels so far.
  std::vector<std::tuple<unsigned, uint64_t, std::string>> order;
  for (const auto &[program, n] : sizes)
    order.emplace_back(n, xxh3_64bits(program + "#" + std::to_string(seed)), program);
  std::sort(order.begin(), order.end(), [](const auto &a, const auto &b) {
    if (std::get<0>(a) != std::get<0>(b))
      return std::get<0>(a) > std::get<0>(b);
    return std::tie(std::get<1>(a), std::get<2>(a)) < std::tie(std::get<1>(b), std::get<2>(b));
  });
  std::vector<unsigned> load(folds, 0);
  std::map<std::string, int> foldOf;
  for (const auto &[n, hash, program] : order) {
    size_t f = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    foldOf[program] = int(f);
    load[f] += n;
  }
  std::vector<int> out;
  for (const KernelData &k : data.kernels)
    out.push_back(k.split == Split::Test ? -1 : foldOf.at(k.program));
  return out;
}

namespace {

/// A number as %g writes it (grid values: 0.003, 0.3, 1).
std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

/// What one run of the stages uses: epochs, the stage (a) values under
/// selection, and whether the validation points choose the epochs kept.
struct RunSpec {
  unsigned epochsA = 0, epochsB = 0, epochsC = 0;
  double learningRate = 3e-3, heuristicWeight = 0;
  bool select = true;
};

/// One run of the stages: the encoding fitted on the kernels whose role is
/// 0 (or the initial model's), the network trained on them, the curve's
/// validation columns on the kernels whose role is 1; -1: unused.
Expected<std::unique_ptr<Policy>>
runStages(const Dataset &data, const TrainOptions &o, const std::vector<int> &role,
          const RunSpec &spec, std::vector<policynet::CurvePoint> &curve,
          const std::function<void(Policy &, policynet::TrainConfig &)> &prepare = nullptr) {
  bool noEffect = o.ablate.count("effect"), noExemplars = o.ablate.count("exemplars");
  std::vector<const KernelState *> states;
  std::vector<std::vector<PlanStep>> plans;
  std::vector<const EffectFeatures *> effects;
  for (size_t i = 0; i < data.kernels.size(); ++i) {
    if (role[i] != 0)
      continue;
    const KernelData &k = data.kernels[i];
    states.push_back(&k.state);
    for (const MeasuredPlan &p : k.plans) {
      plans.push_back(p.steps);
      effects.push_back(p.effect && !noEffect ? &*p.effect : nullptr);
    }
    // The unmeasured plans are trained on: their transforms and effects
    // are in the vocabulary and the statistics too.
    if (o.unmeasuredShare > 0)
      for (const UnmeasuredPlan &p : k.unmeasured) {
        plans.push_back(p.steps);
        effects.push_back(p.effect && !noEffect ? &*p.effect : nullptr);
      }
  }
  if (states.empty())
    return createStringError(inconvertibleErrorCode(), "no kernel in the training split (" +
                                                           Twine(data.kernels.size()) +
                                                           " kernels in all): nothing to train on");
  Expected<std::unique_ptr<Policy>> policy =
      o.initModel.empty()
          ? Policy::create(fitSchema(states, plans, data.featureVersion, effects, kEffectVersion),
                           o.hidden, o.seed)
          : Policy::load(o.initModel);
  if (!policy)
    return policy.takeError();
  const EncodingSchema &schema = (*policy)->schema();
  std::vector<policynet::TrainGroup> train, heldOut;
  for (size_t i = 0; i < data.kernels.size(); ++i) {
    if (role[i] < 0)
      continue;
    KernelData view = data.kernels[i];
    if (noEffect) {
      for (MeasuredPlan &p : view.plans)
        p.effect.reset();
      for (UnmeasuredPlan &p : view.unmeasured)
        p.effect.reset();
    }
    (role[i] == 0 ? train : heldOut).push_back(groupOf(schema, view, o, role[i] == 0));
  }
  policynet::TrainConfig tc;
  tc.epochs = spec.epochsA;
  tc.learningRate = spec.learningRate;
  tc.heuristicWeight = spec.heuristicWeight;
  tc.priorShare = o.unmeasuredShare;
  tc.selectOnValidation = spec.select;
  tc.seed = o.seed;
  tc.evalEvery = o.evalEvery;
  tc.effectDropout = o.effectDropout;
  tc.verifyEpochs = spec.epochsB;
  tc.rlEpochs = o.ablate.count("stage-c") ? 0 : spec.epochsC;
  tc.budget = o.budget;
  tc.group = o.group;
  tc.temperature = o.temperature;
  tc.klWeight = o.klWeight;
  tc.rlLearningRate = o.rlLearningRate;
  tc.rlAnchor = o.rlAnchor;
  if (noExemplars) {
    tc.contextFraction = 0;
    tc.useExemplars = false;
  }
  if (prepare)
    prepare(**policy, tc);
  std::string err = (*policy)->network().train(train, heldOut, tc, curve);
  if (!err.empty())
    return createStringError(inconvertibleErrorCode(), "training: " + err);
  return policy;
}

/// Held-out figures of one (stage, epoch) pooled over the folds.
struct Pooled {
  double correct = 0, lossSum = 0, returnSum = 0;
  unsigned pairs = 0, kernels = 0, episodes = 0, folds = 0;
  void add(const policynet::CurvePoint &p) {
    correct += p.validationPairAccuracy * p.validationPairs;
    pairs += p.validationPairs;
    lossSum += p.validationLoss * p.validationKernels;
    kernels += p.validationKernels;
    returnSum += p.validationReturn * p.validationEpisodes;
    episodes += p.validationEpisodes;
    ++folds;
  }
  double accuracy() const { return pairs ? correct / pairs : 0; }
  double loss() const { return kernels ? lossSum / kernels : 0; }
  double meanReturn() const { return episodes ? returnSum / episodes : 0; }
};

/// What a curve point is chosen by: its pooled figures averaged with its
/// neighbours' on the stage's curve (one point each side), because from
/// one curve point to the next the held-out pair accuracy swings far more
/// than its sampling noise (a single point's maximum picks that noise).
struct Smoothed {
  double accuracy = 0, loss = 0, meanReturn = 0;
  /// Stages (a), (b): pair accuracy, then loss; (c): return first.
  bool betterThan(const Smoothed &o, bool byReturn) const {
    if (byReturn && std::abs(meanReturn - o.meanReturn) > 1e-9)
      return meanReturn > o.meanReturn;
    if (std::abs(accuracy - o.accuracy) > 1e-9)
      return accuracy > o.accuracy;
    return loss < o.loss - 1e-9;
  }
};

std::map<unsigned, Smoothed> smooth(const std::map<unsigned, Pooled> &curve) {
  std::vector<std::pair<unsigned, const Pooled *>> points;
  for (const auto &[epoch, p] : curve)
    points.emplace_back(epoch, &p);
  std::map<unsigned, Smoothed> out;
  for (size_t i = 0; i < points.size(); ++i) {
    Smoothed s;
    unsigned n = 0;
    for (size_t j = i ? i - 1 : 0; j <= i + 1 && j < points.size(); ++j, ++n) {
      s.accuracy += points[j].second->accuracy();
      s.loss += points[j].second->loss();
      s.meanReturn += points[j].second->meanReturn();
    }
    s.accuracy /= n;
    s.loss /= n;
    s.meanReturn /= n;
    out[points[i].first] = s;
  }
  return out;
}

/// Per fold run, its points of `stage` pooled by epoch (over the folds).
void poolStage(const std::vector<policynet::CurvePoint> &curve, const std::string &stage,
               std::map<unsigned, Pooled> &out) {
  for (const policynet::CurvePoint &p : curve)
    if (p.stage == stage)
      out[p.epoch].add(p);
}

} // namespace

Expected<TrainSummary> trainPolicy(const Dataset &data, const TrainOptions &o) {
  TrainSummary sum;
  for (const std::string &a : o.ablate)
    if (std::find(knownAblations().begin(), knownAblations().end(), a) == knownAblations().end())
      return createStringError(inconvertibleErrorCode(),
                               "unknown ablation '" + a + "' (exemplars, stage-c or effect)");
  bool noEffect = o.ablate.count("effect"), noExemplars = o.ablate.count("exemplars");
  for (const KernelData &k : data.kernels)
    (k.split == Split::Train        ? sum.trainKernels
     : k.split == Split::Validation ? sum.validationKernels
                                    : sum.testKernels)++;
  if (!o.overwrite && sys::fs::exists(o.outDir + "/model.json"))
    return createStringError(inconvertibleErrorCode(),
                             "policy model '" + o.outDir +
                                 "': a model is already there (use --force to replace it)");
  std::vector<double> lrs =
      o.cvLearningRates.empty() ? std::vector<double>{o.learningRate} : o.cvLearningRates;
  std::vector<double> hws =
      o.cvHeuristicWeights.empty() ? std::vector<double>{o.heuristicWeight} : o.cvHeuristicWeights;
  bool rl = !o.ablate.count("stage-c") && o.rlEpochs > 0;
  RunSpec chosen;
  chosen.epochsA = o.epochs;
  chosen.epochsB = o.verifyEpochs;
  chosen.epochsC = rl ? o.rlEpochs : 0;
  chosen.learningRate = lrs[0];
  chosen.heuristicWeight = hws[0];
  std::vector<int> role(data.kernels.size());
  std::string selection; // how the kept epochs were chosen, for the curve
  if (o.folds >= 2) {
    // 1. Grouped k-fold cross-validation over the programs outside the test
    // split (train and validation): every choice by the held-out folds'
    // pooled figures, the test split never seen.
    Expected<std::vector<int>> folds = assignFolds(data, o.folds, o.seed);
    if (!folds)
      return folds.takeError();
    auto foldRole = [&](unsigned f) {
      std::vector<int> r(folds->size());
      for (size_t i = 0; i < r.size(); ++i)
        r[i] = (*folds)[i] < 0 ? -1 : (*folds)[i] == int(f) ? 1 : 0;
      return r;
    };
    auto runFolds = [&](const RunSpec &spec, const std::string &stage,
                        std::map<unsigned, Pooled> &pooled, const std::string &also = "") -> Error {
      for (unsigned f = 0; f < o.folds; ++f) {
        std::vector<policynet::CurvePoint> curve;
        Expected<std::unique_ptr<Policy>> p = runStages(data, o, foldRole(f), spec, curve);
        if (!p)
          return p.takeError();
        poolStage(curve, stage, pooled);
        if (!also.empty()) { // the previous stage's last point: this stage's epoch 0
          const policynet::CurvePoint *last = nullptr;
          for (const policynet::CurvePoint &c : curve)
            if (c.stage == also)
              last = &c;
          if (last)
            pooled[0].add(*last);
        }
        if (o.progress)
          o.progress(formatv("cv: stage {0}, fold {1} of {2} done", stage, f + 1, o.folds).str());
      }
      return Error::success();
    };
    raw_string_ostream cv(sum.crossValidation);
    unsigned programs = 0;
    {
      std::set<std::string> ps;
      for (size_t i = 0; i < data.kernels.size(); ++i)
        if ((*folds)[i] >= 0)
          ps.insert(data.kernels[i].program);
      programs = unsigned(ps.size());
    }
    cv << formatv("# cross-validation: {0} folds by program over {1} programs outside the test "
                  "split (seed {2}); held-out figures pooled over the folds\n",
                  o.folds, programs, o.seed);
    for (unsigned f = 0; f < o.folds; ++f) {
      std::set<std::string> ps;
      unsigned n = 0;
      for (size_t i = 0; i < data.kernels.size(); ++i)
        if ((*folds)[i] == int(f)) {
          ps.insert(data.kernels[i].program);
          ++n;
        }
      cv << "# fold " << f << ": " << n << " kernels:";
      for (const std::string &p : ps)
        cv << " " << p;
      cv << "\n";
    }
    cv << "# stage lr heuristic_weight epoch pairs pair_acc loss kernels return episodes "
          "smoothed_pair_acc smoothed_loss smoothed_return (chosen by the smoothed columns)\n";
    auto line = [&](const std::string &stage, double lr, double hw, unsigned epoch, const Pooled &p,
                    const Smoothed &m, bool chosen) {
      cv << formatv(
          "{0} {1} {2} {3} {4} {5:F4} {6:F5} {7} {8:F4} {9} {10:F4} {11:F5} {12:F4}{13}\n", stage,
          num(lr), num(hw), epoch, p.pairs, p.accuracy(), p.loss(), p.kernels, p.meanReturn(),
          p.episodes, m.accuracy, m.loss, m.meanReturn, chosen ? " chosen" : "");
    };
    // Stage (a): its epoch and the grid's values.
    if (o.epochs > 0) {
      std::vector<std::tuple<double, double, std::map<unsigned, Pooled>>> grid;
      for (double lr : lrs)
        for (double hw : hws) {
          RunSpec spec;
          spec.epochsA = o.epochs;
          spec.learningRate = lr;
          spec.heuristicWeight = hw;
          spec.select = false;
          std::map<unsigned, Pooled> pooled;
          if (Error e = runFolds(spec, "a", pooled))
            return std::move(e);
          grid.emplace_back(lr, hw, std::move(pooled));
        }
      std::vector<std::map<unsigned, Smoothed>> smoothed;
      for (const auto &g : grid)
        smoothed.push_back(smooth(std::get<2>(g)));
      const Smoothed *best = nullptr;
      for (size_t gi = 0; gi < grid.size(); ++gi)
        for (const auto &[epoch, m] : smoothed[gi])
          if (!best || m.betterThan(*best, false)) {
            best = &m;
            chosen.epochsA = epoch;
            chosen.learningRate = std::get<0>(grid[gi]);
            chosen.heuristicWeight = std::get<1>(grid[gi]);
          }
      for (size_t gi = 0; gi < grid.size(); ++gi) {
        const auto &[lr, hw, pooled] = grid[gi];
        for (const auto &[epoch, p] : pooled)
          line("a", lr, hw, epoch, p, smoothed[gi].at(epoch),
               lr == chosen.learningRate && hw == chosen.heuristicWeight &&
                   epoch == chosen.epochsA);
      }
    }
    // Stage (b) after the chosen (a); epoch 0 is (a)'s point.
    if (o.verifyEpochs > 0) {
      RunSpec spec = chosen;
      spec.epochsB = o.verifyEpochs;
      spec.epochsC = 0;
      spec.select = false;
      std::map<unsigned, Pooled> pooled;
      if (Error e = runFolds(spec, "b", pooled, o.epochs > 0 ? "a" : ""))
        return std::move(e);
      std::map<unsigned, Smoothed> smoothed = smooth(pooled);
      const Smoothed *best = nullptr;
      for (const auto &[epoch, m] : smoothed)
        if (!best || m.betterThan(*best, false)) {
          best = &m;
          chosen.epochsB = epoch;
        }
      for (const auto &[epoch, p] : pooled)
        line("b", chosen.learningRate, chosen.heuristicWeight, epoch, p, smoothed.at(epoch),
             epoch == chosen.epochsB);
    }
    // Stage (c) after the chosen (a) and (b); its epoch 0 is theirs.
    if (rl) {
      RunSpec spec = chosen;
      spec.epochsC = o.rlEpochs;
      spec.select = false;
      std::map<unsigned, Pooled> pooled;
      if (Error e = runFolds(spec, "c", pooled))
        return std::move(e);
      std::map<unsigned, Smoothed> smoothed = smooth(pooled);
      const Smoothed *best = nullptr;
      for (const auto &[epoch, m] : smoothed)
        if (!best || m.betterThan(*best, true)) {
          best = &m;
          chosen.epochsC = epoch;
        }
      for (const auto &[epoch, p] : pooled)
        line("c", chosen.learningRate, chosen.heuristicWeight, epoch, p, smoothed.at(epoch),
             epoch == chosen.epochsC);
    }
    cv << formatv("# chosen: --epochs {0} --verify-epochs {1} --rl-epochs {2} --lr {3} "
                  "--heuristic-weight {4}\n",
                  chosen.epochsA, chosen.epochsB, chosen.epochsC, num(chosen.learningRate),
                  num(chosen.heuristicWeight));
    cv.flush();
    // 2. The final model: every program outside the test split, the chosen
    // epochs, nothing selected.
    for (size_t i = 0; i < role.size(); ++i)
      role[i] = (*folds)[i] < 0 ? -1 : 0;
    chosen.select = false;
    selection = formatv(" (chosen by {0}-fold cross-validation)", o.folds).str();
  } else if (o.fixedEpochs) {
    for (size_t i = 0; i < role.size(); ++i)
      role[i] = data.kernels[i].split == Split::Test ? -1 : 0;
    chosen.select = false;
    selection = " (fixed: --fixed-epochs)";
  } else {
    for (size_t i = 0; i < role.size(); ++i)
      role[i] = data.kernels[i].split == Split::Train        ? 0
                : data.kernels[i].split == Split::Validation ? 1
                                                             : -1;
    chosen.select = true;
  }
  sum.learningRate = chosen.learningRate;
  sum.heuristicWeight = chosen.heuristicWeight;
  bool anyValidation = false;
  for (int r : role)
    anyValidation |= r == 1;
  sum.stages = std::string(chosen.epochsA ? "a" : "") + (chosen.epochsB ? "b" : "") +
               (chosen.epochsC ? "c" : "");
  // 3. The run that makes the model.
  unsigned points = 0;
  std::string checkpointError;
  std::vector<policynet::CurvePoint> curve;
  Policy *model = nullptr;
  Expected<std::unique_ptr<Policy>> policy =
      runStages(data, o, role, chosen, curve, [&](Policy &p, policynet::TrainConfig &tc) {
        model = &p;
        PolicyModelInfo &info = p.info();
        std::string before = info.stages;
        info.stages = o.initModel.empty() ? sum.stages : before + "+" + sum.stages;
        info.maxPlanSteps = 1;
        for (size_t i = 0; i < data.kernels.size(); ++i)
          if (role[i] == 0)
            for (const MeasuredPlan &mp : data.kernels[i].plans)
              info.maxPlanSteps = std::max<unsigned>(info.maxPlanSteps, unsigned(mp.steps.size()));
        info.maxPlanSteps = std::min(info.maxPlanSteps, kPolicyStepCap);
        info.data = o.dataNote;
        info.useExemplars = !noExemplars;
        info.ablations.clear();
        for (const std::string &a : o.ablate)
          info.ablations += (info.ablations.empty() ? "" : ",") + a;
        if (o.checkpointEvery > 0)
          tc.checkpoint = [&](const std::string &stage, unsigned epoch) {
            if (++points % o.checkpointEvery != 0 || !checkpointError.empty())
              return;
            SmallString<256> dir(o.outDir);
            sys::path::append(dir, "checkpoints", formatv("{0}-{1:D4}", stage, epoch).str());
            model->info().trainedAt = nowUtc();
            if (Error e = model->save(std::string(dir), true))
              checkpointError = toString(std::move(e));
          };
      });
  if (!policy)
    return policy.takeError();
  if (!checkpointError.empty())
    return createStringError(inconvertibleErrorCode(), "checkpoint: " + checkpointError);
  // The epochs kept (chosen before, or selected on validation now).
  sum.epochsA = sum.epochsB = sum.epochsC = 0;
  for (const policynet::CurvePoint &p : curve)
    if (p.selected)
      (p.stage == "a" ? sum.epochsA : p.stage == "b" ? sum.epochsB : sum.epochsC) = p.epoch;
  // 4. The model and its scores.
  (*policy)->info().trainedAt = nowUtc();
  if (Error e = (*policy)->save(o.outDir, true))
    return std::move(e);
  for (auto [split, out] :
       {std::pair{Split::Train, &sum.train}, std::pair{Split::Validation, &sum.validation},
        std::pair{Split::Test, &sum.test}}) {
    Dataset view;
    const Dataset *d = &data;
    if (noEffect) { // scored as it was trained: without effects
      view = data;
      for (KernelData &k : view.kernels)
        for (MeasuredPlan &p : k.plans)
          p.effect.reset();
      d = &view;
    }
    Expected<SplitScore> s = evaluatePolicy(**policy, *d, split);
    if (!s)
      return s.takeError();
    *out = *s;
  }
  for (const policynet::CurvePoint &p : curve)
    if (p.stage == "c" && p.selected) {
      sum.trainReturn = p.trainReturn;
      sum.validationReturn = p.validationReturn;
      sum.trainFound = p.trainFound;
      sum.validationFound = p.validationFound;
    }
  // 5. The curve, as text and as a plot.
  std::string text;
  raw_string_ostream os(text);
  os << "# cudal1-train stages " << (sum.stages.empty() ? "none" : sum.stages) << ", seed "
     << o.seed << ", " << chosen.epochsA << "/" << chosen.epochsB << "/" << chosen.epochsC
     << " epochs (a/b/c), " << sum.trainKernels << " train / " << sum.validationKernels
     << " validation / " << sum.testKernels << " test kernels";
  if (!(*policy)->info().ablations.empty())
    os << ", without " << (*policy)->info().ablations;
  unsigned unmeasured = 0;
  for (size_t i = 0; i < data.kernels.size(); ++i)
    if (role[i] == 0 && o.unmeasuredShare > 0)
      unmeasured += unsigned(data.kernels[i].unmeasured.size());
  os << formatv("\n# stage a: learning rate {0}, heuristic imitation weight {1}{2}; {3} unmeasured "
                "plans at share {4}\n",
                num(chosen.learningRate), num(chosen.heuristicWeight),
                anyValidation ? "" : "; validation programs trained on", unmeasured,
                num(o.unmeasuredShare));
  os << formatv("# stage c: budget {0}, turns of {1}, temperature {2:F3}, KL weight {3:F3}, "
                "penalty {4:F3}, anchor {5:F3}\n",
                o.budget, o.group, o.temperature, o.klWeight, o.penalty, o.rlAnchor);
  os << "# stage epoch train_loss validation_loss train_pair_acc validation_pair_acc train_top1 "
        "validation_top1 train_verify_acc validation_verify_acc train_return validation_return "
        "train_found validation_found kl\n";
  for (const policynet::CurvePoint &p : curve)
    os << formatv("{0} {1} {2:F5} {3:F5} {4:F3} {5:F3} {6:F3} {7:F3} {8:F3} {9:F3} {10:F4} "
                  "{11:F4} {12:F3} {13:F3} {14:F5}\n",
                  p.stage, p.epoch, p.trainLoss, p.validationLoss, p.trainPairAccuracy,
                  p.validationPairAccuracy, p.trainTop1, p.validationTop1, p.trainVerifyAccuracy,
                  p.validationVerifyAccuracy, p.trainReturn, p.validationReturn, p.trainFound,
                  p.validationFound, p.kl);
  for (const policynet::CurvePoint &p : curve)
    if (p.selected)
      os << "# kept: stage " << p.stage << " epoch " << p.epoch
         << (!selection.empty() ? selection + "\n"
             : !anyValidation   ? std::string(" (the last; no validation split)\n")
             : p.stage == "c"   ? std::string(" (highest validation return)\n")
                                : std::string(" (lowest validation loss)\n"));
  for (auto [name, s] : {std::pair{"train", &sum.train}, std::pair{"validation", &sum.validation},
                         std::pair{"test", &sum.test}})
    os << formatv("# final {0}: {1} kernels, {2} non-tied pairs, pair accuracy {3:F3}, top-1 "
                  "{4:F3}\n",
                  name, s->kernels, s->pairs, s->pairAccuracy, s->top1);
  os.flush();
  sum.curve = text;
  std::string curvePath = o.curveFile;
  if (curvePath.empty()) {
    SmallString<256> p(o.outDir);
    sys::path::append(p, "curve.txt");
    curvePath = std::string(p);
  }
  if (Error e = writeFileAtomically(curvePath, text))
    return std::move(e);
  SmallString<256> svg(curvePath);
  sys::path::replace_extension(svg, "svg");
  if (Error e =
          writeFileAtomically(std::string(svg), curveSvg(curve, text.substr(0, text.find('\n')))))
    return std::move(e);
  if (!sum.crossValidation.empty()) {
    SmallString<256> cvPath(o.outDir);
    sys::path::append(cvPath, "cv.txt");
    if (Error e = writeFileAtomically(std::string(cvPath), sum.crossValidation))
      return std::move(e);
  }
  return sum;
}

} // namespace cudal1
