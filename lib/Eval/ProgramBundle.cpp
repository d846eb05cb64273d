// Program-bundle manifests: the same line format as kernel bundles.
#include "cudal1/Eval/ProgramBundle.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/Numbers.h"
#include "cudal1/Eval/Verify.h"

#include <cctype>
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>
#include <sys/stat.h>

namespace cudal1 {

namespace {
const char *const kHeader = "cudal1-program-bundle";

bool parseNumber(const std::string &s, double &out) {
  return parseFinite(s, 0, 1e300, out); // "inf" and "nan" are not tolerances
}

} // namespace

Status checkProgramRegex(const std::string &re, const std::string &where) {
  // 1. Bounds std::regex itself does not keep: libstdc++ multiplies a
  // back-reference number into a long without an overflow check (the
  // manifest fuzzer found '\\99999999999999999999'), expands {n,m} into n
  // copies of the automaton, and compiles nesting recursively.
  if (re.size() > kMaxRegexLength)
    return makeError(where, ": regular expression longer than ", kMaxRegexLength, " characters");
  int depth = 0;
  for (size_t i = 0; i < re.size(); ++i) {
    char c = re[i];
    if (c == '\\' && i + 1 < re.size()) {
      ++i;
      if (std::isdigit(static_cast<unsigned char>(re[i])) && i + 1 < re.size() &&
          std::isdigit(static_cast<unsigned char>(re[i + 1])))
        return makeError(where, ": regular expression '", re, "': back-references go up to \\9");
      continue;
    }
    if (c == '(' && ++depth > kMaxRegexDepth)
      return makeError(where, ": regular expression nested deeper than ", kMaxRegexDepth);
    if (c == ')')
      --depth;
    if (c == '{') {
      size_t close = re.find('}', i);
      std::string inside = re.substr(i + 1, close == std::string::npos ? 0 : close - i - 1);
      size_t comma = inside.find(',');
      unsigned n = 0;
      std::string lo = inside.substr(0, comma);
      std::string hi = comma == std::string::npos ? "" : inside.substr(comma + 1);
      if ((!lo.empty() && !parseInteger(lo, 0u, kMaxRegexRepeat, n)) ||
          (!hi.empty() && !parseInteger(hi, 0u, kMaxRegexRepeat, n)))
        return makeError(where, ": regular expression '", re, "': a repetition count above ",
                         kMaxRegexRepeat);
    }
  }
  // 2. What std::regex refuses.
  try {
    std::regex r(re);
  } catch (const std::exception &e) {
    return makeError(where, ": bad regular expression '", re, "': ", e.what());
  }
  return Status::success();
}

namespace {

bool mentions(const std::vector<std::string> &words, const char *what) {
  for (const std::string &w : words)
    if (w.find(what) != std::string::npos)
      return true;
  return false;
}

Status parseProgramVariant(const std::vector<std::string> &w, size_t first, bool hasId,
                           ProgramVariant &v, const std::string &where) {
  size_t i = first;
  if (Status s = parseVariantHead(w, i, hasId, v.id, v.source, where); !s.ok())
    return s;
  for (; i < w.size(); ++i) {
    if (w[i] == "fast-math") {
      v.fastMath = true;
    } else if (w[i].rfind("hash=", 0) == 0) {
      if (!isVariantHash(w[i].substr(5)))
        return makeError(where, ": bad '", w[i], "' (want hash= and 32 hex digits)");
      v.hash = w[i].substr(5);
    } else if (w[i].rfind("link=", 0) == 0 && w[i].size() > 5 &&
               std::isalnum(static_cast<unsigned char>(w[i][5])) && // no options
               w[i].find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-.",
                                      5) == std::string::npos) {
      v.links.push_back(w[i].substr(5));
    } else {
      return makeError(where, ": unexpected '", w[i],
                       "' (a variant line is: variant ID FILE [fast-math] "
                       "[link=LIB]... [hash=H])");
    }
  }
  return Status::success();
}
} // namespace

namespace {
std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)v);
  return buf;
}
std::string hashOf(const std::string &s) {
  return hex16(fnv1a64(reinterpret_cast<const uint8_t *>(s.data()), s.size()));
}
} // namespace

std::string variantHash(const std::string &planText, const std::string &source) {
  return hashOf(planText) + hashOf(source);
}

