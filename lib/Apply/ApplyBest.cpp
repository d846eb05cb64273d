// The plugin's work in apply mode, kept out of the plugin so that
// cudal1-opt --apply and the tests share it.
#include "cudal1/Apply/ApplyBest.h"
#include "Bounded.h"
#include "cudal1/Frontend/Frontend.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/Support/AtomicFile.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <set>

using namespace llvm;

namespace cudal1 {
namespace {

using TunedKernel = TuneDB::TunedKernel;

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

bool isHostKey(StringRef key) { return key.starts_with("host:"); }

std::string optText(const std::optional<double> &v) {
  return v ? std::to_string(*v) : std::string("-");
}

/// The cache entry of a derivation: everything its result depends on (the
/// unit's text with its included .cu files inlined: an edit of one of them
/// is a new entry).
std::string cacheFile(StringRef dir, const RewriteInput &in, StringRef unitText, StringRef arch,
                      StringRef gpu, ArrayRef<TunedKernel> relevant) {
  std::string text = "cudal1-apply 3\n" + in.file + "\n" + unitText.str() + "\n";
  for (const std::string &a : in.args)
    text += a + "\n";
  text += arch.str() + "\n" + gpu.str() + "\n";
  for (const TunedKernel &k : relevant)
    text += k.key + "\t" + k.gpu + "\t" + k.shape + "\t" + k.plan + "\t" + k.refused + "\t" +
            optText(k.speedupLo) + "\t" + k.chosenAt + "\n";
  XXH128_hash_t h =
      xxh3_128bits(ArrayRef(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  SmallString<256> path(dir);
  sys::path::append(path,
                    utohexstr(h.high64, true, 16) + utohexstr(h.low64, true, 16) + ".derived");
  return path.str().str();
}

//===----------------------------------------------------------------------===//
// A derivation's result as bytes: what the cache holds and what a bounded
// child sends back. Records "TAG LENGTH\n" + LENGTH bytes + "\n".
//===----------------------------------------------------------------------===//

constexpr StringLiteral kMagic = "cudal1-derivation 1\n";

void putRecord(std::string &out, StringRef tag, StringRef bytes) {
  out += tag;
  out += ' ';
  out += std::to_string(bytes.size());
  out += '\n';
  out += bytes;
  out += '\n';
}

std::string serialize(const ApplyResult &r, StringRef error) {
  std::string out(kMagic);
  putRecord(out, "changed", r.changed ? "1" : "0");
  putRecord(out, "parsed", r.parsed ? "1" : "0");
  for (const AppliedPlan &p : r.applied) {
    putRecord(out, "kernel", p.kernel);
    putRecord(out, "key", p.key);
    putRecord(out, "plan", p.plan);
    putRecord(out, "speedup", optText(p.speedup) + " " + optText(p.lo) + " " + optText(p.hi));
  }
  for (const std::string &w : r.warnings)
    putRecord(out, "warning", w);
  if (!error.empty())
    putRecord(out, "error", error);
  putRecord(out, "source", r.source);
  return out;
}

std::optional<double> parseOpt(StringRef s) {
  double v;
  if (s == "-" || s.getAsDouble(v))
    return std::nullopt;
  return v;
}

/// False for anything but a complete entry (a cache entry is re-derived).
bool deserialize(StringRef in, ApplyResult &r, std::string &error) {
  if (!in.consume_front(kMagic))
    return false;
  bool sawSource = false;
  while (!in.empty()) {
    auto [head, rest] = in.split('\n');
    auto [tag, lenText] = head.split(' ');
    size_t len;
    if (lenText.getAsInteger(10, len) || rest.size() < len + 1 || rest[len] != '\n')
      return false;
    StringRef bytes = rest.take_front(len);
    in = rest.drop_front(len + 1);
    if (tag == "changed")
      r.changed = bytes == "1";
    else if (tag == "parsed")
      r.parsed = bytes == "1";
    else if (tag == "kernel")
      r.applied.push_back({bytes.str(), "", "", {}, {}, {}});
    else if (tag == "key" && !r.applied.empty())
      r.applied.back().key = bytes.str();
    else if (tag == "plan" && !r.applied.empty())
      r.applied.back().plan = bytes.str();
    else if (tag == "speedup" && !r.applied.empty()) {
      SmallVector<StringRef, 3> parts;
      bytes.split(parts, ' ');
      if (parts.size() == 3) {
        r.applied.back().speedup = parseOpt(parts[0]);
        r.applied.back().lo = parseOpt(parts[1]);
        r.applied.back().hi = parseOpt(parts[2]);
      }
    } else if (tag == "warning")
      r.warnings.push_back(bytes.str());
    else if (tag == "error")
      error = bytes.str();
    else if (tag == "source") {
      r.source = bytes.str();
      sawSource = true;
    } else
      return false;
  }
  return sawSource;
}

//===----------------------------------------------------------------------===//
// Which rows may apply
//===----------------------------------------------------------------------===//

std::string rowName(const TunedKernel &row, StringRef kernel) {
  std::string who =
      kernel == "(host)" ? std::string("the host code") : "kernel '" + kernel.str() + "'";
  return "the best choice of " + who + " (key " + row.key + ", " + row.gpu + " " + row.arch + ")";
}

std::string scopeText(const PlanScope &s) {
  if (s.launch >= 0)
    return "@#" + std::to_string(s.launch);
  if (s.loop >= 0)
    return "@loop#" + std::to_string(s.loop);
  if (s.sync >= 0)
    return "@sync#" + std::to_string(s.sync);
  if (s.copy >= 0)
    return "@copy#" + std::to_string(s.copy);
  if (!s.kernel.empty())
    return "@" + s.kernel;
  return "(no scope)";
}

/// Why a step of a row does not belong to the row's own key, or "". A
/// kernel's row holds steps of that kernel and its launches only; the host
/// code's row holds host loops, synchronizations and copies only.
std::string foreignStep(const Plan &plan, const ProgramModel &m, const Kernel *kernel) {
  for (const PlanStep &st : plan.steps) {
    const PlanScope &s = st.scope;
    bool ok;
    if (!kernel) {
      ok = s.kernel.empty() && s.launch < 0 && (s.loop >= 0 || s.sync >= 0 || s.copy >= 0);
    } else if (s.loop >= 0 || s.sync >= 0 || s.copy >= 0) {
      ok = false;
    } else if (s.launch >= 0) {
      ok = s.kernel.empty() && size_t(s.launch) < m.launches.size() &&
           m.launches[s.launch].kernelIndex >= 0 &&
           m.kernels[m.launches[s.launch].kernelIndex].key == kernel->key;
    } else {
      ok = s.kernel == kernel->name;
    }
    if (!ok)
      return "its step '" + scopeText(s) + ": " + st.transform + "' is not " +
             (kernel ? "a step of that kernel or of its launches" : "a step of host code");
  }
  return "";
}

/// Phase 2: parse, choose each kernel's and the host code's row, check that
/// each row's steps belong to it, and derive. No database access: it may
/// run in a child process.
ApplyResult derive(const RewriteInput &in, StringRef arch, StringRef gpuName,
                   ArrayRef<TunedKernel> relevant, std::string &error) {
  ApplyResult r;
  r.source = in.code;
  r.parsed = true;
  Expected<std::unique_ptr<ParsedUnit>> unit = ParsedUnit::parse(in.file, in.code, in.args);
  if (!unit) {
    error = toString(unit.takeError());
    return r;
  }
  const ProgramModel &model = (*unit)->model();

  // Kernels in source order, the host code's plan last (the order the tuner
  // verified combinations in).
  std::vector<AppliedPlan> found;
  auto consider = [&](StringRef name, const std::string &key, const Kernel *kernel) {
    BestQuery q;
    q.kernelKey = key;
    q.gpuArch = arch.str();
    q.gpuName = gpuName.str();
    const TunedKernel *row = chooseBest(relevant, q);
    if (!row)
      return;
    if (!row->refused.empty()) {
      r.warnings.push_back(rowName(*row, name) + " was skipped: " + row->refused);
      return;
    }
    if (row->plan.empty())
      return; // tuned, kept as is
    Expected<Plan> plan = parsePlan(row->plan);
    if (!plan) {
      r.warnings.push_back(rowName(*row, name) + " was skipped: " + toString(plan.takeError()));
      return;
    }
    if (plan->steps.size() > kMaxPlanSteps) {
      r.warnings.push_back(rowName(*row, name) + " was skipped: it has " +
                           std::to_string(plan->steps.size()) + " steps, more than " +
                           std::to_string(kMaxPlanSteps));
      return;
    }
    if (std::string why = foreignStep(*plan, model, kernel); !why.empty()) {
      r.warnings.push_back(rowName(*row, name) + " was skipped: " + why);
      return;
    }
    found.push_back({name.str(), key, row->plan, row->speedup, row->speedupLo, row->speedupHi});
  };
  std::set<std::string> seen;
  for (const Kernel &k : model.kernels)
    if (seen.insert(k.key).second)
      consider(k.name, k.key, &k);
  consider("(host)", hostCodeKey(model), nullptr);
  // A host row of this very path with another hash was measured on host
  // code that has changed since: say so once (a changed kernel falls back
  // silently, since another file's kernel may share its name; a path cannot).
  for (const TunedKernel &row : relevant)
    if (isHostKey(row.key) && row.key != hostCodeKey(model)) {
      r.warnings.push_back("the host code of '" + in.file + "' changed since it was tuned (" +
                           rowName(row, "(host)") +
                           " was measured on other code); its host plan is not applied until "
                           "it is tuned again");
      break;
    }
  if (found.empty())
    return r;

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
    return r;
  }
  consumeError(together.takeError());

  // Some plan no longer applies, or two conflict: keep the best ones that
  // apply together, most certain first, as the tuner combined them.
  PlanCombination c = combinePlans(in, plans, certainty, [&](size_t i, Error e) {
    const AppliedPlan &p = found[i];
    r.warnings.push_back(
        "the tuned plan of " +
        (p.kernel == "(host)" ? std::string("the host code") : "kernel '" + p.kernel + "'") +
        " ('" + p.plan + "') was not applied: " + toString(std::move(e)));
  });
  if (!c.kept.empty()) {
    r.source = std::move(c.source);
    for (size_t j : c.kept)
      r.applied.push_back(found[j]);
    r.changed = true;
  }
  return r;
}

} // namespace

Expected<ApplyResult> applyBestPlans(const RewriteInput &in, const ApplyOptions &o) {
  ApplyResult r;
  r.source = in.code;
  if (o.checkArgs)
    if (Error e = checkClangArgs(in.file, in.args))
      return std::move(e);

  // 1. The database, read once and closed again before anything else (a
  //    bounded derivation forks, and a child may not share a connection).
  std::vector<TunedKernel> tuned;
  {
    PlanLookup lookup(o.dbPath);
    tuned = lookup.tunedKernels(o.gpuArch);
    for (std::string &w : lookup.takeWarnings())
      r.warnings.push_back(std::move(w));
  }
  std::string arch = o.gpuArch;
  if (arch.empty()) {
    std::set<std::string> archs;
    for (const TunedKernel &k : tuned)
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

  // 2. Without a parse: could any row apply? A kernel's name must occur in
  //    the file or a .cu file it includes (which the parse inlines), a host
  //    row's key must name this file. A choice of the empty plan (tuned,
  //    kept as is) needs nothing.
  std::string hostPrefix = hostKeyPrefix(in.file);
  const std::string unitText = inlineIncludedSources(in.file, in.code).code;
  std::vector<TunedKernel> relevant;
  for (const TunedKernel &k : tuned)
    if ((!k.plan.empty() || !k.refused.empty()) && k.arch == arch &&
        (isHostKey(k.key) ? StringRef(k.key).starts_with(hostPrefix)
                          : namesIdentifier(unitText, k.name)))
      relevant.push_back(k);
  if (relevant.empty())
    return r;

  // 3. A derivation cached earlier, with its warnings.
  std::string cached;
  if (!o.cacheDir.empty()) {
    cached = cacheFile(o.cacheDir, in, unitText, arch, o.gpuName, relevant);
    if (ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(cached)) {
      ApplyResult c;
      std::string error;
      if (deserialize((*buf)->getBuffer(), c, error)) {
        c.cached = true;
        if (!error.empty())
          return createStringError(inconvertibleErrorCode(), error);
        r.warnings.insert(r.warnings.end(), c.warnings.begin(), c.warnings.end());
        c.warnings = std::move(r.warnings);
        return c;
      }
    }
  }

  // 4. Derive, within the budget where there is one.
  std::string error;
  ApplyResult d;
  if (o.budgetMs) {
    Expected<std::string> bytes = runBounded(
        [&] {
          std::string err;
          ApplyResult res = derive(in, arch, o.gpuName, relevant, err);
          return serialize(res, err);
        },
        o.budgetMs);
    if (!bytes || !deserialize(*bytes, d, error)) {
      std::string why = bytes ? "gave no readable answer" : toString(bytes.takeError());
      d = ApplyResult();
      d.source = in.code;
      d.parsed = true;
      d.warnings.push_back("deriving the tuned source " + why + "; compiling the original code");
      error.clear();
    }
  } else {
    d = derive(in, arch, o.gpuName, relevant, error);
  }

  // 5. Whatever the derivation gave is cached, warnings and failures too.
  if (!cached.empty()) {
    std::error_code ec = sys::fs::create_directories(o.cacheDir);
    Error e = ec ? createStringError(ec, "cannot create '%s'", o.cacheDir.c_str())
                 : writeFileAtomically(cached, serialize(d, error));
    if (e)
      r.warnings.push_back("derived source not cached: " + toString(std::move(e)));
  }
  if (!error.empty())
    return createStringError(inconvertibleErrorCode(), error);
  r.warnings.insert(r.warnings.end(), d.warnings.begin(), d.warnings.end());
  d.warnings = std::move(r.warnings);
  return d;
}

} // namespace cudal1
