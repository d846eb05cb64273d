// Orchestration of one evaluation. This process never initializes CUDA:
// every GPU step runs in a worker child (cudal1-eval --worker), so a variant
// that faults or hangs costs one child, never the run.
#include "cudal1/Eval/Evaluator.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Compile.h"
#include "cudal1/Eval/Process.h"
#include "cudal1/Eval/Stats.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace cudal1 {

namespace {

constexpr int kBuckets = 10;
constexpr double kSuspiciousSpeedup = 10.0;

struct Clock {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

std::string lastLines(const std::string &text, size_t maxLines) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty())
      lines.push_back(l);
  std::string out;
  size_t first = lines.size() > maxLines ? lines.size() - maxLines : 0;
  for (size_t i = first; i < lines.size(); ++i)
    out += (out.empty() ? "" : " | ") + lines[i];
  return out;
}

std::vector<std::string> readLines(const std::string &path) {
  std::vector<std::string> lines;
  Expected<std::vector<uint8_t>> data = readWholeFile(path);
  if (!data.ok())
    return lines;
  std::istringstream in(std::string(data->begin(), data->end()));
  std::string l;
  while (std::getline(in, l))
    lines.push_back(l);
  return lines;
}

std::pair<std::string, std::string> splitHead(const std::string &line) {
  size_t sp = line.find(' ');
  if (sp == std::string::npos)
    return {line, ""};
  return {line.substr(0, sp), line.substr(sp + 1)};
}

std::vector<double> parseNumbers(const std::string &text) {
  std::vector<double> v;
  std::istringstream in(text);
  double d;
  while (in >> d)
    v.push_back(d);
  return v;
}

/// Applies a verify worker's report (or its absence) to the result.
void applyVerify(const ProcessResult &p, const std::string &reportPath, VariantResult &v,
                 std::string &gpu) {
  std::vector<std::string> lines = readLines(reportPath);
  std::string outcome;
  for (const std::string &l : lines) {
    auto [head, rest] = splitHead(l);
    if (head == "outcome")
      outcome = rest;
    else if (head == "mode")
      v.verifyMode = rest;
    else if (head == "gpu")
      gpu = rest;
    else if (head == "detail")
      v.details.push_back(rest);
    else if (head == "mismatch")
      v.mismatches.push_back(rest);
  }
  if (p.timedOut) {
    v.outcome = Outcome::Timeout;
    v.details.push_back("killed after the time limit of the verification "
                        "worker (a hang or an endless loop)");
    return;
  }
  if (outcome == "ok" && p.exited && p.exitCode == 0) {
    v.outcome = Outcome::Ok;
    return;
  }
  if (outcome == "wrong") {
    v.outcome = Outcome::Wrong;
    return;
  }
  if (outcome == "load-error") {
    v.outcome = Outcome::LoadError;
    return;
  }
  if (outcome == "setup-error") {
    v.outcome = Outcome::NotRun;
    return;
  }
  v.outcome = Outcome::Crash;
  v.details.push_back("verification worker: " + p.describe() +
                      (p.output.empty() ? "" : ": " + lastLines(p.output, 3)));
}

std::string workerPath(const EvalOptions &o) {
  if (!o.workerExecutable.empty())
    return o.workerExecutable;
  if (const char *e = std::getenv("CUDAL1_EVAL"); e && *e)
    return e;
  return selfExecutablePath();
}

} // namespace