bool isVariantHash(const std::string &hash) {
  return hash.size() == 32 && hash.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string measuredHash(const std::string &manifestHash, const std::string &source) {
  if (!isVariantHash(manifestHash))
    return "";
  return manifestHash.substr(0, 16) + hashOf(source);
}

bool isProgramManifest(const std::string &text) {
  size_t i = text.find_first_not_of(" \t\r\n");
  return i != std::string::npos && text.compare(i, 21, kHeader) == 0;
}

Expected<ProgramBundle> parseProgramManifest(const std::string &text, const std::string &dir,
                                             const std::string &name) {
  ProgramBundle b;
  b.dir = dir;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  bool sawHeader = false, sawOriginal = false;
  std::set<std::string> ids = {"original"};
  while (std::getline(in, line)) {
    ++lineNo;
    std::string where = name + ":" + std::to_string(lineNo);
    // Comments start with '#' at the start of a line only: regexes and
    // commands may hold '#'.
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#')
      continue;
    std::vector<std::string> w = splitWords(line);
    if (w.empty())
      continue;
    if (!sawHeader) {
      if (w[0] != kHeader || w.size() != 2)
        return makeError(where,
                         ": not a cudal1 program bundle (the first "
                         "line must be '",
                         kHeader, " 1')");
      if (w[1] != std::to_string(kProgramBundleVersion))
        return makeError(where, ": program bundle version ", w[1],
                         " is not supported (this build reads version ", kProgramBundleVersion,
                         ")");
      sawHeader = true;
      continue;
    }
    const std::string &d = w[0];
    std::vector<std::string> rest(w.begin() + 1, w.end());
    if (d == "build") {
      if (!mentions(rest, "{src}") || !mentions(rest, "{exe}"))
        return makeError(where, ": the build command must contain {src} and "
                                "{exe}");
      b.build = rest;
    } else if (d == "run") {
      if (!mentions(rest, "{exe}"))
        return makeError(where, ": the run command must contain {exe}");
      b.run = rest;
    } else if (d == "time-regex" || d == "ignore-regex") {
      if (rest.size() != 1)
        return makeError(where, ": '", d, "' takes one value (quote it)");
      if (Status s = checkProgramRegex(rest[0], where); !s.ok())
        return s;
      (d == "time-regex" ? b.timeRegex : b.ignoreRegex) = rest[0];
    } else if (d == "tolerance") {
      for (const std::string &kv : rest) {
        size_t eq = kv.find('=');
        double v = 0;
        if (eq == std::string::npos || !parseNumber(kv.substr(eq + 1), v))
          return makeError(where, ": bad tolerance setting '", kv, "'");
        std::string key = kv.substr(0, eq);
        if (key == "rel")
          b.rel = v;
        else if (key == "abs")
          b.abs = v;
        else if (key == "fast-math-scale")
          b.fastMathScale = v;
        else
          return makeError(where, ": unknown tolerance key '", key,
                           "' (rel, abs, fast-math-scale)");
      }
    } else if (d == "original") {
      if (sawOriginal)
        return makeError(where, ": a second 'original'");
      b.original.id = "original";
      if (Status s = parseProgramVariant(w, 1, false, b.original, where); !s.ok())
        return s;
      sawOriginal = true;
    } else if (d == "reference") {
      if (rest.size() != 1)
        return makeError(where, ": 'reference' takes one file (reference FILE)");
      if (!b.reference.empty())
        return makeError(where, ": a second 'reference'");
      std::string id;
      size_t i = 1;
      if (Status s = parseVariantHead(w, i, false, id, b.reference, where); !s.ok())
        return s;
    } else if (d == "variant") {
      ProgramVariant v;
      if (Status s = parseProgramVariant(w, 1, true, v, where); !s.ok())
        return s;
      if (!ids.insert(v.id).second)
        return makeError(where, ": variant id '", v.id, "' is used twice");
      b.variants.push_back(v);
    } else {
      return makeError(where, ": unknown directive '", d, "'");
    }
  }
  if (!sawHeader)
    return makeError(name, ": empty manifest");
  if (b.build.empty())
    return makeError(name, ": no 'build' command");
  if (b.run.empty())
    return makeError(name, ": no 'run' command");
  if (!sawOriginal)
    return makeError(name, ": no 'original'");
  return b;
}

std::string formatProgramManifest(const ProgramBundle &b) {
  std::ostringstream os;
  os << kHeader << " " << kProgramBundleVersion << "\n";
  auto words = [&](const char *d, const std::vector<std::string> &w) {
    os << d;
    for (const std::string &x : w)
      os << " " << quoteIfNeeded(x);
    os << "\n";
  };
  words("build", b.build);
  words("run", b.run);
  if (!b.timeRegex.empty())
    os << "time-regex \"" << b.timeRegex << "\"\n";
  if (!b.ignoreRegex.empty())
    os << "ignore-regex \"" << b.ignoreRegex << "\"\n";
  os << "tolerance rel=" << formatDouble(b.rel) << " abs=" << formatDouble(b.abs)
     << " fast-math-scale=" << formatDouble(b.fastMathScale) << "\n";
  auto links = [](const ProgramVariant &v) {
    std::string s;
    for (const std::string &l : v.links)
      s += " link=" + l;
    if (!v.hash.empty())
      s += " hash=" + v.hash;
    return s;
  };
  os << "original " << quoteIfNeeded(b.original.source) << (b.original.fastMath ? " fast-math" : "")
     << links(b.original) << "\n";
  if (!b.reference.empty())
    os << "reference " << quoteIfNeeded(b.reference) << "\n";
  for (const ProgramVariant &v : b.variants)
    os << "variant " << v.id << " " << quoteIfNeeded(v.source) << (v.fastMath ? " fast-math" : "")
       << links(v) << "\n";
  return os.str();
}

Expected<ProgramBundle> readProgramBundle(const std::string &dir) {
  std::string manifest = dir + "/manifest.txt";
  Expected<std::vector<uint8_t>> data = readWholeFile(manifest);
  if (!data.ok())
    return makeError("not a bundle: ", data.error().message());
  Expected<ProgramBundle> b =
      parseProgramManifest(std::string(data->begin(), data->end()), dir, manifest);
  if (!b.ok())
    return b;
  auto exists = [&](const std::string &rel) -> Status {
    struct stat st;
    if (::stat(b->path(rel).c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return makeError(manifest, ": source '", rel, "' does not exist");
    return Status::success();
  };
  if (Status s = exists(b->original.source); !s.ok())
    return s;
  if (!b->reference.empty())
    if (Status s = exists(b->reference); !s.ok())
      return s;
  for (const ProgramVariant &v : b->variants)
    if (Status s = exists(v.source); !s.ok())
      return s;
  return b;
}

Status writeProgramManifest(const ProgramBundle &bundle, const std::string &dir) {
  std::string text = formatProgramManifest(bundle);
  return writeFileAtomically(dir + "/manifest.txt", text.data(), text.size());
}

} // namespace cudal1
