// Kernel-level plans judged by replay (issue 15 item 3): one capture of the
// instrumented program, then per batch one kernel bundle per kernel,
// evaluated by cudal1-eval in its own process (so that cudal1-opt itself
// links no CUDA library: the evaluator's workers need the driver anyway).
#include "cudal1/Tune/ReplayEvaluator.h"
#include "cudal1/Config.h"
#include "cudal1/Eval/CaptureBuild.h"
#include "cudal1/Eval/KeptWorkers.h"
#include "cudal1/Eval/KernelPlans.h"
#include "cudal1/Eval/Process.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/Rewrite/Instrument.h"
#include "cudal1/Rewrite/Reference.h"
#include "cudal1/Rewrite/Transform.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

namespace cudal1 {

namespace {

llvm::Error fail(const std::string &m) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), m);
}

Status writeText(const std::string &path, const std::string &text) {
  return writeFileAtomically(path, text.data(), text.size());
}

/// Adds the seconds from its construction to its destruction to `sum`, on
/// every way out of a scope.
class AddElapsed {
public:
  explicit AddElapsed(double &sum) : sum(sum) {}
  ~AddElapsed() {
    sum += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

private:
  double &sum;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

/// Launch-level transforms whose only host edit is the launch's grid and
/// block (checked in passes/LaunchConfig.cpp and passes/Coarsen.cpp); fuse,
/// streams and library rewrite host code around the launch.
bool launchConfigOnly(llvm::StringRef name) { return name == "launch-config" || name == "coarsen"; }

} // namespace

std::string evalExecutable(const ReplayOptions &o) {
  if (!o.evalExecutable.empty())
    return o.evalExecutable;
  if (const char *e = std::getenv("CUDAL1_EVAL"); e && *e)
    return e;
  std::string self = selfExecutablePath();
  llvm::SmallString<256> p(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(p, "cudal1-eval");
  if (llvm::sys::fs::can_execute(p))
    return std::string(p);
  return "cudal1-eval";
}

namespace {

std::string sourceTree(const ReplayOptions &o) {
  if (!o.sourceDir.empty())
    return o.sourceDir;
  if (const char *e = std::getenv("CUDAL1_SOURCE_DIR"); e && *e)
    return e;
  return std::string(llvm::sys::path::parent_path(config::includeDir));
}

/// The user's flags that matter to device code (defines, includes).
std::vector<std::string> deviceFlags(const ProgramSetup &setup) {
  std::vector<std::string> flags;
  for (const std::string &w : setup.build)
    if (w.rfind("-D", 0) == 0 || w.rfind("-I", 0) == 0 || w.rfind("-std", 0) == 0 ||
        w == "--use_fast_math")
      flags.push_back(w);
  return flags;
}

} // namespace

bool parseJudgeMode(const std::string &t, JudgeMode &out) {
  if (t == "program")
    out = JudgeMode::Program;
  else if (t == "replay")
    out = JudgeMode::Replay;
  else if (t == "auto")
    out = JudgeMode::Auto;
  else
    return false;
  return true;
}

std::string whyNotReplayable(const Plan &plan, size_t launchSites) {
  if (plan.steps.empty())
    return "the empty plan";
  for (const PlanStep &s : plan.steps) {
    const Transform *t = findTransform(s.transform);
    if (!t)
      return "unknown transform '" + s.transform + "'";
    if (!t->links().empty())
      return s.transform + " links a library";
    if (t->editsHostCode(s))
      return s.transform + " rewrites host code";
    switch (t->level()) {
    case Transform::Level::Kernel:
      break;
    case Transform::Level::Launch:
      if (!launchConfigOnly(s.transform))
        return s.transform + " rewrites host code";
      if (s.scope.launch >= 0 && launchSites != 1)
        return s.transform + " is scoped to one of the kernel's " + std::to_string(launchSites) +
               " launch sites";
      break;
    default:
      return s.transform + " is a host transform";
    }
  }
  return "";
}

LaunchRemap launchRemapOf(const Plan &plan) {
  // Each step says what it does to a launch's shape (Transform::remapLaunch).
  LaunchRemap r;
  for (const PlanStep &s : plan.steps)
    if (const Transform *t = findTransform(s.transform))
      if (std::optional<LaunchRemapStep> step = t->remapLaunch(s))
        r.steps.push_back(*step);
  return r;
}

std::string whyRemapNotWritten(const LaunchRemap &remap) {
  if (remap.empty())
    return "";
  Expected<LaunchRemap> back = parseLaunchRemap(remap.str());
  if (!back.ok())
    return back.error().message();
  if (*back != remap)
    return "launch remap " + remap.str() + " does not read back as itself";
  return "";
}

Expected<LaunchRemap> launchRemapFor(const Plan &plan, const std::string &bundleArgs) {
  std::vector<unsigned> sizes;
  for (const std::string &w : splitWords(bundleArgs)) {
    Expected<ArgType> t = parseArgType(w);
    if (!t.ok())
      return t.error();
    if (t->pointer)
      sizes.push_back(t->elem == ElemType::Bytes ? 0u : unsigned(elemSize(t->elem)));
  }
  LaunchRemap r;
  for (const PlanStep &s : plan.steps)
    if (const Transform *t = findTransform(s.transform)) {
      std::optional<LaunchRemapStep> step;
      if (std::string why = t->remapLaunchFor(s, sizes, step); !why.empty())
        return makeError(why);
      if (step)
        r.steps.push_back(*step);
    }
  return r;
}

LaunchOverride replayLaunch(const Plan &plan, const CapturedLaunch &c) {
  Expected<LaunchOverride> o = launchRemapOf(plan).overrideFor(c.grid, c.block);
  return o.ok() ? *o : LaunchOverride{};
}

Status writeKernelBundle(const std::string &dir, KernelBundleFiles f) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return makeError("cannot create ", dir, ": ", ec.message());
  Bundle &b = f.bundle;
  b.dir = dir;
  b.original.id = "original";
  b.original.source = "original.cu";
  if (Status s = writeText(dir + "/original.cu", f.originalSource); !s.ok())
    return s;
  if (b.hasReference) {
    b.reference.id = "reference";
    b.reference.source = "reference.cu";
    if (Status s = writeText(dir + "/reference.cu", f.referenceSource); !s.ok())
      return s;
  }
  for (size_t i = 0; i < b.variants.size(); ++i) {
    b.variants[i].source = b.variants[i].id + ".cu";
    if (Status s = writeText(dir + "/" + b.variants[i].source, f.variantSources[i]); !s.ok())
      return s;
  }
  b.captures.clear();
  for (size_t i = 0; i < f.captures.size(); ++i) {
    std::string name = "capture" + std::to_string(i) + ".bin";
    std::string to = dir + "/" + name;
    llvm::sys::fs::remove(to);
    if (llvm::sys::fs::create_link(f.captures[i], to))
      if (std::error_code ec = llvm::sys::fs::copy_file(f.captures[i], to))
        return makeError("cannot copy ", f.captures[i], ": ", ec.message());
    b.captures.push_back(name);
  }
  if (f.reductionLength)
    b.tolerance.reductionLength = int(std::min<uint64_t>(f.reductionLength, 1u << 30));
  return writeText(dir + "/manifest.txt", formatManifest(b));
}

ReplayEvaluator::ReplayEvaluator(RewriteInput in, TuneSpace sp, ProgramSetup s, ReplayOptions o)
    : input(std::move(in)), space(std::move(sp)), setup(std::move(s)), options(std::move(o)) {}

void ReplayEvaluator::stopWorkers() {
  if (!work.empty())
    stopKeptWorkers(keptWorkersDir());
}

ReplayEvaluator::~ReplayEvaluator() {
  if (background.joinable())
    background.join();
  if (referenceThread.joinable())
    referenceThread.join();
  stopWorkers();
  if (referencesAhead) // never captured: the derivations go unused
    for (llvm::Expected<ReferenceKernel> &r : *referencesAhead)
      if (!r)
        llvm::consumeError(r.takeError());
  if (!work.empty() && !options.keepWork)
    llvm::sys::fs::remove_directories(work, /*IgnoreErrors=*/true);
}

bool ReplayEvaluator::captured() {
  capture();
  return captureError.empty();
}

void ReplayEvaluator::startCapture() {
  if (startedCapture)
    return;
  startedCapture = true;
  AddElapsed stopwatch(phases.capture);
  Expected<std::string> tmp = makeTempDirectory("cudal1-replay");
  if (!tmp.ok()) {
    startError = tmp.error().message();
    return;
  }
  work = *tmp;
  captureFile = work + "/launches.capture";
  // Everything else in the background (issue 15 item 5), while the first
  // round's variants are derived here: 1. the instrumented program, parsed
  // and built with the user's command plus the capture runtime's two
  // sources, then 2. run once, recording every kernel's first launches (the
  // runtime's caps: CUDAL1_CAPTURE_MAX_LAUNCHES and _MAX_BYTES, inherited
  // when set); beside them, 3. every kernel's double reference, from one
  // parse of its own. Each thread touches only its own copies and its
  // results, read after the joins (awaitCapture).
  std::vector<std::string> keys;
  for (const TuneKernel &k : space.kernels)
    if (!k.host)
      keys.push_back(k.key);
  bool quiet = QuietParses::active();
  referenceThread = std::thread([this, in = input, keys, quiet] {
    std::optional<QuietParses> silence;
    if (quiet)
      silence.emplace();
    referencesAhead = deriveReferences(in, keys);
    referenceKeys = keys;
  });
  background = std::thread([this, in = input, buildWords = setup.build, runWords = setup.run,
                            tree = sourceTree(options), exe = work + "/instrumented", bundle = work,
                            file = captureFile, quiet, buildTimeout = options.buildTimeout,
                            runTimeout = options.runTimeout] {
    std::optional<QuietParses> silence;
    if (quiet)
      silence.emplace();
    // The capture runtime compiles while the program is instrumented.
    CaptureRuntimeBuild runtime(buildWords, tree, bundle, bundle, buildTimeout);
    llvm::Expected<std::string> inst = instrumentSource(in);
    if (!inst) {
      startError = "instrumenting: " + llvm::toString(inst.takeError());
      return;
    }
    std::string dir(llvm::sys::path::parent_path(in.file));
    if (dir.empty())
      dir = ".";
    // Beside the user's file, so that its quoted includes resolve.
    std::string src = dir + "/.cudal1-instrumented-" + std::to_string(::getpid()) + ".cu";
    if (Status s = writeText(src, *inst); !s.ok()) {
      startError = s.message();
      return;
    }
    std::vector<std::string> build =
        substitutePlaceholders(buildWords, {{"{src}", src}, {"{exe}", exe}, {"{bundle}", bundle}});
    for (std::string &w : runtime.linkWords())
      build.push_back(std::move(w));
    std::vector<std::string> run = substitutePlaceholders(runWords, {{"{exe}", exe}});
    buildResult = runProcess(build, buildTimeout);
    llvm::sys::fs::remove(src);
    if (buildResult.exited && buildResult.exitCode == 0)
      runResult = runProcess(run, runTimeout, {"CUDAL1_CAPTURE_FILE=" + file});
  });
}

void ReplayEvaluator::awaitCapture() {
  if (background.joinable() || referenceThread.joinable()) {
    AddElapsed stopwatch(phases.capture);
    if (background.joinable())
      background.join();
    if (referenceThread.joinable())
      referenceThread.join();
  }
}

void ReplayEvaluator::capture() {
  if (didCapture)
    return;
  didCapture = true;
  startCapture();
  awaitCapture();
  AddElapsed stopwatch(phases.capture); // every return below ends the capture
  auto note = [&](const std::string &m) {
    if (options.note)
      options.note(m);
  };
  kernels.assign(space.kernels.size(), {});
  auto refuseAll = [&](const std::string &why) {
    captureError = why;
    note("replay: " + why + "; every plan is judged as a whole program");
  };
  if (!startError.empty())
    return refuseAll(startError);
  const ProcessResult &br = buildResult, &rr = runResult;
  phases.captureBuild += br.seconds;
  phases.captureRun += rr.seconds;
  if (!br.exited || br.exitCode != 0)
    return refuseAll("the instrumented program does not build (" + br.describe() +
                     "): " + br.output.substr(0, 2000));
  if (!rr.exited || rr.exitCode != 0)
    return refuseAll("the instrumented program failed (" + rr.describe() + ")");
  if (!llvm::sys::fs::exists(captureFile)) {
    // The runtime writes nothing when every launch was refused; its own
    // lines say why (a cap, globals it cannot restore).
    std::string why;
    std::istringstream lines(rr.output);
    for (std::string l; std::getline(lines, l);)
      if (l.rfind("cudal1-capture:", 0) == 0 && why.size() < 600)
        why += (why.empty() ? "" : "; ") + l.substr(16);
    return refuseAll("no launch was captured" + (why.empty() ? std::string() : ": " + why));
  }
  Expected<CaptureFile> cf = readCaptureFile(captureFile);
  if (!cf.ok())
    return refuseAll("the capture is unusable: " + cf.error().message());
  // 3. Per kernel: its launches, its entry, its reference.
  std::vector<size_t> captured; // kernels with launches, parallel to `refs`
  std::vector<std::string> keys;
  for (size_t k = 0; k < space.kernels.size(); ++k) {
    KernelCapture &kc = kernels[k];
    const TuneKernel &tk = space.kernels[k];
    if (tk.host) {
      kc.refusal = "host code";
      continue;
    }
    for (const CapturedLaunch &l : cf->launches)
      if (l.kernelKey == tk.key)
        kc.launches.push_back(l);
    if (kc.launches.empty()) {
      kc.refusal = "no launch of " + tk.name +
                   " was captured (it reads __constant__/__device__ memory, its buffers are "
                   "not device allocations, or it did not run)";
      note("replay: " + kc.refusal + "; its plans are judged as a whole program");
      continue;
    }
    captured.push_back(k);
    keys.push_back(tk.key);
  }
  // The captured kernels' references, derived beside the capture from one
  // parse (a parse each cost about a second on the GPU machine).
  std::vector<llvm::Expected<ReferenceKernel>> refs;
  if (referencesAhead) {
    for (const std::string &key : keys) {
      auto at = std::find(referenceKeys.begin(), referenceKeys.end(), key);
      if (at != referenceKeys.end())
        refs.push_back(std::move((*referencesAhead)[size_t(at - referenceKeys.begin())]));
      else
        refs.push_back(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                               "no reference was derived for '%s'", key.c_str()));
    }
    // The references of kernels that were not captured are not used.
    for (llvm::Expected<ReferenceKernel> &r : *referencesAhead)
      if (!r)
        llvm::consumeError(r.takeError());
    referencesAhead.reset();
  } else {
    refs = deriveReferences(input, keys);
  }
  size_t usable = 0;
  for (size_t j = 0; j < captured.size(); ++j) {
    size_t k = captured[j];
    KernelCapture &kc = kernels[k];
    const TuneKernel &tk = space.kernels[k];
    llvm::Expected<ReferenceKernel> &ref = refs[j];
    if (!ref) {
      // Without a reference the bundle needs the argument types from
      // elsewhere; until then such kernels stay at program level.
      kc.referenceRefusal = llvm::toString(ref.takeError());
      kc.refusal = "no double reference (" + kc.referenceRefusal + ")";
      note("replay: " + tk.name + ": " + kc.refusal + "; its plans are judged as a whole program");
      continue;
    }
    kc.haveReference = true;
    kc.referenceSource = ref->source;
    kc.referenceEntry = ref->entry;
    kc.args = ref->bundleArgs();
    kc.entry = ref->originalEntry;
    for (const CapturedLaunch &l : kc.launches) {
      LaunchShape shape;
      for (int d = 0; d < 3; ++d) {
        shape.grid[d] = l.grid[d];
        shape.block[d] = l.block[d];
      }
      auto scalar = [&](unsigned i) -> std::optional<int64_t> {
        if (i >= l.args.size() || l.args[i].isPointer || l.args[i].bytes.empty() ||
            l.args[i].bytes.size() > 8)
          return std::nullopt;
        int64_t v = 0;
        std::memcpy(&v, l.args[i].bytes.data(), l.args[i].bytes.size());
        if (l.args[i].bytes.size() == 4)
          v = int32_t(v);
        return v;
      };
      shape.scalar = scalar;
      kc.reductionLength = std::max(kc.reductionLength, reductionLength(*ref, shape));
    }
    // Its own capture file: every worker of its bundles reads (and checks
    // the checksum of) only this kernel's launches, not every kernel's.
    CaptureFile own;
    own.launches = kc.launches;
    std::string ownFile = work + "/capture-" + std::to_string(k) + ".bin";
    kc.captureFile = writeCaptureFile(ownFile, own).ok() ? ownFile : captureFile;
    ++usable;
  }
  if (!usable)
    captureError = "no kernel could be replayed";
  else
    note("replay: captured " + std::to_string(cf->launches.size()) + " launch(es); " +
         std::to_string(usable) + " kernel(s) judged by replay against the double reference");
}

