// Kernel-level plans judged by replay inside `--tune` (issue 15 item 3):
// the instrumented program is built and run once to capture each kernel's
// launches, then every plan that changes only device code and launch
// configuration is written as a kernel bundle (docs/formats/bundle.md) and
// evaluated by cudal1-eval against the derived double reference. The
// judging evaluator sends each candidate to replay or to the program
// evaluator.
#ifndef CUDAL1_TUNE_REPLAYEVALUATOR_H
#define CUDAL1_TUNE_REPLAYEVALUATOR_H

#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/LaunchRemap.h"
#include "cudal1/Eval/Process.h"
#include "cudal1/Eval/Results.h"
#include "cudal1/Rewrite/Reference.h"
#include "cudal1/Tune/ProgramEvaluator.h"
#include "cudal1/Tune/Tuner.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cudal1 {

/// `--judge program|replay|auto`: auto (the default) replays kernel-level
/// plans when the capture succeeded; replay is the same but says so when a
/// kernel cannot be replayed; program judges everything by running it.
enum class JudgeMode { Program, Replay, Auto };
bool parseJudgeMode(const std::string &text, JudgeMode &out);

/// "" when every step of the plan changes only device code or the launch
/// configuration (Transform::Level::Kernel, or launch-config and coarsen,
/// which edit nothing on the host but the launch's grid and block);
/// otherwise why the plan must run as a whole program. `launchSites` is
/// the number of launch sites of the kernel: a step scoped to one launch
/// (`@#3:`) of a kernel with several cannot be told apart in the captures.
std::string whyNotReplayable(const Plan &plan, size_t launchSites);

/// What a plan does to its kernel's launches: each step's
/// Transform::remapLaunch in the plan's order (launch-config: the same
/// threads in blocks of the new shape; coarsen: grid.x / F; warp-rows:
/// rows to lanes; stage-shared: tiles), empty when no step changes them.
/// The split path writes it into the kernel part (launch=) and cudal1-eval
/// applies it there with the same code (cudal1/Eval/LaunchRemap.h).
LaunchRemap launchRemapOf(const Plan &plan);
/// launchRemapOf for a kernel of these bundle argument types ("f32*
/// f32*w i32", ReferenceKernel::bundleArgs): the steps whose launch
/// arithmetic depends on the element size (vectorize) take it from the
/// pointer arguments (Transform::remapLaunchFor); an error says why the
/// remap cannot be known, and the plan is judged as a whole program.
Expected<LaunchRemap> launchRemapFor(const Plan &plan, const std::string &bundleArgs);
/// "" when `remap` can go into a kernel part's manifest (its text reads
/// back as itself); otherwise why the plan is judged as a whole program.
std::string whyRemapNotWritten(const LaunchRemap &remap);

/// The launch configuration a plan's steps give one captured launch
/// (launchRemapOf(plan).overrideFor); hasGrid/hasBlock stay false when no
/// step changes the launch or when the result is no CUDA launch.
LaunchOverride replayLaunch(const Plan &plan, const CapturedLaunch &captured);

/// One kernel bundle: sources are written under `dir` with the names the
/// bundle's specs give; `captures` are absolute paths, linked (or copied)
/// as capture0.bin, capture1.bin, ...
struct KernelBundleFiles {
  Bundle bundle; ///< dir, captures and paths are filled by writeKernelBundle
  std::string originalSource, referenceSource;
  std::vector<std::string> variantSources; ///< parallel to bundle.variants
  std::vector<std::string> captures;
  uint64_t reductionLength = 0; ///< 0: none written
};
Status writeKernelBundle(const std::string &dir, KernelBundleFiles files);

struct ReplayOptions {
  /// cudal1-eval. Empty: $CUDAL1_EVAL, else cudal1-eval beside this
  /// executable, else from PATH.
  std::string evalExecutable;
  /// The cudal1 source tree with include/ and lib/Capture (the capture
  /// runtime is compiled into the instrumented program). Empty:
  /// $CUDAL1_SOURCE_DIR, else the tree this cudal1 was configured from.
  std::string sourceDir;
  std::string arch = "sm_90";
  std::vector<std::string> evalArgs; ///< more cudal1-eval options
  double buildTimeout = 600, runTimeout = 600, evalTimeout = 900;
  bool keepWork = false;
  std::function<void(const std::string &)> note;
};

/// The cudal1-eval a session runs: ReplayOptions::evalExecutable, else
/// $CUDAL1_EVAL, else cudal1-eval beside this executable, else from PATH.
std::string evalExecutable(const ReplayOptions &o);

/// Where replay's time went, summed over a session (cudal1-eval --phases):
/// the throughput table of docs/results (issue 15 item 5).
struct ReplayTimes {
  double capture = 0; ///< building and running the instrumented program
  /// Of capture: the build and the run of the instrumented program (the
  /// rest is instrumenting and deriving the references).
  double captureBuild = 0, captureRun = 0;
  double eval = 0; ///< in wall: the cudal1-eval processes
  double wall = 0; ///< in evaluate()
  /// In accepts(), outside evaluate(): the wait for the capture and its
  /// parses, at the first call.
  double accepts = 0;
  double compile = 0, verify = 0, timing = 0;
  double timingRounds = 0; ///< of timing: the workers' rounds (the rest: starts, set-up)
  unsigned batches = 0, variants = 0, compiled = 0, cached = 0, verified = 0;
  /// Worker requests, and those whose kernel set-up a kept worker had made
  /// for an earlier batch (Eval/KeptWorkers.h).
  unsigned setups = 0, keptSetups = 0;
};

