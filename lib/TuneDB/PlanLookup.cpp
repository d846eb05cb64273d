// What does not depend on SQLite: the plugin's fail-open lookup, the
// summary text and the default path (the same whether or not SQLite was
// found: without it, every open fails and the lookup says so).
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>

using namespace llvm;

namespace cudal1 {

std::string formatTuneDBStats(const TuneDBStats &st, StringRef path) {
  std::string out;
  raw_string_ostream os(out);
  os << "tuning database: " << path << "\n";
  os << "schema version: " << st.schemaVersion << "\n";
  os << "kernels: " << st.kernels << "\n";
  os << "plans: " << st.plans << "\n";
  os << "variants: " << st.variants << "\n";
  os << "measurements: " << st.measurements << "\n";
  for (const auto &[outcome, n] : st.measurementsByOutcome)
    os << "  " << outcome << ": " << n << "\n";
  if (!st.measurementsByJudge.empty()) {
    os << "measurements by judge:";
    for (const auto &[judge, n] : st.measurementsByJudge)
      os << " " << judge << "=" << n;
    os << "\n";
  }
  os << "best choices: " << st.best;
  if (st.bestOriginal)
    os << " (" << st.bestOriginal << " keep the original)";
  os << "\n";
  for (const TuneDBStats::PerGpu &g : st.perGpu)
    os << "  " << g.gpu.name << " (" << g.gpu.arch << "): " << g.best << " best, " << g.measurements
       << " measurements\n";
  return out;
}

std::string defaultTuneDBPath() {
  if (const char *db = std::getenv("CUDAL1_DB"); db && *db)
    return db;
  SmallString<256> p;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    p = xdg;
  else if (const char *home = std::getenv("HOME"); home && *home)
    sys::path::append(p, home, ".cache");
  else
    return "cudal1-tune.db";
  sys::path::append(p, "cudal1", "tune.db");
  return std::string(p);
}

unsigned countPlanSteps(StringRef plan) {
  unsigned steps = 0, depth = 0;
  bool inStep = false;
  for (char c : plan) {
    if (c == '(')
      ++depth;
    else if (c == ')' && depth)
      --depth;
    if (c == ';' && !depth) {
      inStep = false;
      continue;
    }
    if (!inStep && !isSpace(c)) {
      inStep = true;
      ++steps;
    }
  }
  return steps;
}

const TuneDB::TunedKernel *chooseBest(ArrayRef<TuneDB::TunedKernel> tuned, const BestQuery &q) {
  // The order of TuneDB::bestPlan's query: the exact shape before `*`, then
  // the highest lower bound (none last), the latest choice, the GPU's name.
  auto better = [&](const TuneDB::TunedKernel &a, const TuneDB::TunedKernel &b) {
    bool ae = a.shape == q.shape, be = b.shape == q.shape;
    if (ae != be)
      return ae;
    if (a.speedupLo.has_value() != b.speedupLo.has_value())
      return a.speedupLo.has_value();
    if (a.speedupLo && *a.speedupLo != *b.speedupLo)
      return *a.speedupLo > *b.speedupLo;
    if (a.chosenAt != b.chosenAt)
      return a.chosenAt > b.chosenAt;
    return a.gpu < b.gpu;
  };
  const TuneDB::TunedKernel *best = nullptr;
  for (const TuneDB::TunedKernel &k : tuned) {
    if (k.key != q.kernelKey || k.arch != q.gpuArch || (!q.gpuName.empty() && k.gpu != q.gpuName) ||
        (k.shape != q.shape && k.shape != kAnyShape))
      continue;
    if (!best || better(k, *best))
      best = &k;
  }
  return best;
}

PlanLookup::PlanLookup(std::string path, unsigned busyTimeoutMs, unsigned queryTimeoutMs)
    : path(std::move(path)), busyTimeoutMs(busyTimeoutMs), queryTimeoutMs(queryTimeoutMs) {}

void PlanLookup::warn(std::string w) {
  if (std::find(warnings.begin(), warnings.end(), w) == warnings.end())
    warnings.push_back(std::move(w));
}

bool PlanLookup::open() {
  if (!tried) {
    tried = true;
    TuneDBOptions o;
    o.mode = TuneDBMode::ReadOnly;
    o.busyTimeoutMs = busyTimeoutMs;
    o.queryTimeoutMs = queryTimeoutMs;
    Expected<TuneDB> opened = TuneDB::open(path, o);
    if (!opened)
      warn(toString(opened.takeError()) + "; compiling the original code");
    else
      db.emplace(std::move(*opened));
  }
  return db.has_value();
}

std::optional<BestChoice> PlanLookup::find(const BestQuery &query) {
  if (!open())
    return std::nullopt;
  Expected<std::optional<BestChoice>> found = db->bestPlan(query);
  if (!found) {
    warn(toString(found.takeError()) + "; compiling the original code");
    return std::nullopt;
  }
  return std::move(*found);
}

std::vector<TuneDB::TunedKernel> PlanLookup::tunedKernels(StringRef gpuArch) {
  if (!open())
    return {};
  Expected<std::vector<TuneDB::TunedKernel>> ks = db->tunedKernels(gpuArch);
  if (!ks) {
    warn(toString(ks.takeError()) + "; compiling the original code");
    return {};
  }
  return std::move(*ks);
}

std::vector<std::string> PlanLookup::takeWarnings() { return std::exchange(warnings, {}); }

} // namespace cudal1