std::string ReplayEvaluator::refusesWithoutCapture(const Candidate &c) const {
  if (c.kernel >= space.kernels.size())
    return "a combination across kernels";
  if (c.wholeProgram)
    return "a best plan measured once more as a whole program, for the final choice";
  return whyNotReplayable(c.variant.plan, space.kernels[c.kernel].launches.size());
}

std::string ReplayEvaluator::accepts(const Candidate &c) {
  AddElapsed judging(phases.accepts); // the first call waits for the capture
  // The capture run may have the GPU: nothing is judged beside it.
  awaitCapture();
  if (std::string why = refusesWithoutCapture(c); !why.empty())
    return why;
  capture();
  if (!captureError.empty())
    return captureError;
  const KernelCapture &kc = kernels[c.kernel];
  if (!kc.refusal.empty())
    return kc.refusal;
  Expected<LaunchRemap> r = replayRemap(c.variant.plan, kc);
  return r.ok() ? "" : r.error().message();
}

Expected<LaunchRemap> ReplayEvaluator::replayRemap(const Plan &plan, const KernelCapture &kc) {
  // The worker applies the remap to each captured launch on its own
  // (bundle.md, remap=): every one must give a CUDA launch.
  Expected<LaunchRemap> remap = launchRemapFor(plan, kc.args);
  if (!remap.ok())
    return remap.error();
  if (Status s = remap->checkLaunches(kc.launches); !s.ok())
    return s;
  if (std::string why = whyRemapNotWritten(*remap); !why.empty())
    return makeError(why);
  return remap;
}

