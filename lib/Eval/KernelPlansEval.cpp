//===- KernelPlansEval.cpp - The kernel part of a split-path bundle -------===//
//
// On the GPU machine (cudal1-eval BUNDLE): the instrumented program is
// built with the bundle's build command and the capture runtime, run once
// to capture each kernel's launches, then each captured kernel's variants
// are written as a kernel bundle (docs/formats/bundle.md) and judged by
// replay against the double reference, as `--tune` does
// (lib/Tune/ReplayEvaluator.cpp). What could not be replayed is left to the
// program bundle, with a remark in kernels/status.txt.
//
//===----------------------------------------------------------------------===//
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/CaptureBuild.h"
#include "cudal1/Eval/EvalDriver.h"
#include "cudal1/Eval/KernelPlans.h"
#include "cudal1/Eval/Process.h"

#include <climits>
#include <cstdlib>
#include <sys/stat.h>

namespace cudal1 {

namespace {

std::string absolute(const std::string &path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf))
    return buf;
  return path;
}

Status copyFile(const std::string &from, const std::string &to) {
  Expected<std::vector<uint8_t>> data = readWholeFile(from);
  if (!data.ok())
    return data.error();
  return writeFileAtomically(to, data->data(), data->size());
}

std::string text(const std::vector<uint8_t> &bytes) {
  return std::string(bytes.begin(), bytes.end());
}

/// The lines the capture runtime printed about what it refused.
std::string runtimeRemarks(const std::string &output) {
  std::string why;
  size_t at = 0;
  while (at < output.size()) {
    size_t end = output.find('\n', at);
    std::string l = output.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? output.size() : end + 1;
    if (l.rfind("cudal1-capture:", 0) == 0 && why.size() < 600)
      why += (why.empty() ? "" : "; ") + l.substr(16);
  }
  return why;
}

} // namespace

