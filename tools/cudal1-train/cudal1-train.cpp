// cudal1-train: trains the learned policy from tuning databases (stages (a)
// supervised, (b) correctness, (c) contrastive RL; docs/cudal1-train.md),
// and samples the policy's plans on training programs for the GPU to
// verify. Flags are parsed here; lib/Policy and lib/Tune do the work.
#include "cudal1/Analysis/KernelAnalysis.h"
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Frontend/Frontend.h"
#include "cudal1/Policy/Policy.h"
#include "cudal1/Policy/Train.h"
#include "cudal1/Tune/PolicyStrategy.h"
#include "cudal1/Tune/Session.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

using namespace llvm;

namespace {
cl::OptionCategory cat("cudal1-train options");
cl::list<std::string> databases(cl::Positional, cl::OneOrMore, cl::desc("<tune.db>..."),
                                cl::cat(cat));
cl::opt<std::string> outDir("o", cl::value_desc("dir"), cl::cat(cat),
                            cl::desc("The model directory to write"));
cl::opt<bool> force("force", cl::cat(cat), cl::desc("Replace a model already in the directory"));
cl::opt<std::string> curve("curve", cl::value_desc("file"), cl::cat(cat),
                           cl::desc("The training curve (default: DIR/curve.txt)"));
cl::opt<uint64_t> seed("seed", cl::init(1), cl::cat(cat), cl::desc("Seed (default 1)"));
cl::opt<unsigned> epochs("epochs", cl::init(200), cl::cat(cat), cl::desc("Epochs (default 200)"));
cl::opt<unsigned> hidden("hidden", cl::init(64), cl::cat(cat),
                         cl::desc("Width of the network (default 64)"));
cl::opt<double> learningRate("lr", cl::init(3e-3), cl::cat(cat),
                             cl::desc("Adam's learning rate (default 0.003)"));
cl::opt<unsigned> validation("validation-percent", cl::init(10), cl::cat(cat),
                             cl::desc("Programs in the validation split (default 10)"));
cl::opt<unsigned> test("test-percent", cl::init(10), cl::cat(cat),
                       cl::desc("Programs in the test split (default 10)"));
cl::opt<std::string> programs("programs", cl::value_desc("tsv"), cl::cat(cat),
                              cl::desc("Which program each session measured "
                                       "(bench/data/programs.tsv)"));
cl::opt<std::string> splits("splits", cl::value_desc("dir"), cl::cat(cat),
                            cl::desc("Fixed splits by program name (bench/splits)"));
cl::opt<bool> listSplits("list-splits", cl::cat(cat),
                         cl::desc("Print each kernel's program and split, and train nothing"));
cl::opt<std::string> evaluate("evaluate", cl::value_desc("model-dir"), cl::cat(cat),
                              cl::desc("Score a model's ranking per split beside the heuristic's, "
                                       "and train nothing"));
cl::opt<std::string> exportTo("export", cl::value_desc("new.db"), cl::cat(cat),
                              cl::desc("Write every measurement and feature of the databases into "
                                       "one new database of this cudal1's schema, and train "
                                       "nothing"));
cl::opt<unsigned> verifyEpochs("verify-epochs", cl::init(50), cl::cat(cat),
                               cl::desc("Stage (b): epochs of verification (default 50)"));
cl::opt<unsigned> rlEpochs("rl-epochs", cl::init(100), cl::cat(cat),
                           cl::desc("Stage (c): epochs of episodes (default 100)"));
cl::opt<unsigned> budget("budget", cl::init(8), cl::cat(cat),
                         cl::desc("Stage (c): plans per episode (default 8)"));
cl::opt<unsigned> group("group", cl::init(4), cl::cat(cat),
                        cl::desc("Stage (c): plans per turn, the GRPO group (default 4)"));
cl::opt<double> temperature("temperature", cl::init(0.5), cl::cat(cat),
                            cl::desc("Stage (c): the policy's softmax temperature (default 0.5)"));
cl::opt<double> klWeight("kl", cl::init(0.05), cl::cat(cat),
                         cl::desc("Stage (c): weight of the KL term to the (a)/(b) policy "
                                  "(default 0.05)"));
cl::opt<double> penalty("penalty", cl::init(1.0), cl::cat(cat),
                        cl::desc("Stage (c): reward of a wrong or failed plan is -X (default 1)"));
cl::opt<double> rlLearningRate("rl-lr", cl::init(1e-3), cl::cat(cat),
                               cl::desc("Stage (c): Adam's learning rate (default 0.001)"));
cl::opt<double> rlAnchor("rl-anchor", cl::init(0.5), cl::cat(cat),
                         cl::desc("Stage (c): weight of stage (a)'s losses kept (default 0.5)"));
cl::opt<double> effectDropout("effect-dropout", cl::init(0.3), cl::cat(cat),
                              cl::desc("Share of plans trained without their effect (default "
                                       "0.3)"));
cl::list<std::string> ablate("ablate", cl::CommaSeparated, cl::value_desc("what"), cl::cat(cat),
                             cl::desc("Train without exemplars, stage-c or effect (the "
                                      "evaluation protocol's ablations; repeatable)"));
cl::opt<std::string> sources("sources", cl::value_desc("dir"), cl::cat(cat),
                             cl::desc("Where the programs' sources are, for the plans' effects "
                                      "(program names are paths relative to it; default: the "
                                      "project root of the first database, the repository for "
                                      "bench/data)"));
cl::opt<std::string> effectCache(
    "effect-cache", cl::value_desc("tsv"), cl::cat(cat),
    cl::desc("The plans' effects computed before (keyed by effect version, the unit's text hash, "
             "kernel key and plan), read first and rewritten atomically with the new ones: a "
             "second run parses nothing (scripts/train-policy: BUILD/policy-effects.tsv)"));
cl::opt<unsigned> evalEvery("eval-every", cl::init(10), cl::cat(cat),
                            cl::desc("A curve point every N epochs of each stage (default 10)"));
cl::opt<unsigned> checkpointEvery("checkpoint-every", cl::init(0), cl::cat(cat),
                                  cl::desc("Save every N-th curve point of each stage as "
                                           "DIR/checkpoints/STAGE-EPOCH"));
cl::opt<std::string> initModel("init", cl::value_desc("model-dir"), cl::cat(cat),
                               cl::desc("Start from this model (e.g. stage (c) after (a) and (b): "
                                        "--epochs 0 --verify-epochs 0)"));
cl::opt<unsigned> folds("folds", cl::init(5), cl::cat(cat),
                        cl::desc("Model selection by grouped k-fold cross-validation over the "
                                 "programs outside the test split (default 5; 0: the validation "
                                 "split chooses, as before)"));
cl::list<double> heuristicWeight("heuristic-weight", cl::CommaSeparated, cl::value_desc("x,..."),
                                 cl::cat(cat),
                                 cl::desc("Stage (a): weight of the imitation of the heuristic's "
                                          "order; with --folds a grid the cross-validation "
                                          "chooses from (default 0,0.1,0.3,1 with --folds, else "
                                          "0)"));
cl::list<double> cvLearningRates("cv-lr", cl::CommaSeparated, cl::value_desc("x,..."), cl::cat(cat),
                                 cl::desc("With --folds: stage (a)'s learning rates to choose "
                                          "from (default: --lr alone)"));
cl::opt<unsigned> unmeasured(
    "unmeasured", cl::init(0), cl::cat(cat),
    cl::desc("Stage (a): per training kernel, at most N legal plans of its program that nobody "
             "measured (a seeded sample) become targets of the heuristic's imitation, below "
             "every plan measured faster (default 0: none; cross-validation did not favour 16, "
             "docs/results/policy-ablations.md)"));
cl::opt<double> unmeasuredShare("unmeasured-share", cl::init(1.0), cl::cat(cat),
                                cl::desc("Their term's weight as a share of --heuristic-weight "
                                         "(default 1)"));
cl::opt<bool> fixedEpochs("fixed-epochs", cl::cat(cat),
                          cl::desc("Train exactly the given epochs on the train and validation "
                                   "splits and select nothing (values a cross-validation chose); "
                                   "implies --folds 0"));
cl::opt<std::string> sampleBundles(
    "sample-bundles", cl::value_desc("dir"), cl::cat(cat),
    cl::desc("Stage (b) on the GPU: write, per training program (--splits train.txt), a bundle "
             "of plans the model (--model) samples, for cudal1-eval; train nothing"));
cl::opt<std::string> sampleModel("model", cl::value_desc("model-dir"), cl::cat(cat),
                                 cl::desc("With --sample-bundles: the policy to sample"));
cl::opt<unsigned> sampleBudget("sample-budget", cl::init(16), cl::cat(cat),
                               cl::desc("With --sample-bundles: plans per program (default 16)"));
cl::opt<double> sampleTemperature("sample-temperature", cl::init(1.0), cl::cat(cat),
                                  cl::desc("With --sample-bundles: the strategy's temperature "
                                           "(default 1)"));
cl::opt<std::string> corpus("corpus", cl::init("bench/corpus"), cl::value_desc("dir"), cl::cat(cat),
                            cl::desc("With --sample-bundles: where PROGRAM.cu lives "
                                     "(default bench/corpus)"));
} // namespace