llvm::Expected<std::vector<Measurement>>
ReplayEvaluator::evaluate(const std::vector<Candidate> &cands) {
  AddElapsed addWall(phases.wall);
  std::vector<Measurement> out(cands.size());
  std::map<size_t, std::vector<size_t>> byKernel;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (std::string why = accepts(cands[i]); !why.empty())
      return fail("replay cannot judge " + cands[i].id + ": " + why);
    byKernel[cands[i].kernel].push_back(i);
  }
  ++batch;
  // Every kernel's bundle of this batch goes to one cudal1-eval: its
  // variants compile in one pool, the original and the reference come from
  // the session's compile cache after the first batch.
  std::vector<std::string> bundleDirs;
  for (auto &[k, idx] : byKernel) {
    const KernelCapture &kc = kernels[k];
    const TuneKernel &tk = space.kernels[k];
    KernelBundleFiles f;
    Bundle &b = f.bundle;
    b.kernelKey = tk.key;
    b.entry = kc.entry;
    b.arch = options.arch;
    b.compiler = "nvcc"; // the whole unit, host main included
    for (const std::string &w : splitWords(kc.args)) {
      Expected<ArgType> t = parseArgType(w);
      if (!t.ok())
        return fail("replay: " + tk.name + ": argument type '" + w + "': " + t.error().message());
      b.args.push_back(*t);
    }
    b.flags = deviceFlags(setup);
    std::string dir(llvm::sys::path::parent_path(input.file));
    b.flags.push_back("-I" + (dir.empty() ? std::string(".") : dir));
    f.originalSource = input.code;
    b.hasReference = kc.haveReference;
    b.reference.entry = kc.referenceEntry;
    f.referenceSource = kc.referenceSource;
    f.reductionLength = kc.haveReference ? 0 : kc.reductionLength;
    f.captures = {kc.captureFile};
    for (size_t i : idx) {
      const Candidate &c = cands[i];
      VariantSpec v;
      v.id = c.id;
      // The original's mangled name: the worker finds the kernel of that
      // name when a plan changed its signature (Eval/EntryName.h); a parse
      // per variant for its own name cost about a second each.
      v.entry = kc.entry;
      v.fastMath = c.variant.fastMath;
      Expected<LaunchRemap> r = replayRemap(c.variant.plan, kc);
      if (!r.ok()) // accepts() said yes
        return fail("replay cannot judge " + c.id + ": " + r.error().message());
      v.remap = r->steps;
      b.variants.push_back(v);
      f.variantSources.push_back(c.variant.source);
    }
    std::string bdir = work + "/b" + std::to_string(batch) + "-" + std::to_string(k);
    if (Status s = writeKernelBundle(bdir, std::move(f)); !s.ok())
      return fail("replay: " + s.message());
    bundleDirs.push_back(bdir);
  }
  std::string phasesFile = work + "/phases" + std::to_string(batch) + ".txt";
  // One worker per kernel stays alive across batches with its set-up
  // (context, captured launches, reference outputs): the destructor stops
  // them.
  std::vector<std::string> argv = {evalExecutable(options),
                                   "--seed",
                                   std::to_string(batch),
                                   "--compile-cache",
                                   work + "/cubins",
                                   "--phases",
                                   phasesFile,
                                   "--keep-workers",
                                   keptWorkersDir()};
  // An original verified by an earlier batch is not verified again: same
  // source, capture and reference (its cubin comes from the cache too).
  if (std::all_of(byKernel.begin(), byKernel.end(),
                  [&](const auto &kv) { return originalVerified.count(kv.first) > 0; }))
    argv.push_back("--original-verified");
  argv.insert(argv.end(), options.evalArgs.begin(), options.evalArgs.end());
  argv.insert(argv.end(), bundleDirs.begin(), bundleDirs.end());
  ProcessResult pr = runProcess(argv, options.evalTimeout);
  phases.eval += pr.seconds;
  if (!pr.exited || pr.exitCode != 0)
    return fail("replay: cudal1-eval failed (" + pr.describe() +
                "): " + pr.output.substr(pr.output.size() > 2000 ? pr.output.size() - 2000 : 0));
  readPhases(phasesFile);
  ++phases.batches;
  phases.variants += unsigned(cands.size());
  size_t bundleAt = 0;
  for (auto &[k, idx] : byKernel) {
    const KernelCapture &kc = kernels[k];
    const std::string &bdir = bundleDirs[bundleAt++];
    Expected<EvalResults> res = readResults(bdir + "/results.txt");
    if (!res.ok())
      return fail("replay: " + res.error().message());
    gpu = res->gpu;
    const VariantResult &orig = res->results.front();
    if (orig.outcome == Outcome::Ok)
      originalVerified.insert(k);
    for (size_t i : idx) {
      const VariantResult *v = res->find(cands[i].id);
      out[i] = v ? candidateMeasurement(*v, orig) : Measurement{};
      out[i].judge = v && v->verifyMode.rfind("fallback", 0) == 0 ? Judge::ReplayFallback
                                                                  : Judge::ReplayReference;
      out[i].details.push_back("judged by replay of " + std::to_string(kc.launches.size()) +
                               " captured launch(es); times are the kernel's own");
    }
  }
  return out;
}