Expected<std::set<std::string>> evaluateKernelPlans(const ProgramBundle &program,
                                                    const KernelPlanRun &run) {
  std::string bundleDir = absolute(program.dir);
  std::string kdir = bundleDir + "/kernels";
  Expected<KernelPlans> plans = readKernelPlans(kdir);
  if (!plans.ok())
    return plans.error();
  KernelPlansStatus st;
  for (const KernelPlanKernel &k : plans->kernels)
    st.kernels.push_back({k.key, false, 0, "", ""});
  std::set<std::string> replayed;
  auto say = [&](const std::string &m) {
    if (run.say)
      run.say(m);
  };
  // Every kernel to the program level with one remark.
  auto none = [&](const std::string &why) -> Expected<std::set<std::string>> {
    st.remark = why;
    for (KernelPlanStatus &k : st.kernels)
      if (k.remark.empty())
        k.remark = why;
    say("kernel plans: " + why + "; their " + std::to_string(plans->variants.size()) +
        " variant(s) are judged as whole programs");
    if (Status s = writeKernelPlansStatus(st, kdir); !s.ok())
      return s;
    return std::set<std::string>{};
  };
  if (plans->variants.empty())
    return none("no kernel-level variant");

  // 1. The instrumented program, built with the bundle's command plus the
  // capture runtime's two sources.
  Expected<std::string> tmp = makeTempDirectory("cudal1-capture");
  if (!tmp.ok())
    return none(tmp.error().message());
  std::string work = *tmp;
  std::string src = bundleDir + "/" + plans->instrumented;
  std::string exe = work + "/instrumented";
  std::string runtime = kdir + "/" + plans->runtime;
  say("kernel plans: building the instrumented program");
  CaptureRuntimeBuild runtimeBuild(program.build, runtime, work, bundleDir, run.buildTimeout);
  std::vector<std::string> build = substitutePlaceholders(
      program.build, {{"{src}", src}, {"{exe}", exe}, {"{bundle}", bundleDir}});
  for (std::string &w : runtimeBuild.linkWords())
    build.push_back(std::move(w));
  ProcessResult br = runProcess(build, run.buildTimeout);
  if (!br.exited || br.exitCode != 0)
    return none("the instrumented program does not build (" + br.describe() +
                "): " + br.output.substr(0, 600));
  // 2. One run records every kernel's first launches (the runtime's caps:
  // CUDAL1_CAPTURE_MAX_LAUNCHES and _MAX_BYTES, inherited when set).
  std::string captureFile = work + "/launches.capture";
  std::vector<std::string> runArgv =
      substitutePlaceholders(program.run, {{"{exe}", exe}, {"{bundle}", bundleDir}});
  say("kernel plans: capturing the launches");
  ProcessResult rr = runProcess(runArgv, run.runTimeout, {"CUDAL1_CAPTURE_FILE=" + captureFile});
  if (!rr.exited || rr.exitCode != 0)
    return none("the instrumented program failed (" + rr.describe() + ")");
  struct stat sb;
  if (::stat(captureFile.c_str(), &sb) != 0) {
    std::string why = runtimeRemarks(rr.output);
    return none("no launch was captured" + (why.empty() ? std::string() : ": " + why));
  }
  Expected<CaptureFile> cf = readCaptureFile(captureFile);
  if (!cf.ok())
    return none("the capture is unusable: " + cf.error().message());

  // 3. One kernel bundle per captured kernel: its launches alone, the
  // original, its reference and its variants (all of the unit, compiled by
  // nvcc with the kernel's mangled name as entry).
  Expected<std::vector<uint8_t>> original = readWholeFile(program.path(program.original.source));
  if (!original.ok())
    return none(original.error().message());
  std::vector<Bundle> bundles;
  std::vector<size_t> bundleKernel;
  for (size_t k = 0; k < plans->kernels.size(); ++k) {
    const KernelPlanKernel &pk = plans->kernels[k];
    KernelPlanStatus &ks = st.kernels[k];
    CaptureFile own;
    for (const CapturedLaunch &l : cf->launches)
      if (l.kernelKey == pk.key)
        own.launches.push_back(l);
    ks.launches = unsigned(own.launches.size());
    if (own.launches.empty()) {
      ks.remark = "no launch of " + pk.name +
                  " was captured (it reads __constant__/__device__ memory, its buffers are not "
                  "device allocations, or it did not run)";
      continue;
    }
    std::string name = "k" + std::to_string(k);
    std::string dir = kdir + "/" + name;
    ::mkdir(dir.c_str(), 0777);
    Bundle b;
    b.dir = dir;
    b.kernelKey = pk.key;
    b.entry = pk.entry;
    b.arch = plans->arch;
    b.compiler = "nvcc"; // the whole unit, host main included
    b.flags = plans->flags;
    b.flags.push_back("-I" + bundleDir); // the user's headers, copied beside original.cu
    Status failed = Status::success();
    for (const std::string &w : splitWords(pk.args)) {
      Expected<ArgType> t = parseArgType(w);
      if (!t.ok()) {
        failed = makeError("argument type '", w, "': ", t.error().message());
        break;
      }
      b.args.push_back(*t);
    }
    if (failed.ok())
      failed = writeCaptureFile(dir + "/capture0.bin", own);
    b.captures = {"capture0.bin"};
    b.original = {"original", "original.cu", pk.entry};
    if (failed.ok())
      failed = writeFileAtomically(dir + "/original.cu", original->data(), original->size());
    b.hasReference = true;
    b.reference = {"reference", "reference.cu", pk.referenceEntry};
    if (failed.ok())
      failed = copyFile(kdir + "/" + pk.reference, dir + "/reference.cu");
    for (const KernelPlanVariant &v : plans->variants) {
      if (v.kernelKey != pk.key || !failed.ok())
        continue;
      const ProgramVariant *pv = nullptr;
      for (const ProgramVariant &x : program.variants)
        if (x.id == v.id)
          pv = &x;
      if (!pv) {
        failed = makeError("variant ", v.id, " is not in the program bundle");
        break;
      }
      VariantSpec spec;
      spec.id = v.id;
      spec.source = v.id + ".cu";
      spec.entry = v.entry;
      spec.fastMath = v.fastMath;
      // The plan's launch remap, applied by the worker to each captured
      // launch as the tuner's replay applies it; a launch it cannot
      // express sends the variant to the whole program.
      if (Status ok = v.launch.checkLaunches(own.launches); !ok.ok()) {
        st.variants.push_back({v.id, ok.message()});
        say("kernel plans: " + v.id + ": " + ok.message() + "; judged as a whole program");
        continue;
      }
      spec.remap = v.launch.steps;
      b.variants.push_back(spec);
      failed = copyFile(program.path(pv->source), dir + "/" + spec.source);
    }
    if (failed.ok())
      failed = writeManifest(b, dir);
    if (!failed.ok()) {
      ks.remark = "its kernel bundle could not be written: " + failed.message();
      continue;
    }
    Expected<Bundle> back = readBundle(dir);
    if (!back.ok()) {
      ks.remark = "its kernel bundle is unreadable: " + back.error().message();
      continue;
    }
    bundles.push_back(back.take());
    bundleKernel.push_back(k);
    ks.results = name;
  }
  if (bundles.empty()) {
    std::string why = "no kernel of the manifest could be replayed";
    st.remark = why;
    say("kernel plans: " + why);
    if (Status s = writeKernelPlansStatus(st, kdir); !s.ok())
      return s;
    return replayed;
  }

  // 4. Replay: all variants compiled in one pool, each kernel verified and
  // timed in turn.
  say("kernel plans: replaying " + std::to_string(bundles.size()) + " kernel(s)");
  std::vector<Expected<EvalResults>> results = evaluateBundles(bundles, run.options, run.phases);
  for (size_t b = 0; b < bundles.size(); ++b) {
    KernelPlanStatus &ks = st.kernels[bundleKernel[b]];
    if (!results[b].ok()) {
      ks.remark = "replay failed: " + results[b].error().message();
      continue;
    }
    EvalResults &r = *results[b];
    if (r.results.empty() || r.results.front().outcome != Outcome::Ok) {
      ks.remark = "the original did not replay correctly (" +
                  (r.results.empty() ? std::string("no result")
                                     : std::string(outcomeName(r.results.front().outcome))) +
                  ")";
      continue;
    }
    // Bound to what was measured: the program bundle's plan hash and the
    // bytes compiled (checked at import like the program results).
    for (VariantResult &v : r.results) {
      std::string manifestHash = program.original.hash;
      std::string source = bundles[b].original.source;
      for (const VariantSpec &spec : bundles[b].variants)
        if (spec.id == v.id)
          source = spec.source;
      for (const ProgramVariant &x : program.variants)
        if (x.id == v.id)
          manifestHash = x.hash;
      Expected<std::vector<uint8_t>> bytes = readWholeFile(bundles[b].path(source));
      v.hash = bytes.ok() ? measuredHash(manifestHash, text(*bytes)) : "";
    }
    if (Status s = writeResults(bundles[b].dir + "/results.txt", r); !s.ok()) {
      ks.remark = s.message();
      continue;
    }
    say("kernel plans: " + plans->kernels[bundleKernel[b]].name + " by replay (" + bundles[b].dir +
        "/results.txt):\n" + formatSummary(r));
    ks.replayed = true;
    ks.remark.clear();
    for (const VariantSpec &spec : bundles[b].variants)
      replayed.insert(spec.id);
  }
  if (!run.keepWork)
    runProcess({"rm", "-rf", work}, 60);
  if (Status s = writeKernelPlansStatus(st, kdir); !s.ok())
    return s;
  unsigned kernels = 0;
  for (const KernelPlanStatus &k : st.kernels)
    kernels += k.replayed;
  say("kernel plans: " + std::to_string(replayed.size()) + " variant(s) of " +
      std::to_string(kernels) + " kernel(s) judged by replay against the double reference");
  for (const KernelPlanStatus &k : st.kernels)
    if (!k.replayed)
      say("kernel plans: " + k.key + ": " + k.remark + "; its plans are judged as whole programs");
  return replayed;
}

} // namespace cudal1
