// Program-level evaluation: build, verify by output, time in rounds.
#include "cudal1/Eval/ProgramEval.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Process.h"
#include "cudal1/Eval/Stats.h"
#include "cudal1/Eval/Verify.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

namespace cudal1 {

namespace {

/// Rounds before racing may drop a variant: enough for a bucketed
/// bootstrap interval to mean something.
constexpr int kMinRoundsBeforeRacing = 6;

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::vector<std::string> expand(const std::vector<std::string> &words, const std::string &src,
                                const std::string &exe, const std::string &bundleDir) {
  return substitutePlaceholders(words, {{"{src}", src}, {"{exe}", exe}, {"{bundle}", bundleDir}});
}

std::string tail(const std::string &text, size_t lines) {
  size_t pos = text.size();
  for (size_t n = 0; n <= lines && pos > 0; ++n) {
    size_t p = text.rfind('\n', pos - 1);
    if (p == std::string::npos) {
      pos = 0;
      break;
    }
    pos = p;
  }
  std::string t = text.substr(pos);
  while (!t.empty() && (t[0] == '\n'))
    t.erase(0, 1);
  return t;
}

/// A line cut into the text between numbers and the numbers themselves. A
/// number is delimited by non-word characters on both sides, so "sm_90" and
/// "l1_relu" stay text.
struct Tokens {
  std::string skeleton; ///< text with each number replaced by '#'
  std::vector<std::string> numbers;
};

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

Tokens tokenize(const std::string &line) {
  Tokens t;
  size_t i = 0;
  while (i < line.size()) {
    bool boundary = i == 0 || !isWordChar(line[i - 1]);
    char c = line[i];
    bool mayStart = std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' ||
                    c == '.' || c == 'n' || c == 'N' || c == 'i' || c == 'I';
    if (boundary && mayStart) {
      const char *begin = line.c_str() + i;
      char *end = nullptr;
      std::strtod(begin, &end);
      size_t len = size_t(end - begin);
      if (len > 0 &&
          (i + len == line.size() || !isWordChar(line[i + len]) || line[i + len] == '.')) {
        t.skeleton += '#';
        t.numbers.push_back(line.substr(i, len));
        i += len;
        continue;
      }
    }
    t.skeleton += c;
    ++i;
  }
  return t;
}

/// Line `l` of each run that has the shape of `like` (same text between the
/// numbers, as many numbers): the runs a number's spread is taken over.
std::vector<Tokens> sameShapeLines(const std::vector<std::vector<std::string>> &runs, size_t l,
                                   const Tokens &like) {
  std::vector<Tokens> out;
  for (const std::vector<std::string> &run : runs)
    if (l < run.size()) {
      Tokens t = tokenize(run[l]);
      if (t.skeleton == like.skeleton && t.numbers.size() == like.numbers.size())
        out.push_back(std::move(t));
    }
  return out;
}

bool looksIntegral(const std::string &s) {
  return s.find_first_of(".eEnNiIxX") == std::string::npos;
}

/// "" when two outputs have the same lines with the same text between
/// their numbers; else the first difference.
std::string shapeDifference(const std::vector<std::string> &a, const std::vector<std::string> &b) {
  if (a.size() != b.size())
    return std::to_string(b.size()) + " compared lines, the original " + std::to_string(a.size());
  for (size_t l = 0; l < a.size(); ++l) {
    Tokens x = tokenize(a[l]), y = tokenize(b[l]);
    if (x.skeleton != y.skeleton || x.numbers.size() != y.numbers.size())
      return "line " + std::to_string(l + 1) + ": '" + b[l] + "', the original '" + a[l] + "'";
  }
  return "";
}

} // namespace

ProgramOutput splitProgramOutput(const std::string &text, const ProgramBundle &b) {
  ProgramOutput out;
  std::regex timeRe, ignoreRe;
  bool haveTimeRe = !b.timeRegex.empty(), haveIgnore = !b.ignoreRegex.empty();
  if (haveTimeRe)
    timeRe = std::regex(b.timeRegex);
  if (haveIgnore)
    ignoreRe = std::regex(b.ignoreRegex);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (haveTimeRe && std::regex_search(line, m, timeRe)) {
      if (!out.haveTime && m.size() > 1) {
        char *end = nullptr;
        std::string v = m[1].str();
        double ms = std::strtod(v.c_str(), &end);
        if (end != v.c_str() && std::isfinite(ms) && ms >= 0) {
          out.haveTime = true;
          out.timeMs = ms;
        }
      }
      continue;
    }
    if (haveIgnore && std::regex_search(line, ignoreRe))
      continue;
    out.lines.push_back(line);
  }
  return out;
}

bool compareProgramOutputs(const std::vector<std::string> &first,
                           const std::vector<std::string> &second,
                           const std::vector<std::string> &variant, double rel, double abs,
                           std::vector<std::string> &mismatches, size_t maxMismatches) {
  return compareWithOriginalRuns(first, {second}, variant, rel, abs, mismatches, maxMismatches);
}

