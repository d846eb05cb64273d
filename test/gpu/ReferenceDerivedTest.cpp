// The derived double reference on the GPU (issue 15, item 1): the float
// atomicAdd sum of 2^24 squares is measurably wrong (checked against the
// exact sum of its captured input), and against the reference that
// `cudal1-opt --reference` derived (bundles/sumsq-derived/reference.cu)
// the more accurate warp-reduced variant passes, a variant that drops half
// of the terms fails, and both are judged by the double reference.
// Exit 77 without a GPU.
// Usage: ReferenceDerivedTest CUDAL1_EVAL CAPTURE_DEMO BUNDLES_DIR OUTDIR
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Process.h"
#include "cudal1/Eval/Results.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace cudal1;

namespace {
int failures = 0;

void check(bool ok, const std::string &what) {
  std::printf("%s %s\n", ok ? "[ ok ]" : "[FAIL]", what.c_str());
  if (!ok)
    ++failures;
}

bool copyFile(const std::string &from, const std::string &to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  out << in.rdbuf();
  return bool(in) && bool(out);
}

std::string verdict(const VariantResult *v) {
  if (!v)
    return "missing";
  std::string s = std::string(outcomeName(v->outcome)) + " (" + v->verifyMode + ")";
  if (!v->details.empty())
    s += ": " + v->details.front();
  return s;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s CUDAL1_EVAL CAPTURE_DEMO BUNDLES OUTDIR\n", argv[0]);
    return 2;
  }
  std::string eval = argv[1], demo = argv[2], bundles = argv[3], outDir = argv[4];
  ProcessResult probe = runProcess({eval, "--probe"}, 120);
  if (probe.exited && probe.exitCode == 77) {
    std::printf("no GPU: %s", probe.output.c_str());
    return 77;
  }
  check(probe.exited && probe.exitCode == 0, "probe: " + probe.output);

  std::string dir = outDir + "/reference-derived";
  runProcess({"rm", "-rf", dir}, 60);
  ::mkdir(outDir.c_str(), 0755);
  ::mkdir(dir.c_str(), 0755);

  // 1. Capture one launch of each demo kernel.
  std::string capture = dir + "/demo.capture";
  ProcessResult cap = runProcess(
      {demo, "1"}, 300, {"CUDAL1_CAPTURE_FILE=" + capture, "CUDAL1_CAPTURE_MAX_LAUNCHES=1"});
  check(cap.exited && cap.exitCode == 0, "capture demo runs: " + cap.output);
  Expected<CaptureFile> file = readCaptureFile(capture);
  check(file.ok(), "capture file reads back" + (file.ok() ? "" : ": " + file.error().message()));
  if (!file.ok())
    return 1;

