// The kernel part of a split-path bundle: its manifest and status file
// (docs/formats/kernel-plans.md).
#include "cudal1/Eval/KernelPlans.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/Numbers.h"

#include <map>
#include <set>
#include <sstream>

namespace cudal1 {

namespace {
const char *kHeader = "cudal1-kernel-plans";
const char *kStatusHeader = "cudal1-kernel-plans-status";

/// A word that names a file in the bundle: no blanks, quotes, absolute
/// paths or "..".
bool safeRelative(const std::string &p) {
  if (p.empty() || p[0] == '/' || p.find_first_of(" \t\"\\") != std::string::npos)
    return false;
  std::istringstream parts(p);
  for (std::string part; std::getline(parts, part, '/');)
    if (part == ".." || part.empty())
      return false;
  return true;
}

/// A remark on one line, without the double quotes that group words.
std::string oneLine(std::string s) {
  for (char &c : s)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
    else if (c == '"')
      c = '\'';
  return s;
}

/// The lines of a manifest-like file after its header "HEADER VERSION":
/// calls `line(words, where)` for each other non-comment line.
template <typename F>
Status eachLine(const std::string &text, const std::string &name, const char *header, F line) {
  std::istringstream in(text);
  std::string l;
  int n = 0;
  bool sawHeader = false;
  while (std::getline(in, l)) {
    ++n;
    std::string where = name + ":" + std::to_string(n);
    size_t first = l.find_first_not_of(" \t");
    if (first == std::string::npos || l[first] == '#')
      continue;
    std::vector<std::string> w = splitWords(l);
    if (w.empty())
      continue;
    if (!sawHeader) {
      if (w[0] != header || w.size() != 2)
        return makeError(where, ": not a ", header, " file (the first line must be '", header, " ",
                         kKernelPlansVersion, "')");
      int version = 0;
      if (!parseInteger(w[1], 1, kKernelPlansVersion, version))
        return makeError(where, ": ", header, " version ", w[1],
                         " is not supported (this build reads versions 1 to ", kKernelPlansVersion,
                         ")");
      sawHeader = true;
      continue;
    }
    if (Status s = line(w, where); !s.ok())
      return s;
  }
  if (!sawHeader)
    return makeError(name, ": empty (expected '", header, " ", kKernelPlansVersion, "')");
  return Status::success();
}

/// Splits "key=value"; false when the word has no '='.
bool keyValue(const std::string &w, std::string &key, std::string &value) {
  size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0)
    return false;
  key = w.substr(0, eq);
  value = w.substr(eq + 1);
  return true;
}

Status writeText(const std::string &path, const std::string &text) {
  return writeFileAtomically(path, text.data(), text.size());
}

Expected<std::string> readText(const std::string &path) {
  Expected<std::vector<uint8_t>> data = readWholeFile(path);
  if (!data.ok())
    return data.error();
  return std::string(data->begin(), data->end());
}
} // namespace

const KernelPlanKernel *KernelPlans::kernel(const std::string &key) const {
  for (const KernelPlanKernel &k : kernels)
    if (k.key == key)
      return &k;
  return nullptr;
}

const KernelPlanStatus *KernelPlansStatus::find(const std::string &key) const {
  for (const KernelPlanStatus &k : kernels)
    if (k.key == key)
      return &k;
  return nullptr;
}

const KernelPlanVariantStatus *KernelPlansStatus::findVariant(const std::string &id) const {
  for (const KernelPlanVariantStatus &v : variants)
    if (v.id == id)
      return &v;
  return nullptr;
}

const std::vector<std::string> &captureRuntimeFiles() {
  static const std::vector<std::string> files = {
      "lib/Capture/CaptureRuntime.cpp",   "lib/Capture/CaptureFile.cpp",
      "include/cudal1/Capture/Capture.h", "include/cudal1/Capture/CaptureFile.h",
      "include/cudal1/Eval/Error.h",      "include/cudal1/Eval/Numbers.h"};
  return files;
}