bool compareWithOriginalRuns(const std::vector<std::string> &first,
                             const std::vector<std::vector<std::string>> &others,
                             const std::vector<std::string> &variant, double rel, double abs,
                             std::vector<std::string> &mismatches, size_t maxMismatches) {
  bool pass = true;
  auto bad = [&](std::string what) {
    pass = false;
    if (mismatches.size() < maxMismatches)
      mismatches.push_back(std::move(what));
  };
  if (variant.size() != first.size()) {
    bad("printed " + std::to_string(variant.size()) +
        " compared lines, the "
        "original " +
        std::to_string(first.size()));
    return false;
  }
  for (size_t l = 0; l < first.size(); ++l) {
    Tokens o = tokenize(first[l]), v = tokenize(variant[l]);
    std::string where = "line " + std::to_string(l + 1);
    if (o.skeleton != v.skeleton || o.numbers.size() != v.numbers.size()) {
      bad(where + ": expected '" + first[l] + "', got '" + variant[l] + "'");
      continue;
    }
    // The other runs of the original with this line's shape.
    std::vector<Tokens> runs = sameShapeLines(others, l, o);
    for (size_t k = 0; k < o.numbers.size(); ++k) {
      double x = std::strtod(o.numbers[k].c_str(), nullptr);
      double y = std::strtod(v.numbers[k].c_str(), nullptr);
      double spread = 0;
      for (const Tokens &t : runs) {
        double x2 = std::strtod(t.numbers[k].c_str(), nullptr);
        if (std::isfinite(x2) && std::isfinite(x))
          spread = std::max(spread, std::fabs(x2 - x));
      }
      std::string item = where + " number " + std::to_string(k + 1) + ": expected " + o.numbers[k] +
                         ", got " + v.numbers[k];
      if (!std::isfinite(x) || !std::isfinite(y)) {
        bool same = std::isnan(x) ? std::isnan(y) : x == y;
        if (!same)
          bad(item + " (NaN/Inf must match the original's)");
        continue;
      }
      if (looksIntegral(o.numbers[k]) && looksIntegral(v.numbers[k]) && spread == 0) {
        if (x != y)
          bad(item + " (integers compare exactly)");
        continue;
      }
      double allowed = std::max(rel * std::max(std::fabs(x), std::fabs(y)), 4 * spread) + abs;
      if (std::fabs(x - y) > allowed)
        bad(item + ", allowed +-" + formatDouble(allowed));
    }
  }
  return pass;
}

double printedUnit(const std::string &number) {
  char *end = nullptr;
  double v = std::strtod(number.c_str(), &end);
  if (end == number.c_str() || !std::isfinite(v))
    return 0;
  // Digits after the point of the mantissa, then the exponent.
  size_t e = number.find_first_of("eE");
  std::string mantissa = number.substr(0, e);
  int exponent = 0;
  if (e != std::string::npos)
    exponent = std::atoi(number.c_str() + e + 1);
  size_t dot = mantissa.find('.');
  int decimals = dot == std::string::npos ? 0 : int(mantissa.size() - dot - 1);
  return std::pow(10.0, exponent - decimals);
}

