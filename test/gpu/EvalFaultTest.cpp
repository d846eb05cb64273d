// The fault-injection suite (issue 3): captures launches with the capture
// runtime, evaluates bundles of deliberately broken variants with
// cudal1-eval and checks every verdict. Writes the table to
// OUTDIR/fault-injection.md. Every bundle is evaluated twice: with a worker
// process per request, and by kept workers (cudal1-eval --keep-workers, as
// --tune does), whose verdicts must be the same. Exit 77 without a GPU.
// Usage: EvalFaultTest CUDAL1_EVAL CAPTURE_DEMO BUNDLES_DIR OUTDIR
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/KeptWorkers.h"
#include "cudal1/Eval/Process.h"
#include "cudal1/Eval/Results.h"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

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

std::string seen(const VariantResult *v) {
  if (!v)
    return "missing";
  std::string s = outcomeName(v->outcome);
  if (v->timed) {
    char buf[128];
    std::snprintf(buf, sizeof buf, ", %.2fx [%.2f, %.2f]%s%s", v->speedup, v->lo, v->hi,
                  v->faster ? ", faster" : "", v->sideWork ? ", side-work" : "");
    s += buf;
  }
  if (v->outcome != Outcome::Ok && !v->details.empty())
    s += ": " + v->details.front().substr(0, 90);
  else if (!v->verifyMode.empty() && v->verifyMode != "double-reference")
    s += " (" + v->verifyMode + ")";
  return s;
}