std::string formatKernelPlans(const KernelPlans &p) {
  std::ostringstream o;
  o << kHeader << " " << kKernelPlansVersion << "\n";
  o << "# The kernel-level plans of this program bundle, judged by replay on the GPU\n"
       "# machine (docs/formats/kernel-plans.md): cudal1-eval builds ../"
    << p.instrumented << "\n# with the bundle's build command and the capture runtime ("
    << p.runtime
    << "/), runs it\n# once to capture the launches, then verifies and times each variant's "
       "kernel\n# against its double reference.\n";
  o << "instrumented " << p.instrumented << "\n";
  o << "runtime " << p.runtime << "\n";
  o << "arch " << quoteIfNeeded(p.arch) << "\n";
  if (!p.flags.empty()) {
    o << "flags";
    for (const std::string &f : p.flags)
      o << " " << quoteIfNeeded(f);
    o << "\n";
  }
  for (const KernelPlanKernel &k : p.kernels)
    o << "kernel " << quoteIfNeeded(k.key) << " " << quoteIfNeeded("name=" + k.name) << " "
      << quoteIfNeeded("entry=" + k.entry) << " " << quoteIfNeeded("reference=" + k.reference)
      << " " << quoteIfNeeded("reference-entry=" + k.referenceEntry) << " "
      << quoteIfNeeded("args=" + k.args) << "\n";
  for (const KernelPlanVariant &v : p.variants)
    o << "variant " << v.id << " " << quoteIfNeeded("kernel=" + v.kernelKey) << " "
      << quoteIfNeeded("entry=" + v.entry)
      << (v.launch.empty() ? "" : " " + quoteIfNeeded("launch=" + v.launch.str()))
      << (v.fastMath ? " fast-math" : "") << "\n";
  return o.str();
}

Expected<KernelPlans> parseKernelPlans(const std::string &text, const std::string &dir,
                                       const std::string &name) {
  KernelPlans p;
  p.dir = dir;
  p.flags.clear();
  std::set<std::string> ids;
  Status s = eachLine(
      text, name, kHeader,
      [&](const std::vector<std::string> &w, const std::string &where) -> Status {
        const std::string &d = w[0];
        auto one = [&](std::string &out) -> Status {
          if (w.size() != 2)
            return makeError(where, ": '", d, "' takes one value");
          out = w[1];
          return Status::success();
        };
        if (d == "instrumented" || d == "runtime") {
          std::string &out = d == "instrumented" ? p.instrumented : p.runtime;
          if (Status s = one(out); !s.ok())
            return s;
          if (!safeRelative(out))
            return makeError(where, ": '", out, "' is not a path inside the bundle");
          return Status::success();
        }
        if (d == "arch")
          return one(p.arch);
        if (d == "flags") {
          p.flags.assign(w.begin() + 1, w.end());
          return Status::success();
        }
        if (d == "kernel" || d == "variant") {
          if (w.size() < 2)
            return makeError(where, ": '", d, "' needs a name");
          std::map<std::string, std::string> kv;
          bool fastMath = false;
          for (size_t i = 2; i < w.size(); ++i) {
            std::string k, v;
            if (d == "variant" && w[i] == "fast-math")
              fastMath = true;
            else if (!keyValue(w[i], k, v))
              return makeError(where, ": unexpected '", w[i], "' (want KEY=VALUE)");
            else
              kv[k] = v;
          }
          auto need = [&](const char *key, std::string &out) -> Status {
            auto it = kv.find(key);
            if (it == kv.end() || (it->second.empty() && std::string(key) != "args"))
              return makeError(where, ": ", d, " ", w[1], " has no ", key, "=");
            out = it->second;
            kv.erase(it);
            return Status::success();
          };
          if (d == "kernel") {
            KernelPlanKernel k;
            k.key = w[1];
            for (auto [key, out] : {std::pair<const char *, std::string *>{"name", &k.name},
                                    {"entry", &k.entry},
                                    {"reference", &k.reference},
                                    {"reference-entry", &k.referenceEntry},
                                    {"args", &k.args}})
              if (Status s = need(key, *out); !s.ok())
                return s;
            if (!safeRelative(k.reference))
              return makeError(where, ": '", k.reference, "' is not a path inside the bundle");
            if (p.kernel(k.key))
              return makeError(where, ": kernel ", k.key, " is listed twice");
            p.kernels.push_back(k);
          } else {
            KernelPlanVariant v;
            v.id = w[1];
            v.fastMath = fastMath;
            if (v.id == "original" ||
                v.id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789_-.") != std::string::npos ||
                v.id[0] == '.')
              return makeError(where, ": '", v.id, "' is not a variant id");
            if (!ids.insert(v.id).second)
              return makeError(where, ": variant ", v.id, " is listed twice");
            for (auto [key, out] : {std::pair<const char *, std::string *>{"kernel", &v.kernelKey},
                                    {"entry", &v.entry}})
              if (Status s = need(key, *out); !s.ok())
                return s;
            if (!p.kernel(v.kernelKey))
              return makeError(where, ": variant ", v.id, ": kernel ", v.kernelKey,
                               " is not listed before it");
            if (auto it = kv.find("launch"); it != kv.end()) {
              Expected<LaunchRemap> r = parseLaunchRemap(it->second);
              if (!r.ok())
                return makeError(where, ": variant ", v.id, ": ", r.error().message());
              if (r->empty())
                return makeError(where, ": variant ", v.id, ": launch= is empty");
              v.launch = *r;
              kv.erase(it);
            }
            p.variants.push_back(v);
          }
          if (!kv.empty())
            return makeError(where, ": unknown key '", kv.begin()->first, "='");
          return Status::success();
        }
        return makeError(where, ": unknown line '", d, "'");
      });
  if (!s.ok())
    return s;
  return p;
}