bool compareWithReference(const std::vector<std::string> &reference,
                          const std::vector<std::vector<std::string>> &originalRuns,
                          const std::vector<std::string> &variant, const ReferenceRule &rule,
                          std::vector<std::string> &mismatches, size_t maxMismatches) {
  bool pass = true;
  auto bad = [&](std::string what) {
    pass = false;
    if (mismatches.size() < maxMismatches)
      mismatches.push_back(std::move(what));
  };
  if (variant.size() != reference.size()) {
    bad("printed " + std::to_string(variant.size()) + " compared lines, the reference program " +
        std::to_string(reference.size()));
    return false;
  }
  // 1. Every printed number with the original's error there (its largest
  // over its runs). A family is the numbers at one position of the lines of
  // one shape ("row # sum=#": the sums of all rows): the replay rule's
  // buffer, over which the original's error is pooled.
  struct Number {
    size_t line = 0, index = 0;
    double x = 0, y = 0, errO = 0;
    bool integral = false, originalFinite = true, likeOriginal = false;
    std::string family, item, xText, yText;
  };
  std::vector<Number> numbers;
  for (size_t l = 0; l < reference.size(); ++l) {
    Tokens r = tokenize(reference[l]), v = tokenize(variant[l]);
    std::string where = "line " + std::to_string(l + 1);
    if (r.skeleton != v.skeleton || r.numbers.size() != v.numbers.size()) {
      bad(where + ": expected '" + reference[l] + "' (reference program), got '" + variant[l] +
          "'");
      continue;
    }
    std::vector<Tokens> runs = sameShapeLines(originalRuns, l, r);
    for (size_t k = 0; k < r.numbers.size(); ++k) {
      Number n;
      n.line = l;
      n.index = k;
      n.x = std::strtod(r.numbers[k].c_str(), nullptr);
      n.y = std::strtod(v.numbers[k].c_str(), nullptr);
      n.xText = r.numbers[k];
      n.yText = v.numbers[k];
      n.family = r.skeleton + "\n" + std::to_string(k);
      n.item = where + " number " + std::to_string(k + 1) + ": expected " + r.numbers[k] +
               " (reference program), got " + v.numbers[k];
      n.integral = looksIntegral(r.numbers[k]) && looksIntegral(v.numbers[k]);
      for (const Tokens &t : runs) {
        double o = std::strtod(t.numbers[k].c_str(), nullptr);
        n.integral &= looksIntegral(t.numbers[k]);
        if (!std::isfinite(o)) {
          n.originalFinite = false;
          n.likeOriginal |= std::isnan(o) ? std::isnan(n.y) : o == n.y;
          continue;
        }
        if (std::isfinite(n.x))
          n.errO = std::max(n.errO, std::fabs(o - n.x));
      }
      numbers.push_back(std::move(n));
    }
  }
  auto judged = [](const Number &n) {
    return std::isfinite(n.x) && std::isfinite(n.y) && n.originalFinite && !n.integral;
  };
  std::map<std::string, std::vector<const Number *>> families;
  for (const Number &n : numbers)
    if (judged(n))
      families[n.family].push_back(&n);
  std::map<std::string, PooledError> pools;
  for (const auto &[family, members] : families) {
    std::vector<double> errs, refs;
    for (const Number *n : members) {
      errs.push_back(n->errO);
      refs.push_back(n->x);
    }
    pools[family] = poolError(errs, refs);
  }
  std::set<std::string> failedFamilies;
  // 2. Each number: k times the larger of its own and its family's pooled
  // error, plus the floors; integers (every spelling integral) k alone.
  for (const Number &n : numbers) {
    if (!std::isfinite(n.x) || !std::isfinite(n.y)) {
      bool same = std::isnan(n.x) ? std::isnan(n.y) : n.x == n.y;
      if (!same && !n.likeOriginal)
        bad(n.item + " (NaN/Inf must match the reference's or the original's)");
      continue;
    }
    if (!n.originalFinite)
      continue; // the original itself is not finite here: any finite value
    double allowed = rule.k * n.errO;
    if (!n.integral)
      allowed = rule.k * std::max(n.errO, pools[n.family].at(n.x)) + rule.rel * std::fabs(n.x) +
                rule.abs + std::max(printedUnit(n.xText), printedUnit(n.yText));
    if (std::fabs(n.y - n.x) > allowed) {
      failedFamilies.insert(n.family);
      bad(n.item + ", allowed +-" + formatDouble(allowed) + " (the original's error " +
          formatDouble(n.errO) + ")");
    }
  }
  // 3. Each family's RMS error, as in replay: a variant worse than the
  // original on every number of a family, each inside the pooled allowance
  // (said only where no number failed already; one number is step 2 again).
  for (const auto &[family, members] : families) {
    if (members.size() < 2 || failedFamilies.count(family))
      continue;
    RmsErrors rms;
    double unit = 0;
    for (const Number *n : members) {
      rms.add(std::fabs(n->y - n->x), n->errO);
      unit = std::max({unit, printedUnit(n->xText), printedUnit(n->yText)});
    }
    double limit = rms.limit(rule.k, rule.rel * pools[family].magnitude + rule.abs + unit);
    if (rms.variant() > limit)
      bad("the numbers at position " + std::to_string(members.front()->index + 1) + " of line " +
          std::to_string(members.front()->line + 1) + " and its " +
          std::to_string(members.size() - 1) + " line(s) of the same shape: RMS error " +
          formatDouble(rms.variant()) + ", allowed " + formatDouble(limit) + " (the original's " +
          formatDouble(rms.original()) + ")");
  }
  return pass;
}

bool parseFloorLine(const std::string &text, double &bytes, double &flops, std::string &dtype) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("floor: ", 0) != 0)
      continue;
    std::istringstream ws(line.substr(7));
    std::string kv;
    bool haveBytes = false, haveFlops = false;
    dtype = "f32"; // bench/run's default when the line names none
    while (ws >> kv) {
      size_t eq = kv.find('=');
      if (eq == std::string::npos)
        continue;
      std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
      char *end = nullptr;
      double d = std::strtod(v.c_str(), &end);
      bool number = !v.empty() && end && *end == 0 && std::isfinite(d) && d >= 0;
      if (k == "bytes" && number) {
        bytes = d;
        haveBytes = true;
      } else if (k == "flops" && number) {
        flops = d;
        haveFlops = true;
      } else if (k == "dtype") {
        dtype = v;
      }
    }
    return haveBytes && haveFlops;
  }
  return false;
}

std::string queryGpuName() {
  ProcessResult p =
      runProcess({"nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"}, 20);
  if (!(p.exited && p.exitCode == 0))
    return "";
  return p.output.substr(0, p.output.find('\n'));
}

ProgramBuildCache::~ProgramBuildCache() {
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec); // best effort: a temporary directory
  }
}

std::string ProgramBuildCache::find(const std::string &key) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = exes.find(key);
  if (it == exes.end())
    return "";
  ++hitCount;
  return it->second;
}

std::string ProgramBuildCache::insert(const std::string &key, const std::string &exe) {
  std::lock_guard<std::mutex> lock(mutex);
  ++buildCount;
  if (auto it = exes.find(key); it != exes.end())
    return it->second; // built twice at once (two batches): keep the first
  if (dir.empty()) {
    Expected<std::string> d = makeTempDirectory("cudal1-builds");
    if (!d.ok())
      return "";
    dir = *d;
  }
  std::string to = dir + "/" + std::to_string(exes.size()) + ".exe";
  std::error_code ec;
  std::filesystem::rename(exe, to, ec);
  if (ec)
    return "";
  exes[key] = to;
  return to;
}

std::string programBuildKey(const std::vector<std::string> &buildCommand,
                            const std::vector<std::string> &links, const std::string &source) {
  std::string how;
  for (const std::string &w : buildCommand)
    how += w + '\0';
  how += "links";
  for (const std::string &l : links)
    how += '\0' + l;
  return variantHash(how, source);
}