void summarizeTiming(const std::vector<double> &originalT, const std::vector<double> &originalAll,
                     const std::vector<double> &t, const std::vector<double> &all, uint64_t seed,
                     VariantResult &v) {
  v.timed = !t.empty() && !originalT.empty();
  if (!v.timed)
    return;
  // Work that ran past the stop event (another stream, a device-side
  // launch) widens the gap to the device-wide stop. Compare the gaps; when
  // this variant's is clearly larger, judge both on device-wide times.
  std::vector<double> gapO, gapV;
  for (size_t i = 0; i < originalT.size() && i < originalAll.size(); ++i)
    gapO.push_back(originalAll[i] - originalT[i]);
  for (size_t i = 0; i < t.size() && i < all.size(); ++i)
    gapV.push_back(all[i] - t[i]);
  double baseTime = medianOfBucketAverages(originalT, kBuckets);
  v.sideWork = !gapV.empty() && median(gapV) - median(gapO) > std::max(0.02, 0.05 * baseTime);
  const std::vector<double> &bo = v.sideWork ? originalAll : originalT;
  const std::vector<double> &bv = v.sideWork ? all : t;
  SpeedupEstimate e = bootstrapSpeedup(bo, bv, kBuckets, 2000, seed);
  v.samplesMs = bv;
  v.timeMs = medianOfBucketAverages(bv, kBuckets);
  v.speedup = e.speedup;
  v.lo = e.lo;
  v.hi = e.hi;
  v.rounds = e.rounds;
  v.faster = isFaster(e);
  v.suspicious = e.speedup > kSuspiciousSpeedup;
}

