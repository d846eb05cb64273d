// Orchestration of one evaluation. This process never initializes CUDA:
// every GPU step runs in a worker child (cudal1-eval --worker), so a variant
// that faults or hangs costs one child, never the run.
#include "cudal1/Eval/Evaluator.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Compile.h"
#include "cudal1/Eval/KeptWorkers.h"
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

/// Applies a verify worker's report (or its absence) to the result; `setup`
/// receives what it says of its kernel's set-up ("kept", "made", or "").
void applyVerify(const ProcessResult &p, const std::string &reportPath, VariantResult &v,
                 std::string &gpu, std::string &setup) {
  std::vector<std::string> lines = readLines(reportPath);
  std::string outcome;
  for (const std::string &l : lines) {
    auto [head, rest] = splitHead(l);
    if (head == "outcome")
      outcome = rest;
    else if (head == "setup")
      setup = rest;
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
  if (outcome == "timeout") { // the worker's own watchdog (Cuda/Worker.cpp)
    v.outcome = Outcome::Timeout;
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

/// Runs one worker request: on the kept worker of the bundle's kernel and
/// `slot` when the options keep workers, else in a worker process of its own.
ProcessResult runWorkerRequest(const EvalOptions &opts, const Bundle &bundle, int slot,
                               const std::vector<std::string> &argv, double timeoutSeconds) {
  if (!opts.keptWorkers.empty()) {
    std::string socket = keptWorkerSocket(opts.keptWorkers, bundle.kernelKey, slot);
    if (!socket.empty())
      return runKeptWorker(socket, argv, timeoutSeconds, opts.keptWorkerIdle);
  }
  return runProcess(argv, timeoutSeconds);
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

namespace {

/// One bundle between its compile and its verification.
struct PreparedBundle {
  std::string work;
  bool ownWork = false;         ///< a fresh directory, removed at the end
  std::vector<VariantSpec> all; ///< the original first
  std::vector<CompileJob> jobs; ///< `all`'s, then the reference's
  Status error;                 ///< set: the bundle cannot be evaluated
};

/// Steps 1 and 2a: the captures hold the kernel; the compile jobs.
PreparedBundle prepareBundle(const Bundle &bundle, const EvalOptions &opts,
                             const std::string &workDir) {
  PreparedBundle p;
  size_t launches = 0;
  for (const std::string &c : bundle.captures) {
    Expected<CaptureFile> f = readCaptureFile(bundle.path(c));
    if (!f.ok()) {
      p.error = f.error();
      return p;
    }
    for (const CapturedLaunch &l : f->launches)
      launches += l.kernelKey == bundle.kernelKey;
  }
  if (launches == 0) {
    p.error = makeError("the captures hold no launch of kernel key '", bundle.kernelKey, "'");
    return p;
  }
  p.work = workDir;
  if (p.work.empty()) {
    Expected<std::string> dir = makeTempDirectory("cudal1-eval");
    if (!dir.ok()) {
      p.error = dir.error();
      return p;
    }
    p.work = *dir;
    p.ownWork = true;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(p.work, ec); // no exceptions
  }
  p.all = {bundle.original};
  for (const VariantSpec &v : bundle.variants)
    p.all.push_back(v);
  auto jobFor = [&](const VariantSpec &v) {
    CompileJob j;
    j.id = v.id;
    j.source = bundle.path(v.source);
    j.output = p.work + "/" + v.id + ".cubin";
    j.compiler = v.compiler;
    j.flags = bundle.flags;
    j.flags.insert(j.flags.end(), v.extraFlags.begin(), v.extraFlags.end());
    j.arch = bundle.arch;
    j.cacheDir = opts.compileCache;
    return j;
  };
  for (const VariantSpec &v : p.all)
    p.jobs.push_back(jobFor(v));
  if (bundle.hasReference)
    p.jobs.push_back(jobFor(bundle.reference));
  return p;
}

/// Steps 2b and 3 for one compiled bundle: its verification. Bundles verify
/// side by side (nothing is timed yet); `phases.verify` is the caller's.
/// `timeIt` is false when the original failed its own replay: nothing is
/// timed then.
Expected<EvalResults> verifyBundle(const Bundle &bundle, PreparedBundle &prep,
                                   const std::vector<CompileResult> &cres, const EvalOptions &opts,
                                   const Clock &clock, EvalPhaseTimes &phases, bool &timeIt) {
  timeIt = false;
  EvalResults res;
  res.bundle = bundle.dir;
  res.date = utcTimestamp();
  auto progress = [&](const std::string &m) {
    if (opts.progress)
      opts.progress(m);
  };
  const std::string &work = prep.work;
  const std::vector<VariantSpec> &all = prep.all;
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

  // 3. Verify the candidates in workers that each take a queue of them, in
  // order, and stop at the first that is not ok (docs/Evaluator.md): one
  // process and context for a run of good candidates, a fresh one after a
  // fault. A few queues at a time (verifyParallel).
  double verifyStart = clock.seconds();
  std::string exe = workerPath(opts);
  double budgetLeft = opts.timeBudget > 0 ? opts.timeBudget : 1e30;
  std::vector<size_t> toVerify;
  for (size_t i = 0; i < all.size(); ++i)
    if (res.results[i].outcome != Outcome::CompileError)
      toVerify.push_back(i);
  if (opts.originalVerified && !toVerify.empty() && toVerify[0] == 0) {
    toVerify.erase(toVerify.begin());
    res.results[0].outcome = Outcome::Ok;
    res.results[0].verifyMode = verifyModeOf(bundle);
    res.results[0].details.push_back("verified in an earlier evaluation of this session");
  }
  std::mutex mutex;
  size_t verified = 0;
  std::string gpuName;
  auto verifyQueue = [&](std::vector<size_t> queue, int slot) {
    std::map<size_t, int> attempts;
    while (!queue.empty()) {
      if (budgetLeft < 1e29 && clock.seconds() > budgetLeft) {
        for (size_t i : queue) {
          res.results[i].outcome = Outcome::NotRun;
          res.results[i].details.push_back("time budget spent before verification");
        }
        return;
      }
      double limit = opts.verifyTimeout;
      if (budgetLeft < 1e29)
        limit = std::max(5.0, std::min(limit, budgetLeft - clock.seconds()));
      std::vector<std::string> argv = {exe,
                                       "--worker",
                                       "verify",
                                       "--bundle",
                                       bundle.dir,
                                       "--work",
                                       work,
                                       "--gpu",
                                       std::to_string(opts.gpu),
                                       "--candidate-timeout",
                                       std::to_string(limit)};
      // At most verifyBatch candidates per worker (0: the whole queue).
      size_t take =
          opts.verifyBatch > 0 ? std::min(queue.size(), size_t(opts.verifyBatch)) : queue.size();
      std::vector<size_t> rest(queue.begin() + take, queue.end());
      queue.resize(take);
      for (size_t i : queue) {
        argv.push_back("--id");
        argv.push_back(res.results[i].id);
        ::unlink((work + "/" + res.results[i].id + ".verify").c_str());
      }
      // The watchdog ends a hung candidate; this limit is the backstop.
      ProcessResult p =
          runWorkerRequest(opts, bundle, slot, argv, limit * double(queue.size()) + 60);
      // Reports are written in queue order: each before the last is ok (the
      // worker went on), the last or the first missing one ended the worker.
      static const ProcessResult kExitedCleanly = [] {
        ProcessResult r;
        r.started = r.exited = true;
        r.exitCode = 0;
        return r;
      }();
      std::vector<size_t> retry;
      size_t k = 0;
      for (; k < queue.size(); ++k) {
        std::string report = work + "/" + res.results[queue[k]].id + ".verify";
        bool nextHave =
            k + 1 < queue.size() &&
            ::access((work + "/" + res.results[queue[k + 1]].id + ".verify").c_str(), R_OK) == 0;
        VariantResult &v = res.results[queue[k]];
        v.details.clear();
        v.mismatches.clear();
        std::string gpu, setup;
        applyVerify(nextHave ? kExitedCleanly : p, report, v, gpu, setup);
        // A worker that could not set up (no context, device busy) is not
        // the candidate's fault: it gets one more worker.
        if (v.outcome == Outcome::NotRun && ++attempts[queue[k]] < 2)
          retry.push_back(queue[k]);
        std::lock_guard<std::mutex> lock(mutex);
        if (!gpu.empty())
          gpuName = gpu;
        if (k == 0 && !setup.empty()) { // one request, its set-up said once
          ++phases.setups;
          phases.keptSetups += setup == "kept";
        }
        if (v.outcome != Outcome::NotRun || attempts[queue[k]] >= 2)
          progress("verify " + std::to_string(++verified) + "/" + std::to_string(toVerify.size()) +
                   " " + v.id + ": " + outcomeName(v.outcome));
        if (!nextHave) {
          ++k;
          break;
        }
      }
      if (!retry.empty())
        std::this_thread::sleep_for(std::chrono::seconds(2));
      std::vector<size_t> next = retry;
      next.insert(next.end(), queue.begin() + std::min(k, queue.size()), queue.end());
      next.insert(next.end(), rest.begin(), rest.end());
      queue = std::move(next);
    }
  };
  {
    size_t n = size_t(std::max(1, opts.verifyParallel));
    std::vector<std::vector<size_t>> queues(std::min(n, std::max<size_t>(1, toVerify.size())));
    for (size_t k = 0; k < toVerify.size(); ++k)
      queues[k % queues.size()].push_back(toVerify[k]);
    std::vector<std::thread> threads;
    for (size_t q = 0; q < queues.size(); ++q)
      threads.emplace_back(verifyQueue, queues[q], int(q));
    for (std::thread &t : threads)
      t.join();
  }
  res.gpu = gpuName;
  (void)verifyStart;
  phases.verified += unsigned(toVerify.size());
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
  timeIt = true;
  return res;
}

/// Steps 4 and 5 for one verified bundle: timing and statistics, one
/// bundle at a time (the GPU is the timing worker's alone).
void timeBundle(const Bundle &bundle, PreparedBundle &prep, EvalResults &res,
                const EvalOptions &opts, const Clock &clock, EvalPhaseTimes &phases) {
  auto progress = [&](const std::string &m) {
    if (opts.progress)
      opts.progress(m);
  };
  const std::string &work = prep.work;
  const std::vector<VariantSpec> &all = prep.all;
  std::string exe = workerPath(opts);
  double budgetLeft = opts.timeBudget > 0 ? opts.timeBudget : 1e30;
  // 4. Time the original and every verified variant in one session.
  double timingStart = clock.seconds();
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
    if (!opts.race)
      argv.push_back("--time-all");
    for (size_t i : timed) {
      argv.push_back("--id");
      argv.push_back(res.results[i].id);
    }
    progress("timing " + std::to_string(timed.size()) + " candidates for " +
             std::to_string(int(window)) + " s");
    std::string report = work + "/timing.txt";
    ::unlink(report.c_str());
    ProcessResult p = runWorkerRequest(opts, bundle, 0, argv, 2 * window + 120);
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
      else if (head == "window-s")
        phases.timingRounds += std::atof(rest.c_str());
      else if (head == "setup") {
        ++phases.setups;
        phases.keptSetups += rest == "kept";
      }
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

  phases.timing += clock.seconds() - timingStart;

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
}

} // namespace

std::vector<Expected<EvalResults>> evaluateBundles(const std::vector<Bundle> &bundles,
                                                   const EvalOptions &opts,
                                                   EvalPhaseTimes *phasesOut) {
  Clock clock;
  EvalPhaseTimes phases;
  if (!opts.compileCache.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opts.compileCache, ec); // a miss costs a compile only
  }
  std::vector<PreparedBundle> prepared;
  for (size_t b = 0; b < bundles.size(); ++b) {
    std::string dir = opts.workDir;
    if (!dir.empty() && bundles.size() > 1)
      dir += "/b" + std::to_string(b);
    prepared.push_back(prepareBundle(bundles[b], opts, dir));
  }
  // 2a. One compile pool over the variants of every bundle: a round of
  // several kernels costs one compile wave, not one per kernel.
  std::vector<CompileJob> jobs;
  for (const PreparedBundle &p : prepared)
    if (p.error.ok())
      jobs.insert(jobs.end(), p.jobs.begin(), p.jobs.end());
  int parallel = opts.jobs > 0 ? opts.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
  size_t compiled = 0;
  std::vector<CompileResult> cres = compileAll(jobs, parallel, [&](const CompileResult &r) {
    if (opts.progress)
      opts.progress("compile " + std::to_string(++compiled) + "/" + std::to_string(jobs.size()) +
                    " " + r.id);
  });
  phases.compile = clock.seconds();
  for (const CompileResult &r : cres)
    ++(r.cached ? phases.cached : phases.compiled);
  // 3. Verification of every bundle, a few bundles at a time (issue 15
  // item 5: a round of several kernels pays one verification wave, not one
  // worker start after another); nothing is timed while any verifies.
  std::vector<Expected<EvalResults>> out(bundles.size(), EvalResults{});
  std::vector<char> timeIt(bundles.size(), 0);
  {
    std::vector<std::vector<CompileResult>> mine(bundles.size());
    size_t at = 0;
    for (size_t b = 0; b < bundles.size(); ++b) {
      const PreparedBundle &p = prepared[b];
      if (!p.error.ok()) {
        out[b] = p.error;
        continue;
      }
      mine[b].assign(cres.begin() + at, cres.begin() + at + p.jobs.size());
      at += p.jobs.size();
    }
    double verifyStart = clock.seconds();
    std::atomic<size_t> next{0};
    std::mutex phasesMutex;
    auto verifier = [&] {
      for (size_t b; (b = next++) < bundles.size();) {
        if (!prepared[b].error.ok())
          continue;
        EvalPhaseTimes mineTimes;
        bool t = false;
        out[b] = verifyBundle(bundles[b], prepared[b], mine[b], opts, clock, mineTimes, t);
        timeIt[b] = t;
        std::lock_guard<std::mutex> lock(phasesMutex);
        phases.verified += mineTimes.verified;
        phases.setups += mineTimes.setups;
        phases.keptSetups += mineTimes.keptSetups;
      }
    };
    size_t n = std::min(bundles.size(), size_t(std::max(1, opts.bundlesParallel)));
    std::vector<std::thread> threads;
    for (size_t t = 0; t < n; ++t)
      threads.emplace_back(verifier);
    for (std::thread &t : threads)
      t.join();
    phases.verify += clock.seconds() - verifyStart;
  }
  // 4-5. Timing, one bundle after another.
  for (size_t b = 0; b < bundles.size(); ++b) {
    PreparedBundle &p = prepared[b];
    if (out[b].ok() && timeIt[b])
      timeBundle(bundles[b], p, *out[b], opts, clock, phases);
    // Not an `rm -rf` process: std::filesystem (the evaluator is plain C++,
    // without LLVM) removes symbolic links inside, never what they point to.
    if (p.error.ok() && !opts.keepWork && p.ownWork) {
      std::error_code ec;
      std::filesystem::remove_all(p.work, ec);
    }
  }
  if (phasesOut)
    *phasesOut = phases;
  return out;
}

Expected<EvalResults> evaluateBundle(const Bundle &bundle, const EvalOptions &opts) {
  return std::move(evaluateBundles({bundle}, opts).front());
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