  // 2. The original's own error: its float sum against the exact sum of the
  // squares of its captured input.
  const CapturedLaunch *sumsq = nullptr;
  for (const CapturedLaunch &l : file->launches)
    if (l.kernelKey == "sumsq")
      sumsq = &l;
  check(sumsq && sumsq->args.size() == 3 && sumsq->args[0].isPointer && sumsq->args[1].isPointer,
        "the sumsq launch is captured");
  if (!sumsq)
    return 1;
  const CapturedAlloc &x = sumsq->allocs[sumsq->args[0].alloc];
  const CapturedAlloc &out = sumsq->allocs[sumsq->args[1].alloc];
  int32_t n = 0;
  std::memcpy(&n, sumsq->args[2].bytes.data(), 4);
  long double exact = 0;
  for (int32_t i = 0; i < n && size_t(4 * i + 4) <= x.before.size(); ++i) {
    float v;
    std::memcpy(&v, x.before.data() + 4 * size_t(i) + sumsq->args[0].offset, 4);
    exact += (long double)v * v;
  }
  float got = 0;
  std::memcpy(&got, out.after.data() + sumsq->args[1].offset, 4);
  double relErr = double(std::fabs((long double)got - exact) / exact);
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "the float original is measurably wrong: %.7g against %.7Lg "
                "(relative error %.3g > 1e-3)",
                double(got), exact, relErr);
  check(n == (1 << 24) && relErr > 1e-3, buf);

  // 3. The bundle: the derived reference and manifest, the sources of ../sumsq.
  for (const char *f : {"original.cu", "warp.cu"})
    copyFile(bundles + "/sumsq/" + f, dir + "/" + f);
  for (const char *f : {"manifest.txt", "reference.cu", "half.cu"})
    copyFile(bundles + "/sumsq-derived/" + f, dir + "/" + f);
  std::string results = dir + "/results.txt";
  ProcessResult p = runProcess(
      {eval, dir, "--window", "1", "--timeout", "20", "--seed", "7", "-o", results}, 600);
  std::printf("== cudal1-eval (%s, %.1f s)\n%s", p.describe().c_str(), p.seconds, p.output.c_str());
  Expected<EvalResults> r = readResults(results);
  check(r.ok(), "results file reads back" + (r.ok() ? "" : ": " + r.error().message()));
  if (!r.ok())
    return 1;

  // 4. The verdicts against the derived reference.
  const VariantResult *orig = r->find("original"), *warp = r->find("warp"), *half = r->find("half");
  check(orig && orig->outcome == Outcome::Ok && orig->verifyMode == "double-reference",
        "original: ok against the derived double reference, seen " + verdict(orig));
  check(warp && warp->outcome == Outcome::Ok && warp->verifyMode == "double-reference",
        "warp (more accurate than the original): ok against the derived double reference, "
        "seen " +
            verdict(warp));
  check(half && half->outcome == Outcome::Wrong && half->verifyMode == "double-reference",
        "half (drops half of the terms): wrong against the derived double reference, seen " +
            verdict(half));

  // 5. Several bundles in one call (issue 15 item 5, the tuner's replay
  // batches): one compile pool, each bundle its own results; a second call
  // with the same compile cache compiles nothing.
  std::string dir2 = dir + "-copy", cache = dir + "-cubins";
  runProcess({"rm", "-rf", dir2, cache}, 60);
  ::mkdir(dir2.c_str(), 0755);
  for (const char *f : {"original.cu", "warp.cu", "manifest.txt", "reference.cu", "half.cu"})
    copyFile(dir + "/" + f, dir2 + "/" + f);
  copyFile(capture, dir2 + "/demo.capture");
  auto phaseCount = [](const std::string &path, const std::string &name) {
    std::ifstream in(path);
    std::string key;
    double value;
    while (in >> key >> value)
      if (key == name)
        return value;
    return -1.0;
  };
  for (int call = 0; call < 2; ++call) {
    std::string phases = dir + "-phases" + std::to_string(call) + ".txt";
    ProcessResult two = runProcess({eval, dir, dir2, "--window", "1", "--timeout", "20", "--seed",
                                    "7", "--compile-cache", cache, "--phases", phases},
                                   600);
    std::printf("== cudal1-eval, two bundles, call %d (%s, %.1f s)\n%s", call + 1,
                two.describe().c_str(), two.seconds, two.output.c_str());
    check(two.exited && two.exitCode == 0, "two bundles in one call evaluate");
    for (const std::string &d : {dir, dir2}) {
      Expected<EvalResults> rr = readResults(d + "/results.txt");
      const VariantResult *w = rr.ok() ? rr->find("warp") : nullptr;
      const VariantResult *h = rr.ok() ? rr->find("half") : nullptr;
      check(w && w->outcome == Outcome::Ok && h && h->outcome == Outcome::Wrong,
            d + ": the same verdicts as alone (warp ok, half wrong)");
    }
    double compiled = phaseCount(phases, "compiled"), cached = phaseCount(phases, "cached");
    std::snprintf(buf, sizeof buf, "call %d: %.0f compiled, %.0f from the cache", call + 1,
                  compiled, cached);
    // The first call's twins compile at once (or, with few cores, the
    // later twin hits the cache); the second call compiles nothing.
    check(call == 0 ? compiled >= 4 && compiled + cached == 8 : compiled == 0 && cached == 8, buf);
  }
  std::printf("\n%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