Expected<EvalResults> evaluateBundle(const Bundle &bundle, const EvalOptions &opts) {
  Clock clock;
  EvalResults res;
  res.bundle = bundle.dir;
  res.date = utcTimestamp();
  auto progress = [&](const std::string &m) {
    if (opts.progress)
      opts.progress(m);
  };

  // 1. The captures must be readable and hold this kernel.
  size_t launches = 0;
  for (const std::string &c : bundle.captures) {
    Expected<CaptureFile> f = readCaptureFile(bundle.path(c));
    if (!f.ok())
      return f.error();
    for (const CapturedLaunch &l : f->launches)
      launches += l.kernelKey == bundle.kernelKey;
  }
  if (launches == 0)
    return makeError("the captures hold no launch of kernel key '", bundle.kernelKey, "'");

  std::string work = opts.workDir;
  if (work.empty()) {
    Expected<std::string> dir = makeTempDirectory("cudal1-eval");
    if (!dir.ok())
      return dir.error();
    work = *dir;
  }

  // 2. Compile everything in parallel.
  std::vector<VariantSpec> all = {bundle.original};
  for (const VariantSpec &v : bundle.variants)
    all.push_back(v);
  std::vector<CompileJob> jobs;
  auto jobFor = [&](const VariantSpec &v) {
    CompileJob j;
    j.id = v.id;
    j.source = bundle.path(v.source);
    j.output = work + "/" + v.id + ".cubin";
    j.compiler = v.compiler;
    j.flags = bundle.flags;
    j.flags.insert(j.flags.end(), v.extraFlags.begin(), v.extraFlags.end());
    j.arch = bundle.arch;
    return j;
  };
  for (const VariantSpec &v : all)
    jobs.push_back(jobFor(v));
  if (bundle.hasReference)
    jobs.push_back(jobFor(bundle.reference));
  int parallel = opts.jobs > 0 ? opts.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
  size_t compiled = 0;
  std::vector<CompileResult> cres = compileAll(jobs, parallel, [&](const CompileResult &r) {
    progress("compile " + std::to_string(++compiled) + "/" + std::to_string(jobs.size()) + " " +
             r.id);
  });
  std::map<std::string, const CompileResult *> byId;
  for (const CompileResult &r : cres)
    byId[r.id] = &r;
  if (!byId["original"]->ok)
    return makeError("the original does not compile (", byId["original"]->compiler,
                     "): ", lastLines(byId["original"]->log, 8));
  if (bundle.hasReference && !byId["reference"]->ok)
    return makeError("the reference does not compile (", byId["reference"]->compiler,
                     "): ", lastLines(byId["reference"]->log, 8));

  res.results.resize(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    VariantResult &v = res.results[i];
    const CompileResult &c = *byId[all[i].id];
    v.id = all[i].id;
    v.compiler = c.compiler;
    v.compileSeconds = c.seconds;
    if (!c.ok) {
      v.outcome = Outcome::CompileError;
      v.details.push_back(lastLines(c.log, 6));
    }
  }

  // 3. Verify each candidate in its own worker; a few at a time.
  std::string exe = workerPath(opts);
  double budgetLeft = opts.timeBudget > 0 ? opts.timeBudget : 1e30;
  std::vector<size_t> toVerify;
  for (size_t i = 0; i < all.size(); ++i)
    if (res.results[i].outcome != Outcome::CompileError)
      toVerify.push_back(i);
  std::atomic<size_t> next{0};
  std::mutex mutex;
  size_t verified = 0;
  std::string gpuName;
  auto verifyOne = [&] {
    for (size_t k; (k = next++) < toVerify.size();) {
      size_t i = toVerify[k];
      VariantResult &v = res.results[i];
      double limit = opts.verifyTimeout;
      if (budgetLeft < 1e29)
        limit = std::max(5.0, std::min(limit, budgetLeft - clock.seconds()));
      if (budgetLeft < 1e29 && clock.seconds() > budgetLeft) {
        v.outcome = Outcome::NotRun;
        v.details.push_back("time budget spent before verification");
        continue;
      }
      std::string gpu;
      // A worker that could not set up (no context, device busy) is not the
      // candidate's fault: try once more before giving up on it.
      for (int attempt = 0; attempt < 2; ++attempt) {
        ProcessResult p = runProcess({exe, "--worker", "verify", "--bundle", bundle.dir, "--work",
                                      work, "--id", v.id, "--gpu", std::to_string(opts.gpu)},
                                     limit);
        v.details.clear();
        v.mismatches.clear();
        applyVerify(p, work + "/" + v.id + ".verify", v, gpu);
        if (v.outcome != Outcome::NotRun)
          break;
        std::this_thread::sleep_for(std::chrono::seconds(2));
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (!gpu.empty())
        gpuName = gpu;
      progress("verify " + std::to_string(++verified) + "/" + std::to_string(toVerify.size()) +
               " " + v.id + ": " + outcomeName(v.outcome));
    }
  };
  {
    int n = std::max(1, opts.verifyParallel);
    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t)
      threads.emplace_back(verifyOne);
    for (std::thread &t : threads)
      t.join();
  }
  res.gpu = gpuName;
  VariantResult &orig = res.results[0];
  if (orig.outcome != Outcome::Ok) {
    if (orig.outcome == Outcome::NotRun && !orig.details.empty())
      return makeError("the original could not be replayed: ", orig.details.front());
    orig.details.push_back("the original failed its own replay; nothing is "
                           "timed (is the capture complete and the kernel "
                           "deterministic?)");
    res.wallSeconds = clock.seconds();
    return res;
  }

  // 4. Time the original and every verified variant in one session.
  std::vector<size_t> timed = {0};
  for (size_t i = 1; i < all.size(); ++i)
    if (res.results[i].outcome == Outcome::Ok)
      timed.push_back(i);
  double window =
      opts.window > 0 ? opts.window : std::min(30.0, std::max(2.0, 0.25 * double(timed.size())));
  if (budgetLeft < 1e29)
    window = std::min(window, std::max(0.5, 0.7 * (budgetLeft - clock.seconds())));
  std::map<std::string, std::vector<double>> samples, samplesAll;
  for (int attempt = 0; attempt < 3 && timed.size() > 1; ++attempt) {
    std::vector<std::string> argv = {exe,
                                     "--worker",
                                     "time",
                                     "--bundle",
                                     bundle.dir,
                                     "--work",
                                     work,
                                     "--gpu",
                                     std::to_string(opts.gpu),
                                     "--window",
                                     std::to_string(window),
                                     "--seed",
                                     std::to_string(opts.seed)};
    for (size_t i : timed) {
      argv.push_back("--id");
      argv.push_back(res.results[i].id);
    }
    progress("timing " + std::to_string(timed.size()) + " candidates for " +
             std::to_string(int(window)) + " s");
    std::string report = work + "/timing.txt";
    ::unlink(report.c_str());
    ProcessResult p = runProcess(argv, 2 * window + 120);
    std::vector<std::string> lines = readLines(report);
    std::string crashedId, crashText, errorText;
    samples.clear();
    samplesAll.clear();
    std::map<std::string, bool> wrong;
    std::map<std::string, std::vector<std::string>> mism, det;
    for (const std::string &l : lines) {
      auto [head, rest] = splitHead(l);
      auto [id, tail] = splitHead(rest);
      if (head == "samples")
        samples[id] = parseNumbers(tail);
      else if (head == "samples-all")
        samplesAll[id] = parseNumbers(tail);
      else if (head == "revalidate")
        wrong[id] = tail == "wrong";
      else if (head == "mismatch")
        mism[id].push_back(tail);
      else if (head == "detail")
        det[id].push_back(tail);
      else if (head == "crashed")
        crashedId = id, crashText = tail;
      else if (head == "error")
        errorText = rest;
      else if (head == "gpu" && res.gpu.empty())
        res.gpu = rest;
    }
    if (!crashedId.empty() && crashedId != "original") {
      for (size_t k = 0; k < timed.size(); ++k)
        if (res.results[timed[k]].id == crashedId) {
          VariantResult &v = res.results[timed[k]];
          v.outcome = Outcome::Crash;
          v.details.push_back("crashed while being timed: " + crashText);
          timed.erase(timed.begin() + k);
          break;
        }
      continue; // time the rest again
    }
    if (p.exited && p.exitCode == 0 && samples.count("original")) {
      for (size_t i : timed) {
        VariantResult &v = res.results[i];
        if (wrong[v.id]) {
          v.outcome = i == 0 ? Outcome::Wrong : Outcome::WrongAfterTiming;
          v.details.push_back("outputs of timed launches failed "
                              "re-validation");
        }
        for (const std::string &d : det[v.id])
          v.details.push_back(d);
        for (const std::string &m : mism[v.id])
          v.mismatches.push_back(m);
      }
      break;
    }
    std::string why = !errorText.empty()   ? errorText
                      : !crashText.empty() ? crashText
                                           : p.describe() + ": " + lastLines(p.output, 3);
    for (size_t i : timed)
      res.results[i].details.push_back("timing session failed: " + why);
    samples.clear();
    break;
  }

  // 5. Statistics.
  const std::vector<double> &ot = samples["original"];
  const std::vector<double> &oa = samplesAll["original"];
  for (size_t i = 0; i < all.size(); ++i) {
    VariantResult &v = res.results[i];
    if (!samples.count(v.id) || samples[v.id].empty())
      continue;
    summarizeTiming(ot, oa, samples[v.id], samplesAll[v.id], opts.seed + i, v);
    if (v.outcome != Outcome::Ok)
      v.faster = false;
    if (v.sideWork)
      v.details.push_back("work ran past the kernel's stop event (another "
                          "stream or a device-side launch): timed to the "
                          "device-wide synchronization instead");
    if (v.suspicious)
      v.details.push_back("speedup above 10x: check the measurement");
  }
  res.wallSeconds = clock.seconds();
  // Not an `rm -rf` process: std::filesystem (the evaluator is plain C++,
  // without LLVM) removes symbolic links inside, never what they point to.
  if (!opts.keepWork && opts.workDir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(work, ec);
  }
  return res;
}

std::string formatSummary(const EvalResults &r) {
  std::ostringstream os;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-22s %-18s %-9s %10s %8s %17s %s\n", "variant", "outcome",
                "compiler", "time-ms", "speedup", "95% interval", "notes");
  os << buf;
  for (const VariantResult &v : r.results) {
    std::string notes;
    if (v.faster)
      notes += "faster ";
    if (v.suspicious)
      notes += "CHECK(>10x) ";
    if (v.sideWork)
      notes += "side-work ";
    if (!v.details.empty() && v.outcome != Outcome::Ok)
      notes += v.details.front().substr(0, 100);
    if (v.timed)
      std::snprintf(buf, sizeof buf, "%-22s %-18s %-9s %10.4f %8.3f [%7.3f,%7.3f] %s\n",
                    v.id.c_str(), outcomeName(v.outcome), v.compiler.c_str(), v.timeMs, v.speedup,
                    v.lo, v.hi, notes.c_str());
    else
      std::snprintf(buf, sizeof buf, "%-22s %-18s %-9s %10s %8s %17s %s\n", v.id.c_str(),
                    outcomeName(v.outcome), v.compiler.c_str(), "-", "-", "-", notes.c_str());
    os << buf;
  }
  return os.str();
}

} // namespace cudal1
