// Parsing and writing bundle manifests: a line-based format that needs no
// JSON library on the GPU machine.
#include "cudal1/Eval/Bundle.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/LaunchRemap.h"
#include "cudal1/Eval/Numbers.h"

#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>

namespace cudal1 {

std::vector<std::string> splitWords(const std::string &line) {
  std::vector<std::string> words;
  std::string cur;
  bool inWord = false, quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
      inWord = true;
      continue;
    }
    if (!quoted && (c == ' ' || c == '\t' || c == '\r')) {
      if (inWord)
        words.push_back(cur);
      cur.clear();
      inWord = false;
      continue;
    }
    cur += c;
    inWord = true;
  }
  if (inWord)
    words.push_back(cur);
  return words;
}

namespace {

bool isValidVariantId(const std::string &id) {
  if (id.empty() || id.size() > 64)
    return false;
  for (char c : id)
    if (!(isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

bool isSafeRelativePath(const std::string &p) {
  if (p.empty() || p[0] == '/')
    return false;
  std::stringstream ss(p);
  std::string part;
  while (std::getline(ss, part, '/'))
    if (part == "..")
      return false;
  return true;
}

} // namespace

Status parseVariantHead(const std::vector<std::string> &w, size_t &i, bool hasId, std::string &id,
                        std::string &source, const std::string &where) {
  if (hasId) {
    if (i >= w.size() || !isValidVariantId(w[i]))
      return makeError(where, ": variant id missing or not made of letters, "
                              "digits, '_', '-', '.'");
    id = w[i++];
  }
  if (i >= w.size())
    return makeError(where, ": source file missing");
  if (!isSafeRelativePath(w[i]))
    return makeError(where, ": '", w[i], "' must be a relative path inside the bundle");
  source = w[i++];
  return Status::success();
}

// Quotes every character splitWords splits on, and the empty word (which
// otherwise vanishes): formatted text must parse back to the same words.
std::string quoteIfNeeded(const std::string &w) {
  return !w.empty() && w.find_first_of(" \t\r") == std::string::npos ? w : "\"" + w + "\"";
}

namespace {

// strtoul accepted "-1" (as 2^64-1, then refused only by the range check)
// and " 7"; from_chars takes digits only.
bool parseUnsigned(const std::string &s, uint32_t &out) {
  return parseInteger<uint32_t>(s, 0, UINT32_MAX, out);
}

bool parseDim3(const std::string &s, uint32_t out[3]) {
  std::stringstream ss(s);
  std::string part;
  int i = 0;
  out[0] = out[1] = out[2] = 1;
  while (std::getline(ss, part, ',')) {
    if (i == 3 || !parseUnsigned(part, out[i]) || out[i] == 0)
      return false;
    ++i;
  }
  return i > 0;
}

std::vector<std::string> splitComma(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ','))
    if (!part.empty())
      out.push_back(part);
  return out;
}

std::string joinComma(const std::vector<std::string> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + v[i];
  return s;
}

// Reads "ID FILE key=value..." (or "FILE key=value..." when hasId is false).
Status parseVariant(const std::vector<std::string> &w, size_t first, bool hasId, VariantSpec &v,
                    const std::string &where) {
  size_t i = first;
  if (Status s = parseVariantHead(w, i, hasId, v.id, v.source, where); !s.ok())
    return s;
  for (; i < w.size(); ++i) {
    size_t eq = w[i].find('=');
    if (eq == std::string::npos)
      return makeError(where, ": expected key=value, got '", w[i], "'");
    std::string key = w[i].substr(0, eq), val = w[i].substr(eq + 1);
    if (key == "entry")
      v.entry = val;
    else if (key == "compiler") {
      if (val != "auto" && val != "nvrtc" && val != "nvcc")
        return makeError(where, ": compiler must be auto, nvrtc or nvcc");
      v.compiler = val;
    } else if (key == "flags")
      v.extraFlags = splitComma(val);
    else if (key == "fast-math")
      v.fastMath = val == "1" || val == "yes" || val == "true";
    else if (key == "grid") {
      if (!parseDim3(val, v.launch.grid))
        return makeError(where, ": bad grid '", val, "' (want X[,Y[,Z]])");
      v.launch.hasGrid = true;
    } else if (key == "block") {
      if (!parseDim3(val, v.launch.block))
        return makeError(where, ": bad block '", val, "' (want X[,Y[,Z]])");
      v.launch.hasBlock = true;
    } else if (key == "shmem") {
      if (!parseUnsigned(val, v.launch.sharedBytes))
        return makeError(where, ": bad shmem '", val, "'");
      v.launch.hasShared = true;
    } else if (key == "remap") {
      Expected<LaunchRemap> r = parseLaunchRemap(val);
      if (!r.ok())
        return makeError(where, ": bad remap: ", r.error().message());
      v.remap = std::move(r->steps);
    } else
      return makeError(where, ": unknown key '", key, "'");
  }
  if (!v.remap.empty() && (v.launch.hasGrid || v.launch.hasBlock))
    return makeError(where, ": remap= and grid= or block= exclude each other (remap computes "
                            "each launch's grid and block)");
  return Status::success();
}

std::string formatVariant(const VariantSpec &v, bool withId) {
  std::string s = withId ? v.id + " " : "";
  s += quoteIfNeeded(v.source);
  if (!v.entry.empty())
    s += " " + quoteIfNeeded("entry=" + v.entry); // a template entry may hold spaces
  if (!v.compiler.empty())
    s += " compiler=" + v.compiler;
  if (!v.extraFlags.empty())
    s += " " + quoteIfNeeded("flags=" + joinComma(v.extraFlags));
  if (v.fastMath)
    s += " fast-math=1";
  auto dim = [](const uint32_t d[3]) {
    return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
  };
  if (v.launch.hasGrid)
    s += " grid=" + dim(v.launch.grid);
  if (v.launch.hasBlock)
    s += " block=" + dim(v.launch.block);
  if (v.launch.hasShared)
    s += " shmem=" + std::to_string(v.launch.sharedBytes);
  if (!v.remap.empty())
    s += " " + quoteIfNeeded("remap=" + LaunchRemap{v.remap}.str());
  return s;
}

bool parseDouble(const std::string &s, double &out) {
  return parseFinite(s, -1e300, 1e300, out); // not "inf" or "nan"
}

} // namespace

Expected<Bundle> parseManifest(const std::string &text, const std::string &dir,
                               const std::string &name) {
  Bundle b;
  b.dir = dir;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  bool sawHeader = false, sawOriginal = false;
  std::set<std::string> ids = {"original", "reference"};
  while (std::getline(in, line)) {
    ++lineNo;
    std::string where = name + ":" + std::to_string(lineNo);
    size_t hash = line.find('#');
    if (hash != std::string::npos)
      line = line.substr(0, hash);
    std::vector<std::string> w = splitWords(line);
    if (w.empty())
      continue;
    if (!sawHeader) {
      if (w[0] != "cudal1-bundle" || w.size() != 2)
        return makeError(where, ": not a cudal1 bundle manifest (the first "
                                "line must be 'cudal1-bundle 1')");
      if (w[1] != std::to_string(kBundleVersion))
        return makeError(where, ": bundle version ", w[1],
                         " is not supported (this build reads version ", kBundleVersion, ")");
      sawHeader = true;
      continue;
    }
    const std::string &d = w[0];
    auto needArgs = [&](size_t n) -> Status {
      if (w.size() < n + 1)
        return makeError(where, ": '", d, "' needs ", n, " value(s)");
      return Status::success();
    };
    if (d == "kernel-key" || d == "entry" || d == "arch" || d == "compiler" || d == "capture" ||
        d == "reduction-length") {
      if (Status s = needArgs(1); !s.ok())
        return s;
      if (w.size() != 2)
        return makeError(where, ": '", d, "' takes exactly one value");
      if (d == "kernel-key")
        b.kernelKey = w[1];
      else if (d == "entry")
        b.entry = w[1];
      else if (d == "arch")
        b.arch = w[1];
      else if (d == "compiler") {
        if (w[1] != "auto" && w[1] != "nvrtc" && w[1] != "nvcc")
          return makeError(where, ": compiler must be auto, nvrtc or nvcc");
        b.compiler = w[1];
      } else if (d == "capture") {
        if (!isSafeRelativePath(w[1]))
          return makeError(where, ": '", w[1], "' must be a relative path inside the bundle");
        b.captures.push_back(w[1]);
      } else {
        uint32_t n;
        if (!parseUnsigned(w[1], n) || n == 0 || n > uint32_t(INT32_MAX))
          return makeError(where, ": reduction-length must be a positive "
                                  "integer");
        b.tolerance.reductionLength = int(n);
      }
    } else if (d == "args") {
      for (size_t i = 1; i < w.size(); ++i) {
        Expected<ArgType> t = parseArgType(w[i]);
        if (!t.ok())
          return t.error().withContext(where);
        b.args.push_back(*t);
      }
    } else if (d == "flags") {
      b.flags.assign(w.begin() + 1, w.end());
    } else if (d == "tolerance") {
      for (size_t i = 1; i < w.size(); ++i) {
        size_t eq = w[i].find('=');
        double v;
        if (eq == std::string::npos || !parseDouble(w[i].substr(eq + 1), v) || v < 0)
          return makeError(where, ": bad tolerance setting '", w[i], "'");
        std::string key = w[i].substr(0, eq);
        if (key == "k")
          b.tolerance.k = v;
        else if (key == "rel32")
          b.tolerance.rel32 = v;
        else if (key == "abs32")
          b.tolerance.abs32 = v;
        else if (key == "rel64")
          b.tolerance.rel64 = v;
        else if (key == "abs64")
          b.tolerance.abs64 = v;
        else
          return makeError(where, ": unknown tolerance key '", key, "'");
      }
    } else if (d == "original" || d == "reference") {
      VariantSpec v;
      if (Status s = parseVariant(w, 1, false, v, where); !s.ok())
        return s;
      v.id = d;
      if (d == "original") {
        if (sawOriginal)
          return makeError(where, ": a second 'original'");
        sawOriginal = true;
        b.original = v;
      } else {
        if (b.hasReference)
          return makeError(where, ": a second 'reference'");
        b.hasReference = true;
        b.reference = v;
      }
    } else if (d == "variant") {
      VariantSpec v;
      if (Status s = parseVariant(w, 1, true, v, where); !s.ok())
        return s;
      if (!ids.insert(v.id).second)
        return makeError(where, ": variant id '", v.id, "' is used twice (or is reserved)");
      b.variants.push_back(v);
    } else {
      return makeError(where, ": unknown directive '", d, "'");
    }
  }
  if (!sawHeader)
    return makeError(name, ": empty manifest (want 'cudal1-bundle 1' first)");
  if (b.kernelKey.empty())
    return makeError(name, ": missing 'kernel-key'");
  if (b.entry.empty())
    b.entry = b.kernelKey;
  if (!sawOriginal)
    return makeError(name, ": missing 'original'");
  if (b.captures.empty())
    return makeError(name, ": missing 'capture'");
  if (b.args.empty())
    return makeError(name, ": missing 'args' (the kernel's argument types)");
  auto fill = [&](VariantSpec &v) {
    if (v.entry.empty())
      v.entry = b.entry;
    if (v.compiler.empty())
      v.compiler = b.compiler;
  };
  fill(b.original);
  if (b.hasReference)
    fill(b.reference);
  for (VariantSpec &v : b.variants)
    fill(v);
  return b;
}

std::string formatManifest(const Bundle &b) {
  std::ostringstream os;
  os << "cudal1-bundle " << kBundleVersion << "\n";
  os << "kernel-key " << quoteIfNeeded(b.kernelKey) << "\n";
  os << "entry " << quoteIfNeeded(b.entry) << "\n";
  os << "args";
  for (const ArgType &t : b.args)
    os << " " << formatArgType(t);
  os << "\n";
  os << "arch " << quoteIfNeeded(b.arch) << "\n";
  os << "compiler " << quoteIfNeeded(b.compiler) << "\n";
  if (!b.flags.empty()) {
    os << "flags";
    for (const std::string &f : b.flags)
      os << " " << quoteIfNeeded(f);
    os << "\n";
  }
  if (b.tolerance.reductionLength != 1)
    os << "reduction-length " << b.tolerance.reductionLength << "\n";
  Tolerance def;
  if (b.tolerance.k != def.k || b.tolerance.rel32 != def.rel32 || b.tolerance.abs32 != def.abs32 ||
      b.tolerance.rel64 != def.rel64 || b.tolerance.abs64 != def.abs64)
    os << "tolerance k=" << formatDouble(b.tolerance.k)
       << " rel32=" << formatDouble(b.tolerance.rel32)
       << " abs32=" << formatDouble(b.tolerance.abs32)
       << " rel64=" << formatDouble(b.tolerance.rel64)
       << " abs64=" << formatDouble(b.tolerance.abs64) << "\n";
  for (const std::string &c : b.captures)
    os << "capture " << quoteIfNeeded(c) << "\n";
  os << "original " << formatVariant(b.original, false) << "\n";
  if (b.hasReference)
    os << "reference " << formatVariant(b.reference, false) << "\n";
  for (const VariantSpec &v : b.variants)
    os << "variant " << formatVariant(v, true) << "\n";
  return os.str();
}

Expected<Bundle> readBundle(const std::string &dir) {
  std::string manifest = dir + "/manifest.txt";
  Expected<std::vector<uint8_t>> data = readWholeFile(manifest);
  if (!data.ok())
    return makeError("not a bundle: ", data.error().message());
  Expected<Bundle> b = parseManifest(std::string(data->begin(), data->end()), dir, manifest);
  if (!b.ok())
    return b;
  auto exists = [&](const std::string &rel, const char *what) -> Status {
    struct stat st;
    if (::stat(b->path(rel).c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return makeError(manifest, ": ", what, " '", rel, "' does not exist");
    return Status::success();
  };
  for (const std::string &c : b->captures)
    if (Status s = exists(c, "capture"); !s.ok())
      return s;
  if (Status s = exists(b->original.source, "source"); !s.ok())
    return s;
  if (b->hasReference)
    if (Status s = exists(b->reference.source, "source"); !s.ok())
      return s;
  for (const VariantSpec &v : b->variants)
    if (Status s = exists(v.source, "source"); !s.ok())
      return s;
  return b;
}

Status writeManifest(const Bundle &bundle, const std::string &dir) {
  std::string text = formatManifest(bundle);
  return writeFileAtomically(dir + "/manifest.txt", text.data(), text.size());
}

std::string verifyModeOf(const Bundle &b) {
  return b.hasReference ? "double-reference" : "fallback-no-reference";
}

} // namespace cudal1