void ReplayEvaluator::readPhases(const std::string &path) {
  Expected<std::vector<uint8_t>> text = readWholeFile(path);
  if (!text.ok())
    return; // the times are for people; the results are what counts
  std::istringstream in(std::string(text->begin(), text->end()));
  std::string name;
  double value;
  while (in >> name >> value) {
    if (name == "compile")
      phases.compile += value;
    else if (name == "verify")
      phases.verify += value;
    else if (name == "timing")
      phases.timing += value;
    else if (name == "timing-rounds")
      phases.timingRounds += value;
    else if (name == "compiled")
      phases.compiled += unsigned(value);
    else if (name == "cached")
      phases.cached += unsigned(value);
    else if (name == "verified")
      phases.verified += unsigned(value);
    else if (name == "setups")
      phases.setups += unsigned(value);
    else if (name == "kept-setups")
      phases.keptSetups += unsigned(value);
  }
}

llvm::Expected<size_t> writeKernelPlansPart(const std::string &dir, const RewriteInput &input,
                                            const TuneSpace &space, const ProgramSetup &setup,
                                            const std::vector<Candidate> &cands,
                                            const ReplayOptions &options) {
  auto note = [&](const std::string &m) {
    if (options.note)
      options.note(m);
  };
  std::string kdir = dir + "/kernels";
  // A part written by an earlier emit into this directory, results included,
  // never stays behind.
  if (std::error_code ec = llvm::sys::fs::remove_directories(kdir))
    return fail("cannot remove " + kdir + ": " + ec.message());
  llvm::sys::fs::remove(dir + "/instrumented.cu");
  KernelPlans plans;
  plans.arch = options.arch;
  plans.flags = deviceFlags(setup);
  std::map<size_t, std::vector<size_t>> byKernel;
  // Plans that change the launch carry their remap (launch=): cudal1-eval
  // applies it to the captured launches, with the tuner's arithmetic.
  for (size_t i = 0; i < cands.size(); ++i) {
    const Candidate &c = cands[i];
    if (c.kernel >= space.kernels.size() || c.wholeProgram || space.kernels[c.kernel].host ||
        !whyNotReplayable(c.variant.plan, space.kernels[c.kernel].launches.size()).empty())
      continue;
    if (std::string why = whyRemapNotWritten(launchRemapOf(c.variant.plan)); !why.empty()) {
      note("split path: " + c.id + ": " + why + "; judged as a whole program");
      continue;
    }
    byKernel[c.kernel].push_back(i);
  }
  std::vector<std::pair<std::string, std::string>> references; // file, source
  std::vector<std::string> keys;
  for (auto &[k, idx] : byKernel)
    keys.push_back(space.kernels[k].key);
  std::vector<llvm::Expected<ReferenceKernel>> refs = deriveReferences(input, keys);
  size_t at = 0; // refs are in byKernel's order
  for (auto &[k, idx] : byKernel) {
    const TuneKernel &tk = space.kernels[k];
    llvm::Expected<ReferenceKernel> &ref = refs[at++];
    if (!ref) {
      note("split path: " + tk.name + ": no double reference (" + llvm::toString(ref.takeError()) +
           "); its plans are judged as whole programs");
      continue;
    }
    KernelPlanKernel pk;
    pk.key = tk.key;
    pk.name = tk.name;
    pk.entry = ref->originalEntry;
    pk.args = ref->bundleArgs();
    pk.reference = "ref" + std::to_string(plans.kernels.size()) + ".cu";
    pk.referenceEntry = ref->entry;
    references.emplace_back(pk.reference, ref->source);
    plans.kernels.push_back(pk);
    for (size_t i : idx) {
      const Candidate &c = cands[i];
      // With the kernel's argument types: vectorize's lanes need them.
      Expected<LaunchRemap> remap = launchRemapFor(c.variant.plan, pk.args);
      std::string why = remap.ok() ? whyRemapNotWritten(*remap) : remap.error().message();
      if (!why.empty()) {
        note("split path: " + c.id + ": " + why + "; judged as a whole program");
        continue;
      }
      KernelPlanVariant v;
      v.id = c.id;
      v.kernelKey = tk.key;
      v.entry = pk.entry; // as in ReplayEvaluator::evaluate
      v.fastMath = c.variant.fastMath;
      v.launch = *remap;
      plans.variants.push_back(v);
    }
  }
  if (plans.variants.empty())
    return 0;
  llvm::Expected<std::string> inst = instrumentSource(input);
  if (!inst) {
    note("split path: instrumenting: " + llvm::toString(inst.takeError()) +
         "; every plan is judged as a whole program");
    return 0;
  }
  std::string tree = sourceTree(options);
  for (const std::string &f : captureRuntimeFiles()) {
    std::string to = kdir + "/" + plans.runtime + "/" + f;
    if (std::error_code ec = llvm::sys::fs::create_directories(llvm::sys::path::parent_path(to)))
      return fail("cannot create the directory of " + to + ": " + ec.message());
    Expected<std::vector<uint8_t>> text = readWholeFile(tree + "/" + f);
    if (!text.ok())
      return fail("the capture runtime (set $CUDAL1_SOURCE_DIR to the cudal1 source tree): " +
                  text.error().message());
    if (Status s = writeFileAtomically(to, text->data(), text->size()); !s.ok())
      return fail(s.message());
  }
  if (Status s = writeText(dir + "/" + plans.instrumented, *inst); !s.ok())
    return fail(s.message());
  for (const auto &[file, source] : references)
    if (Status s = writeText(kdir + "/" + file, source); !s.ok())
      return fail(s.message());
  if (Status s = writeKernelPlans(plans, kdir); !s.ok())
    return fail(s.message());
  return plans.variants.size();
}