class ReplayEvaluator : public VariantEvaluator {
public:
  ReplayEvaluator(RewriteInput input, TuneSpace space, ProgramSetup setup, ReplayOptions options);
  ~ReplayEvaluator() override;
  /// "" when this candidate is judged by replay; else why not. The first
  /// call captures (build and run the instrumented program once).
  std::string accepts(const Candidate &c);
  /// Of accepts()' reasons, those the plan alone gives (a combination, a
  /// host plan, a whole-program re-measurement): answered without waiting
  /// for the capture; "" may still be refused by accepts().
  std::string refusesWithoutCapture(const Candidate &c) const;
  llvm::Expected<std::vector<Measurement>>
  evaluate(const std::vector<Candidate> &candidates) override;
  std::string gpuName() const override { return gpu; }
  /// Where the kept workers of this session listen (cudal1-eval
  /// --keep-workers): one per judged kernel, stopped by the destructor.
  std::string keptWorkersDir() const { return work + "/kept"; }
  /// Stops the kept workers now (a later batch starts fresh ones): the
  /// reproducibility check measures with no other context on the GPU.
  void stopWorkers();
  /// The capture has run and recorded launches of at least one kernel.
  bool captured();
  /// Begins the capture early: instruments the source here, then builds and
  /// runs the instrumented program in the background, while the first
  /// round's variants are derived. The first accepts() waits for it (so no
  /// measurement runs beside it). Without it the first accepts() of a
  /// kernel plan captures.
  void startCapture();
  const ReplayTimes &times() const { return phases; }

private:
  struct KernelCapture {
    std::vector<CapturedLaunch> launches;
    std::string captureFile; ///< its launches alone (the session's capture if that failed)
    std::string refusal;     ///< why this kernel is not replayed ("" when it is)
    std::string entry;       ///< the original's mangled name
    std::string args;        ///< the manifest's args
    bool haveReference = false;
    std::string referenceSource, referenceEntry;
    std::string referenceRefusal; ///< the derivation's error text
    uint64_t reductionLength = 1;
  };
  void capture();
  void awaitCapture();
  /// The launch remap that replays `plan` on the kernel's captured
  /// launches, each on its own (accepts() and evaluate() alike), or why
  /// one of them has none.
  static Expected<LaunchRemap> replayRemap(const Plan &plan, const KernelCapture &kc);
  void readPhases(const std::string &path);
  RewriteInput input;
  TuneSpace space;
  ProgramSetup setup;
  ReplayOptions options;
  bool didCapture = false, startedCapture = false;
  std::string startError;      ///< why startCapture() could not begin
  std::thread background;      ///< the instrumented program's parse, build and run
  std::thread referenceThread; ///< every kernel's double reference, derived beside it
  std::optional<std::vector<llvm::Expected<ReferenceKernel>>> referencesAhead;
  std::vector<std::string> referenceKeys; ///< parallel to *referencesAhead
  ProcessResult buildResult, runResult;
  std::string captureError, work, captureFile, gpu;
  std::vector<KernelCapture> kernels; ///< parallel to space.kernels
  std::set<size_t> originalVerified;  ///< kernels whose original an earlier batch verified
  unsigned batch = 0;
  ReplayTimes phases;
};

/// The split path's kernel part (issue 15 item 6, cudal1/Eval/KernelPlans.h,
/// docs/formats/kernel-plans.md): of the candidates just written to the
/// program bundle at `dir`, those replay would judge under `--tune` and
/// whose launch configuration the plan leaves alone are listed in
/// DIR/kernels/manifest.txt with their kernel's double reference, beside
/// the instrumented program (DIR/instrumented.cu) and the capture runtime's
/// sources, for cudal1-eval to capture and replay on the GPU machine. A
/// plan that changes the launch configuration (launch-config, coarsen,
/// warp-rows, stage-shared) is listed with its launch remap, which
/// cudal1-eval applies to the captured launches. Kernels without a
/// reference stay at program level with a note. Returns the number of
/// variants listed (0: no kernel part, and an old one is removed).
llvm::Expected<size_t> writeKernelPlansPart(const std::string &dir, const RewriteInput &input,
                                            const TuneSpace &space, const ProgramSetup &setup,
                                            const std::vector<Candidate> &candidates,
                                            const ReplayOptions &options);

/// The judge per candidate: those `replayable` accepts go to `replay`, the
/// rest (host plans, combinations across kernels, kernels without
/// captures) to `program`. When replay as a whole fails, its candidates
/// are judged by `program` with a note.
class JudgingEvaluator : public VariantEvaluator {
public:
  using Why = std::function<std::string(const Candidate &)>;
  /// `replayable` may wait for the capture; `programOnly` (optional) says
  /// at once which candidates are whole programs whatever the capture
  /// holds (host plans, combinations): their builds start before the wait.
  JudgingEvaluator(VariantEvaluator &replay, Why replayable, VariantEvaluator &program,
                   std::function<void(const std::string &)> note = {}, Why programOnly = {});
  llvm::Expected<std::vector<Measurement>>
  evaluate(const std::vector<Candidate> &candidates) override;
  std::string gpuName() const override;
  /// Seconds spent after a replay waiting for the whole programs' builds
  /// that ran beside it (and beside the capture).
  double buildWaitSeconds() const { return buildWait; }

private:
  VariantEvaluator &replay, &program;
  Why replayable, programOnly;
  std::function<void(const std::string &)> note;
  double buildWait = 0;
  std::map<size_t, std::string> noted; ///< kernels whose refusal was noted
};

} // namespace cudal1

#endif