namespace {

/// One program built (or found built) for a bundle's variant.
struct BuiltProgram {
  bool ok = false;
  bool cached = false;
  std::string exe;
  std::string hash; ///< measuredHash of the source built
  std::string key;  ///< programBuildKey
  std::string error;
  double seconds = 0;
};

BuiltProgram buildProgram(const ProgramBundle &b, const ProgramVariant &v, const std::string &work,
                          ProgramBuildCache *cache) {
  BuiltProgram out;
  std::string source;
  if (Expected<std::vector<uint8_t>> src = readWholeFile(b.path(v.source)); src.ok()) {
    source.assign(src->begin(), src->end());
    out.hash = measuredHash(v.hash, source);
  } else {
    out.error = src.error().message();
    return out;
  }
  std::string key = out.key = programBuildKey(b.build, v.links, source);
  if (cache)
    if (std::string exe = cache->find(key); !exe.empty()) {
      out.ok = out.cached = true;
      out.exe = exe;
      return out;
    }
  out.exe = work + "/" + v.id + ".exe";
  std::vector<std::string> cmd = expand(b.build, b.path(v.source), out.exe, b.dir);
  for (const std::string &l : v.links) // after the sources, as ld wants
    cmd.push_back("-l" + l);
  ProcessResult p = runProcess(cmd, 900);
  out.seconds = p.seconds;
  if (!(p.exited && p.exitCode == 0)) {
    out.error = tail(p.output, 6) + " (" + p.describe() + ")";
    return out;
  }
  out.ok = true;
  if (cache)
    if (std::string kept = cache->insert(key, out.exe); !kept.empty())
      out.exe = kept;
  return out;
}

} // namespace

void prebuildProgramBundle(const ProgramBundle &b, int jobs, ProgramBuildCache &cache) {
  std::vector<ProgramVariant> all = {b.original};
  all.insert(all.end(), b.variants.begin(), b.variants.end());
  Expected<std::string> work = makeTempDirectory("cudal1-prebuild");
  if (!work.ok())
    return; // evaluateProgramBundle builds them then
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < all.size();)
      buildProgram(b, all[i], *work, &cache);
  };
  int parallel = jobs > 0 ? jobs : int(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (int t = 0; t < std::min<int>(parallel, int(all.size())); ++t)
    threads.emplace_back(worker);
  for (std::thread &t : threads)
    t.join();
  std::error_code ec;
  std::filesystem::remove_all(*work, ec); // what built is in the cache now
}