JudgingEvaluator::JudgingEvaluator(VariantEvaluator &r, Why ok, VariantEvaluator &p,
                                   std::function<void(const std::string &)> n, Why only)
    : replay(r), program(p), replayable(std::move(ok)), programOnly(std::move(only)),
      note(std::move(n)) {}

std::string JudgingEvaluator::gpuName() const {
  std::string g = program.gpuName();
  return g.empty() ? replay.gpuName() : g;
}

llvm::Expected<std::vector<Measurement>>
JudgingEvaluator::evaluate(const std::vector<Candidate> &cands) {
  // The whole programs build while the replay has the GPU (issue 15 item
  // 5). Those the plan alone sends there start before `replayable`, which
  // in the first round waits for the capture's build and run; the rest
  // that the capture refuses start after it. A round with nothing to
  // replay builds in program.evaluate on every core instead.
  std::vector<bool> decided(cands.size(), false);
  // Declared before the threads that read them, so they outlive the joins.
  std::vector<Candidate> early, late;
  if (programOnly)
    for (size_t i = 0; i < cands.size(); ++i)
      if (!programOnly(cands[i]).empty()) {
        decided[i] = true;
        early.push_back(cands[i]);
      }
  std::vector<std::thread> building;
  struct JoinAtExit {
    std::vector<std::thread> &ts;
    ~JoinAtExit() {
      for (std::thread &t : ts)
        if (t.joinable())
          t.join();
    }
  } joinAtExit{building};
  bool mayReplay = std::find(decided.begin(), decided.end(), false) != decided.end();
  if (mayReplay && !early.empty())
    building.emplace_back([this, &early] { program.prepare(early); });

  std::vector<Candidate> toReplay, toProgram;
  std::vector<size_t> replayAt, programAt;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (decided[i] || !replayable(cands[i]).empty()) {
      if (!decided[i])
        late.push_back(cands[i]);
      toProgram.push_back(cands[i]);
      programAt.push_back(i);
    } else {
      toReplay.push_back(cands[i]);
      replayAt.push_back(i);
    }
  }
  if (!toReplay.empty() && !late.empty())
    building.emplace_back([this, &late] { program.prepare(late); });
  std::vector<Measurement> out(cands.size());
  if (!toReplay.empty()) {
    llvm::Expected<std::vector<Measurement>> r = replay.evaluate(toReplay);
    if (!r) {
      if (note)
        note("replay failed, judging its " + std::to_string(toReplay.size()) +
             " variant(s) as whole programs: " + llvm::toString(r.takeError()));
      for (size_t j = 0; j < toReplay.size(); ++j) {
        toProgram.push_back(toReplay[j]);
        programAt.push_back(replayAt[j]);
      }
    } else {
      for (size_t j = 0; j < r->size(); ++j)
        out[replayAt[j]] = std::move((*r)[j]);
    }
  }
  // What they built is found in the cache once they are done.
  auto waitStart = std::chrono::steady_clock::now();
  for (std::thread &t : building)
    t.join();
  buildWait += std::chrono::duration<double>(std::chrono::steady_clock::now() - waitStart).count();
  if (!toProgram.empty()) {
    llvm::Expected<std::vector<Measurement>> p = program.evaluate(toProgram);
    if (!p)
      return p.takeError();
    for (size_t j = 0; j < p->size(); ++j) {
      out[programAt[j]] = std::move((*p)[j]);
      out[programAt[j]].judge = Judge::Program;
    }
  }
  return out;
}

} // namespace cudal1
