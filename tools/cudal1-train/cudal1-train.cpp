// cudal1-train: trains the learned policy from tuning databases (stage (a),
// supervised; docs/cudal1-train.md). Flags are parsed here; lib/Policy does
// the work.
#include "cudal1/Analysis/KernelAnalysis.h"
#include "cudal1/Policy/Train.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

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
  if (listSplits) {
    for (const cudal1::KernelData &k : data->kernels)
      outs() << cudal1::splitName(k.split) << "\t" << k.program << "\t" << k.state.name << "\t"
             << k.state.key << "\t" << k.state.gpu.name << "\n";
    return 0;
  }
  if (!evaluate.empty()) {
    Expected<std::unique_ptr<cudal1::Policy>> model = cudal1::Policy::load(evaluate);
    if (!model)
      return fail(model.takeError());
    outs() << "| split | kernels | non-tied pairs | policy pair accuracy | heuristic pair accuracy "
              "| policy top-1 | heuristic top-1 | kernels refused |\n"
              "|---|---|---|---|---|---|---|---|\n";
    for (cudal1::Split sp :
         {cudal1::Split::Train, cudal1::Split::Validation, cudal1::Split::Test}) {
      Expected<cudal1::SplitScore> p = cudal1::evaluatePolicy(**model, *data, sp);
      if (!p)
        return fail(p.takeError());
      Expected<cudal1::SplitScore> h = cudal1::evaluateHeuristic(*data, sp);
      if (!h)
        return fail(h.takeError());
      outs() << formatv("| {0} | {1} | {2} | {3:F3} | {4:F3} | {5:F3} | {6:F3} | {7} |\n",
                        cudal1::splitName(sp), p->kernels, p->pairs, p->pairAccuracy,
                        h->pairAccuracy, p->top1, h->top1, p->refused);
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
    outs() << formatv("  {0,-10} pairs {1,5}  pair accuracy {2:F3}  top-1 {3:F3}\n", name,
                      sc->pairs, sc->pairAccuracy, sc->top1);
  outs() << "wrote " << outDir << "\n";
  return 0;
}
