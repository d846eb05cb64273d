// The results file: one "result" line of key=value pairs per variant, plus
// "detail" and "mismatch" lines. Line-based so that shell tools can read it.
#include "cudal1/Eval/Results.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Numbers.h"
#include "cudal1/Eval/Verify.h"

#include <climits>
#include <map>
#include <sstream>

namespace cudal1 {

namespace {
const char *const kNames[] = {"ok",    "compile-error",      "load-error", "crash",  "timeout",
                              "wrong", "wrong-after-timing", "not-run",    "refused"};
constexpr int kOutcomes = sizeof kNames / sizeof kNames[0];

std::string oneLine(const std::string &s) {
  std::string out;
  for (char c : s)
    out += (c == '\n' || c == '\r') ? ' ' : c;
  return out;
}
} // namespace

const char *outcomeName(Outcome o) { return kNames[int(o)]; }

bool parseOutcome(const std::string &s, Outcome &out) {
  for (int i = 0; i < kOutcomes; ++i)
    if (s == kNames[i]) {
      out = Outcome(i);
      return true;
    }
  return false;
}

const char *judgeName(Judge j) {
  switch (j) {
  case Judge::Program:
    return "program";
  case Judge::ReplayReference:
    return "replay-double-reference";
  case Judge::ReplayFallback:
    return "replay-fallback";
  }
  return "program";
}

bool parseJudge(const std::string &name, Judge &out) {
  for (Judge j : {Judge::Program, Judge::ReplayReference, Judge::ReplayFallback})
    if (name == judgeName(j)) {
      out = j;
      return true;
    }
  return false;
}

const VariantResult *EvalResults::find(const std::string &id) const {
  for (const VariantResult &r : results)
    if (r.id == id)
      return &r;
  return nullptr;
}

std::string formatResults(const EvalResults &r) {
  std::ostringstream os;
  os << "cudal1-results " << kResultsVersion << "\n";
  os << "bundle " << oneLine(r.bundle) << "\n";
  os << "gpu " << oneLine(r.gpu) << "\n";
  os << "date " << oneLine(r.date) << "\n";
  os << "wall-s " << formatDouble(r.wallSeconds) << "\n";
  for (const VariantResult &v : r.results) {
    os << "result " << v.id << " outcome=" << outcomeName(v.outcome);
    if (!v.hash.empty())
      os << " hash=" << v.hash;
    os << " compiler=" << (v.compiler.empty() ? "-" : v.compiler)
       << " compile-s=" << formatDouble(v.compileSeconds)
       << " verify=" << (v.verifyMode.empty() ? "-" : v.verifyMode)
       << " timed=" << (v.timed ? "yes" : "no");
    if (v.timed)
      os << " time-ms=" << formatDouble(v.timeMs) << " speedup=" << formatDouble(v.speedup)
         << " lo=" << formatDouble(v.lo) << " hi=" << formatDouble(v.hi)
         << " faster=" << (v.faster ? "yes" : "no")
         << " suspicious=" << (v.suspicious ? "yes" : "no")
         << " side-work=" << (v.sideWork ? "yes" : "no") << " rounds=" << v.rounds;
    if (v.timed && !v.samplesMs.empty()) {
      os << " samples-ms=";
      for (size_t i = 0; i < v.samplesMs.size(); ++i)
        os << (i ? "," : "") << formatDouble(v.samplesMs[i]);
    }
    if (v.haveFloor)
      os << " floor-bytes=" << formatDouble(v.floorBytes)
         << " floor-flops=" << formatDouble(v.floorFlops)
         << " floor-dtype=" << (v.floorDtype.empty() ? "-" : v.floorDtype);
    os << "\n";
    for (const std::string &d : v.details)
      os << "detail " << v.id << " " << oneLine(d) << "\n";
    for (const std::string &m : v.mismatches)
      os << "mismatch " << v.id << " " << oneLine(m) << "\n";
  }
  return os.str();
}

Expected<EvalResults> parseResults(const std::string &text, const std::string &name) {
  EvalResults r;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  bool header = false;
  std::map<std::string, size_t> index;
  while (std::getline(in, line)) {
    ++lineNo;
    std::string where = name + ":" + std::to_string(lineNo);
    if (line.empty())
      continue;
    size_t sp = line.find(' ');
    std::string head = line.substr(0, sp);
    std::string rest = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (!header) {
      if (head != "cudal1-results")
        return makeError(where, ": not a cudal1 results file");
      if (rest != std::to_string(kResultsVersion))
        return makeError(where, ": results version ", rest, " is not supported");
      header = true;
      continue;
    }
    if (head == "bundle")
      r.bundle = rest;
    else if (head == "gpu")
      r.gpu = rest;
    else if (head == "date")
      r.date = rest;
    else if (head == "wall-s") {
      if (!parseFinite(rest, 0, 1e12, r.wallSeconds))
        return makeError(where, ": wall-s '", rest, "' is not a time in seconds");
    } else if (head == "result") {
      std::istringstream ws(rest);
      VariantResult v;
      ws >> v.id;
      if (v.id.empty())
        return makeError(where, ": result without an id");
      std::string kv;
      bool sawOutcome = false;
      while (ws >> kv) {
        size_t eq = kv.find('=');
        if (eq == std::string::npos)
          return makeError(where, ": expected key=value, got '", kv, "'");
        std::string k = kv.substr(0, eq), val = kv.substr(eq + 1);
        auto yes = [&] { return val == "yes"; };
        // Times, ratios and counts: finite and not negative; a value that
        // does not parse is an error (atof read it as 0).
        auto number = [&](double &out) { return parseFinite(val, 0, 1e300, out); };
        bool bad = false;
        if (k == "outcome") {
          if (!parseOutcome(val, v.outcome))
            return makeError(where, ": unknown outcome '", val, "'");
          sawOutcome = true;
        } else if (k == "compiler")
          v.compiler = val == "-" ? "" : val;
        else if (k == "hash")
          v.hash = val;
        else if (k == "compile-s")
          bad = !number(v.compileSeconds);
        else if (k == "verify")
          v.verifyMode = val == "-" ? "" : val;
        else if (k == "timed")
          v.timed = yes();
        else if (k == "time-ms")
          bad = !number(v.timeMs);
        else if (k == "speedup")
          bad = !number(v.speedup);
        else if (k == "lo")
          bad = !number(v.lo);
        else if (k == "hi")
          bad = !number(v.hi);
        else if (k == "faster")
          v.faster = yes();
        else if (k == "suspicious")
          v.suspicious = yes();
        else if (k == "side-work")
          v.sideWork = yes();
        else if (k == "rounds")
          bad = !parseInteger(val, 0, INT_MAX, v.rounds);
        else if (k == "samples-ms") {
          v.samplesMs.clear();
          std::istringstream ns(val);
          std::string num;
          double d = 0;
          while (!bad && std::getline(ns, num, ','))
            if (!(bad = !parseFinite(num, 0, 1e300, d)))
              v.samplesMs.push_back(d);
        } else if (k == "floor-bytes") {
          v.haveFloor = true;
          bad = !number(v.floorBytes);
        } else if (k == "floor-flops")
          bad = !number(v.floorFlops);
        else if (k == "floor-dtype")
          v.floorDtype = val == "-" ? "" : val;
        // Unknown keys are skipped: newer writers may add some.
        if (bad)
          return makeError(where, ": ", k, "='", val, "' is not a number >= 0");
      }
      if (!sawOutcome)
        return makeError(where, ": result for '", v.id, "' has no outcome");
      index[v.id] = r.results.size();
      r.results.push_back(std::move(v));
    } else if (head == "detail" || head == "mismatch") {
      size_t sp2 = rest.find(' ');
      std::string id = rest.substr(0, sp2);
      auto it = index.find(id);
      if (it == index.end())
        return makeError(where, ": ", head, " for unknown variant '", id, "'");
      std::string text2 = sp2 == std::string::npos ? "" : rest.substr(sp2 + 1);
      (head == "detail" ? r.results[it->second].details : r.results[it->second].mismatches)
          .push_back(text2);
    } else {
      return makeError(where, ": unknown line '", head, "'");
    }
  }
  if (!header)
    return makeError(name, ": empty results file");
  return r;
}

Status writeResults(const std::string &path, const EvalResults &r) {
  std::string text = formatResults(r);
  return writeFileAtomically(path, text.data(), text.size());
}

Expected<EvalResults> readResults(const std::string &path) {
  Expected<std::vector<uint8_t>> data = readWholeFile(path);
  if (!data.ok())
    return data.error();
  return parseResults(std::string(data->begin(), data->end()), path);
}

} // namespace cudal1