namespace {

/// As %g writes it: the values `kept:` names are flags to give again.
std::string shortNumber(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

/// Stage (b)'s GPU half: the policy's samples on the training programs as
/// program bundles (cudal1-opt --emit-bundle's), one directory each.
int sample(const std::function<int(Error)> &fail) {
  if (splits.empty() || sampleModel.empty())
    return fail(createStringError(inconvertibleErrorCode(),
                                  "--sample-bundles needs --splits (the training programs) and "
                                  "--model"));
  SmallString<256> list(splits);
  sys::path::append(list, "train.txt");
  ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(list);
  if (!buf)
    return fail(createStringError(buf.getError(), list + ": " + buf.getError().message()));
  SmallVector<StringRef, 0> lines;
  (*buf)->getBuffer().split(lines, '\n');
  unsigned written = 0, plans = 0;
  for (StringRef line : lines) {
    line = line.trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    SmallString<256> file(corpus);
    sys::path::append(file, line + ".cu");
    ErrorOr<std::unique_ptr<MemoryBuffer>> src = MemoryBuffer::getFile(file);
    if (!src) {
      errs() << "cudal1-train: note: " << file << ": " << src.getError().message() << "; skipped\n";
      continue;
    }
    cudal1::RewriteInput in{
        std::string(file), (*src)->getBuffer().str(),
        cudal1::analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90", "-I", corpus}, nullptr)};
    cudal1::PolicyStrategyOptions po;
    po.modelDir = sampleModel;
    po.seed = seed;
    po.temperature = sampleTemperature;
    std::unique_ptr<cudal1::SearchStrategy> strategy = cudal1::makePolicyStrategy(po);
    cudal1::SessionOptions so;
    so.mode = cudal1::SessionOptions::EmitBundle;
    SmallString<256> dir(sampleBundles);
    sys::path::append(dir, (line + "--policy-sample").str());
    so.bundleDir = std::string(dir);
    so.budget = sampleBudget;
    so.seed = seed;
    so.strategy = "policy";
    so.strategyInstance = strategy.get();
    so.setup = cudal1::programSetup(in, "", "", so.arch);
    so.setup.timeRegex = "^gpu_ms=(\\S+)";
    std::string quiet;
    raw_string_ostream qs(quiet);
    so.out = &qs;
    cudal1::SessionStatus st = cudal1::runSession(in, so, nullptr, nullptr);
    if (st.kind != cudal1::SessionStatus::Ok) {
      errs() << "cudal1-train: note: " << file << ": " << st.message << "; skipped\n";
      continue;
    }
    ++written;
    SmallString<256> tsv(dir);
    sys::path::append(tsv, "plans.tsv");
    if (auto p = MemoryBuffer::getFile(tsv)) {
      SmallVector<StringRef, 0> ls;
      (*p)->getBuffer().split(ls, '\n');
      for (StringRef l : ls)
        plans += !l.trim().empty() && !l.starts_with("#");
    }
  }
  outs() << formatv("cudal1-train: {0} bundles ({1} plans) sampled by {2} in {3}\n", written, plans,
                    sampleModel, sampleBundles);
  return written ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(argc, argv, "cudal1-train: train the learned policy\n");
  auto fail = [](Error e) {
    errs() << "cudal1-train: error: " << toString(std::move(e)) << "\n";
    return 1;
  };
  if (validation + test > 100)
    return fail(createStringError(inconvertibleErrorCode(),
                                  "--validation-percent plus --test-percent exceed 100"));
  if (!sampleBundles.empty())
    return sample(fail);
  if (!exportTo.empty()) {
    unsigned n = 0;
    if (Error e = cudal1::exportMerged(std::vector<std::string>(databases.begin(), databases.end()),
                                       exportTo, cudal1::featureVersion, n))
      return fail(std::move(e));
    outs() << "cudal1-train: exported " << n << " measurements into " << exportTo << "\n";
    return 0;
  }
  cudal1::SplitOptions so;
  so.validationPercent = validation;
  so.testPercent = test;
  if (!programs.empty())
    if (Error e = cudal1::readSessionPrograms(programs, so))
      return fail(std::move(e));
  if (!splits.empty())
    if (Error e = cudal1::readProgramSplits(splits, so))
      return fail(std::move(e));
  std::vector<std::string> dbs(databases.begin(), databases.end());
  Expected<cudal1::Dataset> data = cudal1::loadDataset(dbs, cudal1::featureVersion, so);
  if (!data)
    return fail(data.takeError());
  for (const std::string &n : data->notes)
    outs() << "note: " << n << "\n";
  std::set<std::string> ablations(ablate.begin(), ablate.end());
  // The model to evaluate, first: one trained without effects needs none.
  std::unique_ptr<cudal1::Policy> evaluated;
  if (!evaluate.empty()) {
    Expected<std::unique_ptr<cudal1::Policy>> model = cudal1::Policy::load(evaluate);
    if (!model)
      return fail(model.takeError());
    evaluated = std::move(*model);
  }
  bool training = evaluate.empty() && !listSplits;
  if (!(unmeasuredShare >= 0) || !std::isfinite(unmeasuredShare))
    return fail(createStringError(inconvertibleErrorCode(),
                                  "--unmeasured-share must be finite and non-negative"));
  if (training && unmeasured > 0 && unmeasuredShare > 0) {
    // The legal plans nobody measured, before the effects (computed for
    // them too).
    cudal1::UnmeasuredOptions uo;
    uo.sourceRoot = !sources.empty() ? std::string(sources) : cudal1::projectRootOf(dbs[0]);
    uo.perKernel = unmeasured;
    uo.seed = seed;
    Expected<cudal1::UnmeasuredSummary> us = cudal1::attachUnmeasured(*data, uo);
    if (!us)
      return fail(us.takeError());
    outs() << formatv("unmeasured: {0} of {1} legal unmeasured plans kept for {2} kernels "
                      "(at most {3} each) in {4:F1} s; {5} kernels without a source, {6} whose "
                      "source changed\n",
                      us->plans, us->legal, us->kernels, unsigned(unmeasured), us->seconds,
                      us->kernelsWithoutSource, us->kernelsChanged);
  }
  bool needEffects = evaluated ? evaluated->schema().effectDim() > 0 : !ablations.count("effect");
  if (!listSplits && needEffects) {
    // The plans' effects, from the programs' sources where they are at hand.
    cudal1::EffectOptions eo;
    eo.sourceRoot = !sources.empty() ? std::string(sources) : cudal1::projectRootOf(dbs[0]);
    eo.cacheFile = effectCache;
    Expected<cudal1::EffectSummary> es = cudal1::attachEffects(*data, eo);
    if (!es)
      return fail(es.takeError());
    outs() << formatv("effects: {0} of {1} plans ({2} from the cache, {3} computed in {4:F1} s); "
                      "{5} kernels without a source, {6} whose source changed\n",
                      es->withEffect, es->plans, es->fromCache, es->computed, es->seconds,
                      es->kernelsWithoutSource, es->kernelsChanged);
    if (es->unmeasuredPlans)
      outs() << formatv("effects of unmeasured plans: {0} of {1}\n", es->unmeasuredWithEffect,
                        es->unmeasuredPlans);
  }
  if (listSplits) {
    for (const cudal1::KernelData &k : data->kernels)
      outs() << cudal1::splitName(k.split) << "\t" << k.program << "\t" << k.state.name << "\t"
             << k.state.key << "\t" << k.state.gpu.name << "\n";
    return 0;
  }
  if (evaluated) {
    outs() << "| split | kernels | non-tied pairs | policy pair accuracy | heuristic pair accuracy "
              "| policy top-1 | heuristic top-1 | kernels ranked | policy top-1 within 5% | "
              "heuristic top-1 within 5% | kernels refused |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (cudal1::Split sp :
         {cudal1::Split::Train, cudal1::Split::Validation, cudal1::Split::Test}) {
      Expected<cudal1::SplitScore> p = cudal1::evaluatePolicy(*evaluated, *data, sp);
      if (!p)
        return fail(p.takeError());
      Expected<cudal1::SplitScore> h = cudal1::evaluateHeuristic(*data, sp);
      if (!h)
        return fail(h.takeError());
      outs() << formatv("| {0} | {1} | {2} | {3:F3} | {4:F3} | {5:F3} | {6:F3} | {7} | {8:F3} | "
                        "{9:F3} | {10} |\n",
                        cudal1::splitName(sp), p->kernels, p->pairs, p->pairAccuracy,
                        h->pairAccuracy, p->top1, h->top1, p->within5Kernels, p->within5,
                        h->within5, p->refused);
    }
    return 0;
  }
  if (outDir.empty())
    return fail(createStringError(inconvertibleErrorCode(), "-o DIR: the model directory"));
  cudal1::TrainOptions to;
  to.outDir = outDir;
  to.overwrite = force;
  to.curveFile = curve;
  to.seed = seed;
  to.epochs = epochs;
  to.hidden = hidden;
  to.learningRate = learningRate;
  to.verifyEpochs = verifyEpochs;
  to.rlEpochs = rlEpochs;
  to.budget = budget;
  to.group = group;
  to.temperature = temperature;
  to.klWeight = klWeight;
  to.penalty = penalty;
  to.rlLearningRate = rlLearningRate;
  to.rlAnchor = rlAnchor;
  to.effectDropout = effectDropout;
  to.ablate = ablations;
  to.unmeasuredShare = unmeasured > 0 ? double(unmeasuredShare) : 0.0;
  to.checkpointEvery = checkpointEvery;
  to.evalEvery = evalEvery;
  to.initModel = initModel;
  to.fixedEpochs = fixedEpochs;
  to.folds = fixedEpochs ? 0 : unsigned(folds);
  if (to.folds >= 2 && !folds.getNumOccurrences()) {
    // The default: cross-validation where the data allows it.
    std::set<std::string> programs;
    for (const cudal1::KernelData &k : data->kernels)
      if (k.split != cudal1::Split::Test)
        programs.insert(k.program);
    if (programs.size() < to.folds) {
      outs() << formatv("note: {0} programs outside the test split, fewer than the {1} folds of "
                        "cross-validation: the validation split chooses the epochs kept\n",
                        programs.size(), to.folds);
      to.folds = 0;
    }
  }
  if (to.folds == 1)
    return fail(createStringError(inconvertibleErrorCode(),
                                  "--folds 1 holds nothing out: use 0 (the validation split) or "
                                  "at least 2"));
  std::vector<double> hws(heuristicWeight.begin(), heuristicWeight.end());
  for (double x : hws)
    if (!(x >= 0) || !std::isfinite(x))
      return fail(createStringError(inconvertibleErrorCode(),
                                    "--heuristic-weight must be finite and non-negative"));
  for (double x : cvLearningRates)
    if (!(x > 0) || !std::isfinite(x))
      return fail(createStringError(inconvertibleErrorCode(), "--cv-lr must be positive"));
  if (to.folds >= 2) {
    to.cvHeuristicWeights = hws.empty() ? std::vector<double>{0, 0.1, 0.3, 1} : hws;
    to.cvLearningRates.assign(cvLearningRates.begin(), cvLearningRates.end());
    to.progress = [](const std::string &line) { errs() << "cudal1-train: " << line << "\n"; };
  } else {
    if (hws.size() > 1 || !cvLearningRates.empty())
      return fail(createStringError(inconvertibleErrorCode(),
                                    "a grid (--heuristic-weight X,Y or --cv-lr) needs --folds"));
    to.heuristicWeight = hws.empty() ? 0 : hws[0];
  }
  for (const std::string &d : dbs)
    to.dataNote += (to.dataNote.empty() ? "" : ", ") + sys::path::filename(d).str();
  Expected<cudal1::TrainSummary> s = cudal1::trainPolicy(*data, to);
  if (!s)
    return fail(s.takeError());
  outs() << formatv("cudal1-train: {0} measurements, {1} kernels ({2} train, {3} validation, "
                    "{4} test)\n",
                    data->measurements, data->kernels.size(), s->trainKernels, s->validationKernels,
                    s->testKernels);
  for (auto [name, sc] : {std::pair{"train", &s->train}, std::pair{"validation", &s->validation},
                          std::pair{"test", &s->test}})
    outs() << formatv("  {0,-10} pairs {1,5}  pair accuracy {2:F3}  top-1 {3:F3}  within 5% "
                      "{4:F3}\n",
                      name, sc->pairs, sc->pairAccuracy, sc->top1, sc->within5);
  if (s->stages.find('c') != std::string::npos)
    outs() << formatv("  stage (c), budget {0}: best plan found on {1:F3} of train and {2:F3} of "
                      "validation kernels (mean best log LCB {3:F3} and {4:F3})\n",
                      budget, s->trainFound, s->validationFound, s->trainReturn,
                      s->validationReturn);
  if (!s->crossValidation.empty())
    outs() << s->crossValidation;
  outs() << formatv("  kept: --epochs {0} --verify-epochs {1} --rl-epochs {2} --lr {3} "
                    "--heuristic-weight {4}\n",
                    s->epochsA, s->epochsB, s->epochsC, shortNumber(s->learningRate),
                    shortNumber(s->heuristicWeight));
  outs() << "wrote " << outDir << "\n";
  return 0;
}
