// The plugin's work in apply mode, kept out of the plugin so that
// cudal1-opt --apply and the tests share it.
#include "cudal1/Apply/ApplyBest.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "cudal1/Support/AtomicFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <set>

using namespace llvm;

namespace cudal1 {
namespace {

bool isIdentChar(char c) { return isAlnum(c) || c == '_'; }

/// Whether `name` occurs in `code` as a whole identifier. A kernel defined in
/// this file must be named in it, so "no tuned name occurs" proves that no
/// kernel plan applies without parsing (templates: the name before '<').
bool namesIdentifier(StringRef code, StringRef name) {
  name = name.take_until([](char c) { return c == '<' || c == '('; }).trim();
  if (name.empty())
    return false;
  for (size_t at = code.find(name); at != StringRef::npos; at = code.find(name, at + 1)) {
    bool startOk = at == 0 || !isIdentChar(code[at - 1]);
    size_t end = at + name.size();
    bool endOk = end >= code.size() || !isIdentChar(code[end]);
    if (startOk && endOk)
      return true;
  }
  return false;
}

std::string hostKeyOf(StringRef file) { return "host:" + sys::path::filename(file).str(); }

/// The cache entry of a derivation: everything its result depends on.
std::string cacheFile(StringRef dir, const RewriteInput &in, StringRef arch, StringRef gpu,
                      ArrayRef<const TuneDB::TunedKernel *> relevant) {
  std::string text = "cudal1-apply 1\n" + in.file + "\n" + in.code + "\n";
  for (const std::string &a : in.args)
    text += a + "\n";
  text += arch.str() + "\n" + gpu.str() + "\n";
  for (const TuneDB::TunedKernel *k : relevant)
    text += k->key + "\t" + k->gpu + "\t" + k->shape + "\t" + k->plan + "\n";
  XXH128_hash_t h = xxh3_128bits(ArrayRef(reinterpret_cast<const uint8_t *>(text.data()),
                                          text.size()));
  SmallString<256> path(dir);
  sys::path::append(path, utohexstr(h.high64, true, 16) + utohexstr(h.low64, true, 16) + ".cu");
  return path.str().str();
}

} // namespace

Expected<ApplyResult> applyBestPlans(const RewriteInput &in, const ApplyOptions &o) {
  ApplyResult r;
  r.source = in.code;
  PlanLookup lookup(o.dbPath);
  auto takeWarnings = [&] {
    for (std::string &w : lookup.takeWarnings())
      r.warnings.push_back(std::move(w));
  };

  std::vector<TuneDB::TunedKernel> tuned = lookup.tunedKernels(o.gpuArch);
  takeWarnings();
  std::string arch = o.gpuArch;
  if (arch.empty()) {
    std::set<std::string> archs;
    for (const TuneDB::TunedKernel &k : tuned)
      archs.insert(k.arch);
    if (archs.size() > 1) {
      r.warnings.push_back("the tuning database '" + o.dbPath + "' has plans for " +
                           join(archs, ", ") +
                           "; say which architecture this build is for (plugin argument "
                           "arch=, cudal1-opt --gpu-arch); compiling the original code");
      return r;
    }
    if (!archs.empty())
      arch = *archs.begin();
  }
  std::string hostKey = hostKeyOf(in.file);
  std::vector<const TuneDB::TunedKernel *> relevant;
  // A choice of the empty plan (tuned, kept as is) needs no parse.
  for (const TuneDB::TunedKernel &k : tuned)
    if (!k.plan.empty() &&
        (k.key == hostKey ||
         (!StringRef(k.key).starts_with("host:") && namesIdentifier(in.code, k.name))))
      relevant.push_back(&k);
  if (relevant.empty())
    return r;

  std::string cached;
  if (!o.cacheDir.empty()) {
    cached = cacheFile(o.cacheDir, in, arch, o.gpuName, relevant);
    if (ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(cached)) {
      r.source = (*buf)->getBuffer().str();
      r.changed = r.source != in.code;
      r.cached = true;
      return r;
    }
  }
  // Whatever the derivation gives is cached, unchanged sources too.
  auto remember = [&](ApplyResult &res) -> ApplyResult & {
    if (!cached.empty()) {
      std::error_code ec = sys::fs::create_directories(o.cacheDir);
      Error e = ec ? createStringError(ec, "cannot create '%s'", o.cacheDir.c_str())
                   : writeFileAtomically(cached, res.source);
      if (e)
        res.warnings.push_back("derived source not cached: " + toString(std::move(e)));
    }
    return res;
  };

  r.parsed = true;
  Expected<std::unique_ptr<ParsedUnit>> unit = ParsedUnit::parse(in.file, in.code, in.args);
  if (!unit)
    return unit.takeError();

  // Kernels in source order, the host code's plan last (the order the tuner
  // verified combinations in).
  std::vector<AppliedPlan> found;
  auto consider = [&](const std::string &name, const std::string &key) {
    BestQuery q;
    q.kernelKey = key;
    q.gpuArch = arch;
    q.gpuName = o.gpuName;
    if (std::optional<BestChoice> c = lookup.find(q))
      if (!c->plan.empty())
        found.push_back({name, key, c->plan, c->speedup, c->speedupLo, c->speedupHi});
  };
  for (const Kernel &k : (*unit)->model().kernels)
    consider(k.name, k.key);
  consider("(host)", hostKey);
  takeWarnings();
  if (found.empty())
    return remember(r);

  std::vector<std::string> plans;
  std::vector<double> certainty;
  for (const AppliedPlan &p : found) {
    plans.push_back(p.plan);
    certainty.push_back(p.lo.value_or(0));
  }
  std::string all;
  for (const std::string &p : plans)
    all += (all.empty() ? "" : "; ") + p;
  Expected<std::string> together = derivePlan(in, all);
  if (together) {
    r.source = std::move(*together);
    r.applied = std::move(found);
    r.changed = true;
    return remember(r);
  }
  consumeError(together.takeError());

  // Some plan no longer applies, or two conflict: keep the best ones that
  // apply together, most certain first, as the tuner combined them.
  PlanCombination c = combinePlans(in, plans, certainty, [&](size_t i, Error e) {
    const AppliedPlan &p = found[i];
    r.warnings.push_back("the tuned plan of " +
                         (p.kernel == "(host)" ? std::string("the host code")
                                               : "kernel '" + p.kernel + "'") +
                         " ('" + p.plan + "') was not applied: " + toString(std::move(e)));
  });
  if (!c.kept.empty()) {
    r.source = std::move(c.source);
    for (size_t j : c.kept)
      r.applied.push_back(found[j]);
    r.changed = true;
  }
  return remember(r);
}

} // namespace cudal1