Expected<KernelPlans> readKernelPlans(const std::string &dir) {
  Expected<std::string> text = readText(dir + "/manifest.txt");
  if (!text.ok())
    return text.error();
  return parseKernelPlans(*text, dir, dir + "/manifest.txt");
}

Status writeKernelPlans(const KernelPlans &p, const std::string &dir) {
  return writeText(dir + "/manifest.txt", formatKernelPlans(p));
}

std::string formatKernelPlansStatus(const KernelPlansStatus &s) {
  std::ostringstream o;
  o << kStatusHeader << " " << kKernelPlansVersion << "\n";
  if (!s.remark.empty())
    o << "capture " << quoteIfNeeded(oneLine(s.remark)) << "\n";
  for (const KernelPlanStatus &k : s.kernels) {
    if (k.replayed)
      o << "kernel " << quoteIfNeeded(k.key) << " replay launches=" << k.launches
        << " results=" << k.results << "\n";
    else
      o << "kernel " << quoteIfNeeded(k.key) << " program launches=" << k.launches << " "
        << quoteIfNeeded("remark=" + oneLine(k.remark)) << "\n";
  }
  for (const KernelPlanVariantStatus &v : s.variants)
    o << "variant " << quoteIfNeeded(v.id) << " program "
      << quoteIfNeeded("remark=" + oneLine(v.remark)) << "\n";
  return o.str();
}

Expected<KernelPlansStatus> parseKernelPlansStatus(const std::string &text,
                                                   const std::string &name) {
  KernelPlansStatus st;
  Status s = eachLine(
      text, name, kStatusHeader,
      [&](const std::vector<std::string> &w, const std::string &where) -> Status {
        if (w[0] == "capture" && w.size() == 2) {
          st.remark = w[1];
          return Status::success();
        }
        if (w[0] == "variant") {
          std::string key, v;
          if (w.size() != 4 || w[2] != "program" || !keyValue(w[3], key, v) || key != "remark")
            return makeError(where, ": expected 'variant ID program remark=REMARK'");
          st.variants.push_back({w[1], v});
          return Status::success();
        }
        if (w[0] != "kernel" || w.size() < 3 || (w[2] != "replay" && w[2] != "program"))
          return makeError(where, ": expected 'kernel KEY replay|program ...', 'variant ID program "
                                  "remark=REMARK' or 'capture REMARK'");
        KernelPlanStatus k;
        k.key = w[1];
        k.replayed = w[2] == "replay";
        for (size_t i = 3; i < w.size(); ++i) {
          std::string key, v;
          if (!keyValue(w[i], key, v))
            return makeError(where, ": unexpected '", w[i], "' (want KEY=VALUE)");
          if (key == "launches") {
            if (!parseInteger<unsigned>(v, 0u, 1u << 30, k.launches))
              return makeError(where, ": bad launch count '", v, "'");
          } else if (key == "results") {
            if (!safeRelative(v))
              return makeError(where, ": '", v, "' is not a path inside the bundle");
            k.results = v;
          } else if (key == "remark") {
            k.remark = v;
          } else {
            return makeError(where, ": unknown key '", key, "='");
          }
        }
        if (k.replayed && k.results.empty())
          return makeError(where, ": a replayed kernel needs results=");
        st.kernels.push_back(k);
        return Status::success();
      });
  if (!s.ok())
    return s;
  return st;
}

Expected<KernelPlansStatus> readKernelPlansStatus(const std::string &dir) {
  Expected<std::string> text = readText(dir + "/status.txt");
  if (!text.ok())
    return text.error();
  return parseKernelPlansStatus(*text, dir + "/status.txt");
}

Status writeKernelPlansStatus(const KernelPlansStatus &s, const std::string &dir) {
  return writeText(dir + "/status.txt", formatKernelPlansStatus(s));
}

} // namespace cudal1
