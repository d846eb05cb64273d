// The program-level double-reference rule on the GPU (issue 15, item 2):
// the float-atomic sum of 2^24 squares as a whole program
// (bundles/sumsq-program). Judged against the original's printed sum, the
// warp-reduced variant is rejected (it is the more accurate one); judged
// against the reference program cudal1-opt derived (the same program with
// both kernels computing in double), it passes and is faster, while the
// faults (half of the terms, a racy read-modify-write) still fail.
// Exit 77 without a GPU.
// Usage: ReferenceProgramTest CUDAL1_EVAL BUNDLES_DIR OUTDIR
#include "cudal1/Eval/Process.h"
#include "cudal1/Eval/Results.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>

using namespace cudal1;

namespace {
int failures = 0;

void check(bool ok, const std::string &what) {
  std::printf("%s %s\n", ok ? "[ ok ]" : "[FAIL]", what.c_str());
  if (!ok)
    ++failures;
}

std::string verdict(const VariantResult *v) {
  if (!v)
    return "missing";
  std::string s = std::string(outcomeName(v->outcome)) + " (" + v->verifyMode + ")";
  if (v->timed)
    s += ", " + std::to_string(v->speedup) + "x [" + std::to_string(v->lo) + ", " +
         std::to_string(v->hi) + "]";
  for (const std::string &d : v->details)
    s += "; " + d;
  for (const std::string &m : v->mismatches)
    s += "; " + m;
  return s;
}

/// Copies the bundle; without the reference line when `withReference` is false.
bool copyBundle(const std::string &from, const std::string &to, bool withReference) {
  runProcess({"rm", "-rf", to}, 60);
  if (::mkdir(to.c_str(), 0755) != 0)
    return false;
  for (const char *f : {"original.cu", "reference.cu", "warp.cu", "half.cu", "race.cu"}) {
    std::ifstream in(from + "/" + f, std::ios::binary);
    std::ofstream out(to + "/" + f, std::ios::binary);
    out << in.rdbuf();
    if (!in || !out)
      return false;
  }
  std::ifstream in(from + "/manifest.txt");
  std::ofstream out(to + "/manifest.txt");
  for (std::string line; std::getline(in, line);)
    if (withReference || line.rfind("reference ", 0) != 0)
      out << line << "\n";
  return bool(out);
}

Expected<EvalResults> evaluate(const std::string &eval, const std::string &dir) {
  std::string results = dir + "/results.txt";
  ProcessResult p = runProcess({eval, dir, "--rounds", "10", "--seed", "7", "-o", results}, 900);
  std::printf("== cudal1-eval %s (%s, %.1f s)\n%s", dir.c_str(), p.describe().c_str(), p.seconds,
              p.output.c_str());
  return readResults(results);
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s CUDAL1_EVAL BUNDLES OUTDIR\n", argv[0]);
    return 2;
  }
  std::string eval = argv[1], bundles = argv[2], outDir = argv[3];
  ProcessResult probe = runProcess({eval, "--probe"}, 120);
  if (probe.exited && probe.exitCode == 77) {
    std::printf("no GPU: %s", probe.output.c_str());
    return 77;
  }
  check(probe.exited && probe.exitCode == 0, "probe: " + probe.output);
  ::mkdir(outDir.c_str(), 0755);

  // 1. Before: the printed sum compared with the original's.
  std::string before = outDir + "/reference-program-before";
  check(copyBundle(bundles + "/sumsq-program", before, false), "bundle copied (no reference)");
  Expected<EvalResults> old = evaluate(eval, before);
  check(old.ok(), "results read back" + (old.ok() ? "" : ": " + old.error().message()));
  if (old.ok()) {
    const VariantResult *warp = old->find("warp");
    check(warp && warp->outcome == Outcome::Wrong && warp->verifyMode == "program-output",
          "without the reference program the warp-reduced sum is rejected (the float-atomic "
          "original is the less accurate one), seen " +
              verdict(warp));
  }

  // 2. After: against the reference program.
  std::string after = outDir + "/reference-program";
  check(copyBundle(bundles + "/sumsq-program", after, true), "bundle copied");
  Expected<EvalResults> r = evaluate(eval, after);
  check(r.ok(), "results read back" + (r.ok() ? "" : ": " + r.error().message()));
  if (!r.ok())
    return 1;
  const VariantResult *orig = r->find("original"), *warp = r->find("warp"), *half = r->find("half"),
                      *race = r->find("race");
  bool promoted = false;
  if (orig)
    for (const std::string &d : orig->details)
      promoted |= d.find("judged against the reference program (2 of 2 kernel(s) promoted)") !=
                  std::string::npos;
  check(orig && orig->outcome == Outcome::Ok && orig->verifyMode == "program-reference" && promoted,
        "original: judged against the reference program, both kernels promoted, seen " +
            verdict(orig));
  check(warp && warp->outcome == Outcome::Ok && warp->verifyMode == "program-reference" &&
            warp->faster,
        "warp: ok and faster against the reference program, seen " + verdict(warp));
  check(half && half->outcome == Outcome::Wrong && half->verifyMode == "program-reference",
        "half (skip-work): wrong against the reference program, seen " + verdict(half));
  check(race && race->outcome == Outcome::Wrong && race->verifyMode == "program-reference",
        "race (lost updates): wrong against the reference program, seen " + verdict(race));
  std::printf("\n%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