struct Expectation {
  std::string bundle, id, fault, expected;
  std::function<bool(const VariantResult &, const EvalResults &)> holds;
};
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
  std::string gpu = probe.output.substr(0, probe.output.find('\n'));

  std::string tmp = outDir + "/fault-run";
  runProcess({"rm", "-rf", tmp}, 60);
  ::mkdir(tmp.c_str(), 0755);

  // 1. Capture the launches.
  std::string capture = tmp + "/demo.capture";
  ProcessResult cap = runProcess(
      {demo, "1"}, 300, {"CUDAL1_CAPTURE_FILE=" + capture, "CUDAL1_CAPTURE_MAX_LAUNCHES=1"});
  check(cap.exited && cap.exitCode == 0, "capture demo runs: " + cap.output);
  Expected<CaptureFile> file = readCaptureFile(capture);
  check(file.ok(), "capture file reads back" + (file.ok() ? "" : ": " + file.error().message()));
  if (file.ok()) {
    std::map<std::string, int> keys;
    for (const CapturedLaunch &l : file->launches)
      keys[l.kernelKey]++;
    check(keys["stencil"] == 1 && keys["rowsum"] == 1 && keys["sumsq"] == 1 &&
              file->launches.size() == 3,
          "one launch per kernel (CUDAL1_CAPTURE_MAX_LAUNCHES=1)");
    for (const CapturedLaunch &l : file->launches)
      if (l.kernelKey == "stencil")
        check(l.allocs.size() == 3 && l.allocs[2].size == (4u << 22) && l.args[2].isPointer &&
                  l.args[3].bytes.size() == 4,
              "stencil launch: 3 allocations, out is 16 MiB");
  }
  ProcessResult host =
      runProcess({demo, "--host-pointer"}, 120, {"CUDAL1_CAPTURE_FILE=" + tmp + "/host.capture"});
  check(host.exited && host.exitCode == 0 && host.output.find("host memory") != std::string::npos,
        "a host pointer argument is refused with a message");
  ProcessResult managed =
      runProcess({demo, "--managed"}, 120, {"CUDAL1_CAPTURE_FILE=" + tmp + "/m.capture"});
  check(managed.exited && managed.exitCode == 0 &&
            managed.output.find("managed memory") != std::string::npos,
        "a managed pointer argument is refused with a message");
  ProcessResult budget = runProcess(
      {demo, "1"}, 300,
      {"CUDAL1_CAPTURE_FILE=" + tmp + "/small.capture", "CUDAL1_CAPTURE_MAX_BYTES=1000000"});
  check(budget.output.find("budget") != std::string::npos &&
            ::access((tmp + "/small.capture").c_str(), F_OK) != 0,
        "the byte budget stops capture with a message");

  // 2. Evaluate the bundles, each twice: a worker per request, then kept
  // workers ("NAME+kept"), which also say how many set-ups they kept.
  std::map<std::string, EvalResults> results;
  std::map<std::string, std::string> keptPhases;
  for (std::string run : {"stencil", "rowsum", "sumsq", "sumsq-noref", "stencil+kept",
                          "rowsum+kept", "sumsq+kept", "sumsq-noref+kept"}) {
    bool kept = run.find("+kept") != std::string::npos;
    std::string name = run.substr(0, run.find('+'));
    std::string dir = tmp + "/" + run;
    ::mkdir(dir.c_str(), 0755);
    std::string src = bundles + "/" + name;
    std::string sources = name == "sumsq-noref" ? bundles + "/sumsq" : src;
    ProcessResult ls = runProcess({"ls", sources}, 30);
    std::istringstream files(ls.output);
    for (std::string f; files >> f;)
      if (f != "manifest.txt")
        copyFile(sources + "/" + f, dir + "/" + f);
    copyFile(src + "/manifest.txt", dir + "/manifest.txt");
    if (::link(capture.c_str(), (dir + "/demo.capture").c_str()) != 0)
      copyFile(capture, dir + "/demo.capture");
    std::string out = dir + "/results.txt";
    std::vector<std::string> args = {eval, dir,      "--window", "3",  "--timeout",
                                     "10", "--seed", "7",        "-o", out};
    if (kept)
      args.insert(args.end(), {"--keep-workers", tmp + "/kept", "--phases", dir + "/phases.txt"});
    ProcessResult p = runProcess(args, 600);
    if (kept) {
      stopKeptWorkers(tmp + "/kept");
      std::ifstream ph(dir + "/phases.txt");
      std::string line;
      while (std::getline(ph, line))
        if (line.rfind("setups ", 0) == 0 || line.rfind("kept-setups ", 0) == 0)
          keptPhases[name] += (keptPhases[name].empty() ? "" : ", ") + line;
    }
    std::printf("== %s (%s, %.1f s)\n%s", run.c_str(), p.describe().c_str(), p.seconds,
                p.output.c_str());
    Expected<EvalResults> r = readResults(out);
    check(r.ok(), run + ": results file reads back" + (r.ok() ? "" : ": " + r.error().message()));
    if (r.ok())
      results[run] = *r;
  }
  // All-ok bundles keep their set-up from verification to timing.
  check(keptPhases["sumsq"].find("kept-setups 1") != std::string::npos,
        "sumsq, kept workers: the timing found the verification's set-up (" + keptPhases["sumsq"] +
            ")");

  // 3. The verdicts.
  auto is = [](Outcome o) {
    return [o](const VariantResult &v, const EvalResults &) { return v.outcome == o; };
  };
  auto timeOf = [](const EvalResults &r, const char *id) {
    const VariantResult *v = r.find(id);
    return v && v->timed ? v->timeMs : -1.0;
  };
  std::vector<Expectation> table = {
      {"stencil", "original", "none (the original itself)", "ok", is(Outcome::Ok)},
      {"stencil", "fast", "none: one pass instead of two (2x faster)",
       "ok, faster (interval above 1)",
       [](const VariantResult &v, const EvalResults &) {
         return v.outcome == Outcome::Ok && v.faster && v.lo > 1.3;
       }},
      {"stencil", "slow", "none: four passes (2x slower)", "ok, slower (interval below 1)",
       [](const VariantResult &v, const EvalResults &) {
         return v.outcome == Outcome::Ok && !v.faster && v.hi < 0.8;
       }},
      {"stencil", "ranking", "2x faster and 2x slower ranked", "fast < original < slow in time",
       [&](const VariantResult &, const EvalResults &r) {
         double f = timeOf(r, "fast"), o = timeOf(r, "original"), s = timeOf(r, "slow");
         return f > 0 && o > 0 && s > 0 && f < o && o < s;
       }},
      {"stencil", "block128", "none: launch configuration changed (block 128)", "ok",
       is(Outcome::Ok)},
      {"stencil", "off-by-one", "loop bound off by one", "wrong", is(Outcome::Wrong)},
      {"stencil", "partial-write", "grid one block short (tail not written)", "wrong",
       is(Outcome::Wrong)},
      {"stencil", "nan", "0/0 produces NaN", "wrong", is(Outcome::Wrong)},
      {"stencil", "write-past-end", "writes out[n]", "wrong (red zone)",
       [](const VariantResult &v, const EvalResults &) {
         bool zone = false;
         for (const std::string &d : v.details)
           zone |= d.find("outside the buffer") != std::string::npos;
         return v.outcome == Outcome::Wrong && zone;
       }},
      {"stencil", "side-stream", "work moved to a device-side launch (fire-and-forget stream)",
       "ok, not faster",
       [](const VariantResult &v, const EvalResults &) {
         return v.outcome == Outcome::Ok && v.timed && !v.faster;
       }},
      {"stencil", "memo-inputs", "skips work for inputs seen before", "wrong", is(Outcome::Wrong)},
      {"stencil", "lazy-after-4", "right for 4 launches, then skips work (only timing sees it)",
       "wrong-after-timing", is(Outcome::WrongAfterTiming)},
      {"stencil", "illegal-address", "store through a wild pointer", "crash", is(Outcome::Crash)},
      {"stencil", "trap", "__trap()", "crash", is(Outcome::Crash)},
      {"stencil", "endless-loop", "endless loop", "timeout", is(Outcome::Timeout)},
      {"stencil", "compile-error", "syntax error", "compile-error", is(Outcome::CompileError)},
      {"rowsum", "shuffle", "none: warp-shuffle reduction (reassociated)", "ok", is(Outcome::Ok)},
      {"rowsum", "race", "tree reduction without barriers (race)", "wrong", is(Outcome::Wrong)},
      {"sumsq", "warp", "none: warp reduction, more accurate than the float-atomic original",
       "ok against the double reference",
       [](const VariantResult &v, const EvalResults &) {
         return v.outcome == Outcome::Ok && v.verifyMode == "double-reference";
       }},
      {"sumsq-noref", "warp", "the same variant without a double reference",
       "wrong, verdict says fallback",
       [](const VariantResult &v, const EvalResults &) {
         return v.outcome == Outcome::Wrong && v.verifyMode == "fallback-no-reference";
       }},
  };

  std::ostringstream md;
  char date[64];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  md << "GPU: " << gpu << "; " << date << "; test/gpu/EvalFaultTest\n\n";
  md << "| bundle | workers | variant | fault | expected | seen | pass |\n";
  md << "| --- | --- | --- | --- | --- | --- | --- |\n";
  std::vector<std::pair<Expectation, bool>> rows;
  for (bool kept : {false, true})
    for (const Expectation &e : table)
      rows.push_back({e, kept});
  for (const auto &[e, kept] : rows) {
    auto it = results.find(e.bundle + (kept ? "+kept" : ""));
    const VariantResult *v =
        it == results.end() ? nullptr : it->second.find(e.id == "ranking" ? "original" : e.id);
    bool ok = v && e.holds(*v, it->second);
    std::string s = e.id == "ranking" && it != results.end()
                        ? "fast " + std::to_string(timeOf(it->second, "fast")) + " ms, original " +
                              std::to_string(timeOf(it->second, "original")) + " ms, slow " +
                              std::to_string(timeOf(it->second, "slow")) + " ms"
                        : seen(v);
    for (char &c : s)
      if (c == '|')
        c = '/';
    const char *workers = kept ? "kept" : "per request";
    md << "| " << e.bundle << " | " << workers << " | " << e.id << " | " << e.fault << " | "
       << e.expected << " | " << s << " | " << (ok ? "yes" : "**NO**") << " |\n";
    check(ok, e.bundle + "/" + e.id + " (" + workers + " workers): expected " + e.expected +
                  ", seen " + s);
    if (!ok && v) {
      // The whole verdict, so that a failed check can be diagnosed from the
      // log (run 3 kept only the first detail).
      for (const std::string &d : v->details)
        std::printf("       detail %s\n", d.c_str());
      for (size_t m = 0; m < v->mismatches.size() && m < 4; ++m)
        std::printf("       mismatch %s\n", v->mismatches[m].c_str());
    }
  }
  std::string table_md = md.str();
  std::ofstream(outDir + "/fault-injection.md") << table_md;
  std::printf("\n%s\n%d failure(s)\n", table_md.c_str(), failures);
  return failures == 0 ? 0 : 1;
}