Expected<EvalResults> evaluateProgramBundle(const ProgramBundle &b,
                                            const ProgramEvalOptions &opts) {
  auto start = Clock::now();
  auto progress = [&](const std::string &m) {
    if (opts.progress)
      opts.progress(m);
  };
  EvalResults res;
  res.bundle = b.dir;
  res.date = utcTimestamp();
  res.gpu = queryGpuName();
  if (res.gpu.empty())
    res.gpu = "(no GPU found)";

  std::string work = opts.workDir;
  if (work.empty()) {
    Expected<std::string> dir = makeTempDirectory("cudal1-progeval");
    if (!dir.ok())
      return dir.error();
    work = *dir;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(work, ec); // no exceptions
    if (ec)
      return makeError("cannot create ", work, ": ", ec.message());
  }
  auto cleanup = [&] {
    std::error_code ec;
    if (!opts.keepWork && opts.workDir.empty())
      std::filesystem::remove_all(work, ec); // best effort: a temporary directory
  };

  // 1. Build everything in parallel (what the session's cache holds is
  // taken from there).
  std::vector<ProgramVariant> all = {b.original};
  all.insert(all.end(), b.variants.begin(), b.variants.end());
  res.results.resize(all.size());
  std::vector<std::string> exes(all.size());
  std::atomic<size_t> next{0};
  std::mutex mutex;
  size_t built = 0;
  // The reference program, built with the others unless an earlier
  // evaluation of this session ran it (index all.size() of the pool).
  std::shared_ptr<ProgramReferenceRun> reference = opts.referenceCache;
  if (!reference)
    reference = std::make_shared<ProgramReferenceRun>();
  bool buildReference = !b.reference.empty() && !reference->ran;
  ProcessResult referenceBuild;
  std::string referenceExe = work + "/reference.exe";
  size_t jobs = all.size() + (buildReference ? 1 : 0);
  std::string originalKey; ///< what the original was built from
  auto buildOne = [&] {
    for (size_t i; (i = next++) < jobs;) {
      if (i == all.size()) {
        std::vector<std::string> cmd = expand(b.build, b.path(b.reference), referenceExe, b.dir);
        for (const std::string &l : b.original.links)
          cmd.push_back("-l" + l);
        referenceBuild = runProcess(cmd, 900);
        std::lock_guard<std::mutex> lock(mutex);
        progress("build reference program");
        continue;
      }
      VariantResult &v = res.results[i];
      v.id = all[i].id;
      v.compiler = "program";
      BuiltProgram p = buildProgram(b, all[i], work, opts.buildCache.get());
      if (i == 0)
        originalKey = p.key;
      // Bind the result to the bytes built here (and the manifest's plan).
      v.hash = p.hash;
      exes[i] = p.exe;
      v.compileSeconds = p.seconds;
      if (!p.ok) {
        v.outcome = Outcome::CompileError;
        v.details.push_back(p.error);
      }
      std::lock_guard<std::mutex> lock(mutex);
      progress("build " + std::to_string(++built) + "/" + std::to_string(all.size()) + " " + v.id +
               (p.cached ? " (built earlier)" : ""));
    }
  };
  int parallel = opts.jobs > 0 ? opts.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < std::min<int>(parallel, int(jobs)); ++t)
      threads.emplace_back(buildOne);
    for (std::thread &t : threads)
      t.join();
  }
  res.buildSeconds = secondsSince(start);
  if (res.results[0].outcome == Outcome::CompileError) {
    std::string why = res.results[0].details.empty() ? "" : res.results[0].details[0];
    cleanup();
    return makeError("the original does not build: ", why);
  }

  // One run: outcome plus what it printed.
  struct Run {
    bool ok = false;
    Outcome fault = Outcome::Crash;
    std::string detail;
    ProgramOutput out;
    double wallMs = 0;
    std::string raw; ///< stdout as printed
  };
  int originalExit = 0;
  auto runOnce = [&](size_t i) {
    Run r;
    ProcessResult p =
        runProcess(expand(b.run, b.path(all[i].source), exes[i], b.dir), opts.runTimeout);
    r.wallMs = p.seconds * 1000;
    r.raw = p.output;
    if (p.timedOut) {
      r.fault = Outcome::Timeout;
      r.detail = "killed after " + formatDouble(opts.runTimeout) + " s";
      return r;
    }
    if (!p.exited || (i > 0 && p.exitCode != originalExit)) {
      r.fault = Outcome::Crash;
      r.detail = p.describe() + ": " + tail(p.output, 3);
      return r;
    }
    if (i == 0)
      originalExit = p.exitCode;
    r.out = splitProgramOutput(p.output, b);
    if (!b.timeRegex.empty() && !r.out.haveTime) {
      r.fault = Outcome::Wrong;
      r.detail = "no line matching the time regex '" + b.timeRegex + "'";
      return r;
    }
    r.ok = true;
    return r;
  };
  auto timeOf = [&](const Run &r) { return b.timeRegex.empty() ? r.wallMs : r.out.timeMs; };

  // 2. The original twice: its output, and how much its numbers move. An
  // earlier evaluation of the session ran the same build of it already:
  // its runs are taken from there (they only grow in number).
  std::shared_ptr<ProgramOriginalRuns> earlier = opts.originalRuns;
  bool reuse =
      earlier && !earlier->key.empty() && earlier->key == originalKey && !earlier->later.empty();
  Run o1, o2;
  if (reuse) {
    o1.ok = o2.ok = true;
    o1.out.lines = earlier->first;
    o1.raw = earlier->firstRaw;
    o1.out.timeMs = o1.wallMs = earlier->firstMs;
    o2.out.lines = earlier->later.front();
    o2.out.timeMs = o2.wallMs = earlier->firstMs;
    originalExit = earlier->exitCode;
  } else {
    progress("verify original");
    o1 = runOnce(0);
    if (!o1.ok) {
      cleanup();
      return makeError("the original fails: ", o1.detail);
    }
    o2 = runOnce(0);
    if (!o2.ok) {
      cleanup();
      return makeError("the original fails on its second run: ", o2.detail);
    }
    std::vector<std::string> mm;
    if (!compareProgramOutputs(o1.out.lines, o1.out.lines, o2.out.lines, 0.5, 0, mm, 3)) {
      cleanup();
      return makeError("the original's output changes from run to run beyond "
                       "numbers (",
                       mm.empty() ? std::string() : mm[0], "): set an ignore-regex for such lines");
    }
  }
  // 2b. The reference program once: judged by it when it prints what the
  // original prints, numbers aside, and exits as the original does.
  if (buildReference) {
    reference->ran = true;
    std::string summary = "reference program";
    if (Expected<std::vector<uint8_t>> src = readWholeFile(b.path(b.reference)); src.ok()) {
      std::string text(src->begin(), src->end());
      const std::string head = "/* cudal1 reference program: ";
      if (text.rfind(head, 0) == 0)
        summary += " (" + text.substr(head.size(), text.find(" */") - head.size()) + ")";
    }
    reference->note = summary;
    if (!(referenceBuild.exited && referenceBuild.exitCode == 0)) {
      reference->note += " does not build: " + tail(referenceBuild.output, 4) + " (" +
                         referenceBuild.describe() + ")";
    } else {
      progress("run reference program");
      std::string notesFile = work + "/reference-notes.txt";
      ProcessResult p = runProcess(expand(b.run, b.path(b.reference), referenceExe, b.dir),
                                   opts.runTimeout, {"CUDAL1_REFERENCE_NOTES=" + notesFile});
      ProgramOutput out = splitProgramOutput(p.output, b);
      std::vector<std::string> mm;
      if (p.timedOut || !p.exited || p.exitCode != originalExit)
        reference->note += " failed (" + p.describe() + ": " + tail(p.output, 3) + ")";
      else if (!b.timeRegex.empty() && !out.haveTime)
        reference->note += " printed no line matching the time regex";
      else if (std::string d = shapeDifference(o1.out.lines, out.lines); !d.empty())
        reference->note += " prints other text than the original (" + d + ")";
      else {
        reference->usable = true;
        reference->lines = out.lines;
      }
      if (Expected<std::vector<uint8_t>> n = readWholeFile(notesFile); n.ok() && !n->empty()) {
        std::string t(n->begin(), n->end());
        while (!t.empty() && t.back() == '\n')
          t.pop_back();
        for (size_t at; (at = t.find('\n')) != std::string::npos;)
          t.replace(at, 1, "; ");
        reference->note += "; " + t;
      }
    }
  }
  bool judgedByReference = !b.reference.empty() && reference->usable;
  const char *mode = judgedByReference ? "program-reference" : "program-output";
  res.results[0].outcome = Outcome::Ok;
  res.results[0].verifyMode = mode;
  if (!b.reference.empty())
    res.results[0].details.push_back(
        judgedByReference ? "variants judged against the " + reference->note
                          : "variants compared with the original's output: the " + reference->note);
  {
    VariantResult &o = res.results[0];
    o.haveFloor = parseFloorLine(o1.raw, o.floorBytes, o.floorFlops, o.floorDtype);
  }

  res.originalSeconds = secondsSince(start) - res.buildSeconds;
  // 3. Verify each variant once.
  // The original's runs after the first: how much its numbers move. Its
  // runs in the timing rounds join them, so that a number that moves from
  // run to run (float atomics) is judged by more than two samples.
  std::vector<std::vector<std::string>> originalRuns =
      reuse ? earlier->later : std::vector<std::vector<std::string>>{o2.out.lines};
  auto check = [&](size_t i, const Run &r, std::vector<std::string> &mm) {
    double scale = all[i].fastMath ? b.fastMathScale : 1.0;
    if (judgedByReference) {
      // The replay rule: fast-math multiplies the floor and k by 4, as there.
      ReferenceRule rule;
      rule.k *= all[i].fastMath ? 4 : 1;
      rule.rel = b.rel * scale;
      rule.abs = b.abs * scale;
      std::vector<std::vector<std::string>> runs = {o1.out.lines};
      runs.insert(runs.end(), originalRuns.begin(), originalRuns.end());
      return compareWithReference(reference->lines, runs, r.out.lines, rule, mm);
    }
    return compareWithOriginalRuns(o1.out.lines, originalRuns, r.out.lines, b.rel * scale,
                                   b.abs * scale, mm);
  };
  // A later run of the original may move its numbers, not its text.
  auto keepsShape = [&](const Run &r) {
    std::vector<std::string> shape;
    return compareProgramOutputs(o1.out.lines, o1.out.lines, r.out.lines, 0.5, 0, shape, 1);
  };
  // When the original's two runs differ at all (its output moves from run
  // to run) and a variant fails, two runs may understate how far it moves:
  // once per evaluation, the original runs kExtraRuns more times first.
  constexpr int kExtraRuns = 3;
  bool refined = false;
  auto refineSpread = [&]() -> bool {
    if (refined || std::all_of(originalRuns.begin(), originalRuns.end(),
                               [&](const auto &r) { return r == o1.out.lines; }))
      return false;
    refined = true;
    progress("original: " + std::to_string(kExtraRuns) + " more runs (its output moves)");
    for (int k = 0; k < kExtraRuns; ++k) {
      Run e = runOnce(0);
      if (e.ok && keepsShape(e))
        originalRuns.push_back(e.out.lines);
    }
    return true;
  };
  // Whether run r of variant i prints the original's output. A mismatch
  // refines the spread first (verification, screening and the rounds alike:
  // a float-atomic sum falsely rejected in a timing round costs a plan too).
  auto judge = [&](size_t i, const Run &r, std::vector<std::string> &mm) {
    if (check(i, r, mm))
      return true;
    if (!refineSpread())
      return false;
    mm.clear();
    return check(i, r, mm);
  };
  auto differs = [&](const std::string &when) {
    std::string d =
        when + (judgedByReference ? "printed output is further from the reference program's than "
                                    "the original's error allows"
                                  : "printed output differs from the original's");
    if (originalRuns.size() > 1) // more than the original's first two runs
      d += " (judged by " + std::to_string(originalRuns.size() + 1) + " runs of the original)";
    return d;
  };
  std::vector<size_t> timed = {0};
  std::map<size_t, std::vector<double>> screenMs; ///< verified variants' run times
  for (size_t i = 1; i < all.size(); ++i) {
    VariantResult &v = res.results[i];
    if (v.outcome == Outcome::CompileError)
      continue;
    progress("verify " + std::to_string(i) + "/" + std::to_string(all.size() - 1) + " " + v.id);
    v.verifyMode = mode;
    Run r = runOnce(i);
    if (!r.ok) {
      v.outcome = r.fault;
      v.details.push_back(r.detail);
      continue;
    }
    if (!judge(i, r, v.mismatches)) {
      v.outcome = Outcome::Wrong;
      v.details.push_back(differs(""));
      continue;
    }
    v.outcome = Outcome::Ok;
    timed.push_back(i);
    screenMs[i].push_back(timeOf(r));
  }
  std::mt19937_64 rng(opts.seed);

  // 3b. Racing: the verification runs were serial and timed like the
  // rounds, so they rank the variants (with screenRuns, the median of more
  // runs, interleaved and checked); only the fastest enter the rounds.
  if (opts.raceKeep > 0 && timed.size() - 1 > size_t(opts.raceKeep)) {
    std::vector<size_t> ranked(timed.begin() + 1, timed.end());
    // Clear losers by their verification run need no more runs to be
    // ranked out (a final round's single kernels beside their combination
    // are several times slower): cut at the raceKeep-th fastest run.
    std::set<size_t> clearLosers;
    double cut = 0;
    if (opts.screenRuns > 1 && opts.screenMargin > 0) {
      std::vector<double> first;
      for (size_t i : ranked)
        first.push_back(screenMs[i].front());
      std::nth_element(first.begin(), first.begin() + (opts.raceKeep - 1), first.end());
      cut = first[size_t(opts.raceKeep - 1)];
      for (size_t i : ranked)
        if (screenMs[i].front() > cut * (1 + opts.screenMargin))
          clearLosers.insert(i);
    }
    for (int extra = 1; extra < opts.screenRuns; ++extra) {
      std::vector<size_t> order = ranked;
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t i : order) {
        VariantResult &v = res.results[i];
        if (v.outcome != Outcome::Ok || clearLosers.count(i))
          continue;
        progress("screen " + std::to_string(extra + 1) + " " + v.id);
        Run r = runOnce(i);
        std::vector<std::string> mm;
        if (!r.ok || !judge(i, r, mm)) {
          std::string when = "screening run " + std::to_string(extra + 1) + ": ";
          v.outcome = r.ok ? Outcome::Wrong : r.fault;
          v.details.push_back(r.ok ? differs(when) : when + r.detail);
          v.mismatches.insert(v.mismatches.end(), mm.begin(), mm.end());
          continue;
        }
        screenMs[i].push_back(timeOf(r));
      }
    }
    ranked.erase(std::remove_if(ranked.begin(), ranked.end(),
                                [&](size_t i) { return res.results[i].outcome != Outcome::Ok; }),
                 ranked.end());
    std::map<size_t, double> ms;
    for (size_t i : ranked)
      ms[i] = median(screenMs[i]);
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](size_t x, size_t y) { return ms[x] < ms[y]; });
    size_t keep = std::min(ranked.size(), size_t(opts.raceKeep));
    timed = {0};
    timed.insert(timed.end(), ranked.begin(), ranked.begin() + keep);
    double originalMs = std::min(timeOf(o1), timeOf(o2));
    for (size_t k = keep; k < ranked.size(); ++k)
      res.results[ranked[k]].details.push_back(
          clearLosers.count(ranked[k])
              ? "not timed: its verification run (" + formatDouble(ms[ranked[k]]) +
                    " ms; original " + formatDouble(originalMs) + " ms) was more than " +
                    formatDouble(100 * opts.screenMargin) + "% slower than " + formatDouble(cut) +
                    " ms, the slowest of the " + std::to_string(opts.raceKeep) +
                    " fastest verification runs: not screened further (--race)"
              : std::string(opts.screenRuns > 1 ? "not timed: the median of its screening runs ("
                                                : "not timed: its verification run (") +
                    formatDouble(ms[ranked[k]]) + " ms; original " + formatDouble(originalMs) +
                    " ms) was not among the " + std::to_string(opts.raceKeep) +
                    " fastest (--race)");
    std::sort(timed.begin(), timed.end());
  }

  res.verifySeconds = secondsSince(start) - res.buildSeconds - res.originalSeconds;
  // 4. Timing rounds in a fresh random order; every timed run re-checked.
  std::map<size_t, std::vector<double>> samples;
  // Racing between rounds (stopWhenDecided, raceVerdict in Stats.h): a
  // variant whose interval lies below 1.01, or below the surest variant's
  // lower bound, cannot win and leaves the rounds; when one variant is left
  // and its interval is above 1, or every one left has settled, the rounds
  // end. The speedups below use every round each one ran.
  auto raceRounds = [&](int done, const std::map<size_t, std::vector<double>> &sm,
                        std::vector<size_t> &racing) {
    std::vector<size_t> entries; // racing without the original
    std::vector<std::optional<SpeedupEstimate>> est;
    for (size_t i : racing) {
      if (i == 0)
        continue;
      entries.push_back(i);
      est.emplace_back();
      if (res.results[i].outcome != Outcome::Ok)
        continue;
      std::vector<double> a, c;
      const std::vector<double> &base = sm.at(0), &mine = sm.at(i);
      for (size_t k = 0; k < base.size() && k < mine.size(); ++k)
        if (std::isfinite(base[k]) && std::isfinite(mine[k])) {
          a.push_back(base[k]);
          c.push_back(mine[k]);
        }
      if (c.size() >= size_t(kMinRoundsBeforeRacing))
        est.back() = bootstrapSpeedup(a, c, 10, 1000, opts.seed + i);
    }
    RaceVerdict verdict = raceVerdict(est, /*dropBeaten=*/true); // every timed run is judged
    std::vector<size_t> keep = {0};
    for (size_t j = 0; j < entries.size(); ++j) {
      if (!verdict.cannotWin[j]) {
        keep.push_back(entries[j]);
        continue;
      }
      const SpeedupEstimate &e = *est[j];
      res.results[entries[j]].details.push_back(
          "timing stopped after " + std::to_string(done) + " rounds: it cannot win (" +
          formatDouble(e.lo) + "x to " + formatDouble(e.hi) + "x, " +
          (e.hi < 1 ? std::string("below the original")
           : e.hi < kMinFasterSpeedup
               ? "below the " + formatDouble(kMinFasterSpeedup) + "x a plan must reach"
               : std::string("below another variant")) +
          ")");
    }
    if (verdict.decided && keep.size() > 1) {
      res.results[0].details.push_back(
          "rounds ended after " + std::to_string(done) +
          (keep.size() == 2 ? ": one variant was left, decided faster or settled"
                            : ": every variant left has settled (its interval within " +
                                  formatDouble(100 * kSettledWidth) + "%)"));
      keep = {0};
    }
    racing = keep;
  };
  int rounds = 0;
  auto roundStart = Clock::now();
  double perRound = 0;
  while (timed.size() > 1 && rounds < opts.maxRounds) {
    double spent = secondsSince(roundStart);
    if (rounds > 0 && opts.timeBudget > 0 && spent + perRound > opts.timeBudget)
      break;
    std::vector<size_t> order = timed;
    std::shuffle(order.begin(), order.end(), rng);
    auto t0 = Clock::now();
    for (size_t i : order)
      samples[i].push_back(NAN); // filled below when the run counts
    for (size_t i : order) {
      VariantResult &v = res.results[i];
      if (v.outcome != Outcome::Ok)
        continue;
      Run r = runOnce(i);
      std::vector<std::string> mm;
      if (i == 0 && r.ok) {
        // Its numbers may move, and widen the tolerance from now on.
        if (keepsShape(r))
          originalRuns.push_back(r.out.lines);
        else
          r.ok = false;
      }
      if (!r.ok || (i > 0 && !judge(i, r, mm))) {
        if (i == 0)
          continue; // a flaky original run: leave the sample out
        std::string when = "round " + std::to_string(rounds + 1) + ": ";
        v.outcome = Outcome::WrongAfterTiming;
        v.details.push_back(r.ok ? differs(when) : when + r.detail);
        v.mismatches.insert(v.mismatches.end(), mm.begin(), mm.end());
        continue;
      }
      samples[i].back() = timeOf(r);
    }
    perRound = secondsSince(t0);
    ++rounds;
    progress("timing round " + std::to_string(rounds));
    if (opts.stopWhenDecided && rounds >= kMinRoundsBeforeRacing && rounds < opts.maxRounds)
      raceRounds(rounds, samples, timed);
    // A reproducibility check (one variant) ends once its rule is decided.
    if (opts.checkDecided && timed.size() == 2 && rounds >= opts.minCheckRounds &&
        rounds < opts.maxRounds) {
      std::vector<double> a, c;
      const std::vector<double> &base = samples[0], &mine = samples[timed[1]];
      for (size_t k = 0; k < base.size() && k < mine.size(); ++k)
        if (std::isfinite(base[k]) && std::isfinite(mine[k])) {
          a.push_back(base[k]);
          c.push_back(mine[k]);
        }
      if (opts.checkDecided(a, c)) {
        res.results[0].details.push_back("rounds ended after " + std::to_string(rounds) +
                                         ": the check was decided");
        break;
      }
    }
  }

  res.roundsSeconds =
      secondsSince(start) - res.buildSeconds - res.originalSeconds - res.verifySeconds;
  // 5. Speedups from the rounds where both ran (paired by round).
  const std::vector<double> &base = samples[0];
  for (size_t i = 0; i < all.size(); ++i) {
    VariantResult &v = res.results[i];
    if (v.outcome != Outcome::Ok || samples[i].empty())
      continue;
    std::vector<double> a, c;
    for (size_t k = 0; k < base.size() && k < samples[i].size(); ++k)
      if (std::isfinite(base[k]) && std::isfinite(samples[i][k])) {
        a.push_back(base[k]);
        c.push_back(samples[i][k]);
      }
    if (c.empty())
      continue;
    SpeedupEstimate e = bootstrapSpeedup(a, c, 10, 2000, opts.seed + i);
    v.timed = true;
    v.samplesMs = c;
    v.timeMs = medianOfBucketAverages(c, 10);
    v.speedup = e.speedup;
    v.lo = e.lo;
    v.hi = e.hi;
    v.rounds = e.rounds;
    v.faster = i > 0 && isFaster(e);
    v.suspicious = e.speedup > 10;
    if (v.suspicious)
      v.details.push_back("speedup above 10x: check the measurement");
  }
  if (!b.timeRegex.empty())
    res.results[0].details.push_back("times are the program's own report (" + b.timeRegex + ")");
  else
    res.results[0].details.push_back("times are whole-process wall times (no time regex)");
  // What this evaluation learned of the original, for the next one.
  if (earlier && !originalKey.empty()) {
    earlier->key = originalKey;
    earlier->exitCode = originalExit;
    earlier->first = o1.out.lines;
    earlier->firstRaw = o1.raw;
    earlier->firstMs = std::min(timeOf(o1), timeOf(o2));
    constexpr size_t kKeptRuns = 64; // the spread needs many, not all
    if (originalRuns.size() > kKeptRuns)
      originalRuns.erase(originalRuns.begin(), originalRuns.end() - kKeptRuns);
    earlier->later = std::move(originalRuns);
  }
  res.wallSeconds = secondsSince(start);
  cleanup();
  return res;
}

} // namespace cudal1
