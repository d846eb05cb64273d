// The printers of --list-transforms: the legal space as JSON (for scripts)
// and as text (for people). Both walk the same LegalSpace.
#include "cudal1/Rewrite/LegalSpace.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace cudal1;

namespace {

llvm::json::Array transformsJson(const LegalSite &site) {
  llvm::json::Array arr;
  for (const LegalTransform &t : site.transforms) {
    llvm::json::Object o{{"name", t.name}, {"legal", t.legal}};
    if (t.legal) {
      llvm::json::Array params;
      for (const ParamSpace &p : t.params) {
        llvm::json::Array values;
        for (const std::string &v : p.values)
          values.push_back(v);
        params.push_back(llvm::json::Object{{"name", p.name}, {"values", std::move(values)}});
      }
      o["params"] = std::move(params);
      if (t.fastMath)
        o["fast_math"] = true;
      if (!t.links.empty()) {
        llvm::json::Array links;
        for (const std::string &l : t.links)
          links.push_back(l);
        o["links"] = std::move(links);
      }
    } else {
      o["reason"] = t.reason;
    }
    arr.push_back(std::move(o));
  }
  return arr;
}

llvm::json::Value siteJson(const LegalSite &s) {
  llvm::json::Object o{{"location", s.location}};
  switch (s.level) {
  case Transform::Level::Kernel:
    o["name"] = s.kernelName;
    o["key"] = s.kernelKey;
    break;
  case Transform::Level::Launch:
    o["id"] = s.scope.launch;
    o["kernel"] = s.kernelName;
    break;
  case Transform::Level::HostLoop: {
    o["id"] = s.scope.loop;
    o["function"] = s.function;
    llvm::json::Array ids;
    for (unsigned l : s.launches)
      ids.push_back(l);
    o["launches"] = std::move(ids);
    break;
  }
  case Transform::Level::HostSync:
    o["id"] = s.scope.sync;
    o["call"] = s.call;
    o["function"] = s.function;
    break;
  case Transform::Level::HostCopy:
    o["id"] = s.scope.copy;
    o["call"] = s.call;
    break;
  }
  if (!s.notRewritable.empty())
    o["not_rewritable"] = s.notRewritable;
  if (!s.fixedLoops.empty()) {
    llvm::json::Array loops;
    for (const LegalLoop &l : s.fixedLoops)
      loops.push_back(llvm::json::Object{{"id", l.id},
                                         {"kind", l.kind},
                                         {"location", l.location},
                                         {"not_rewritable", l.notRewritable}});
    o["fixed_loops"] = std::move(loops);
  }
  o["transforms"] = transformsJson(s);
  return o;
}

llvm::json::Array sitesJson(const std::vector<LegalSite> &sites) {
  llvm::json::Array arr;
  for (const LegalSite &s : sites)
    arr.push_back(siteJson(s));
  return arr;
}

void printTransforms(llvm::raw_ostream &os, const LegalSite &site) {
  if (!site.notRewritable.empty())
    os << "  (not rewritable: " << site.notRewritable << ")\n";
  for (const LegalLoop &l : site.fixedLoops)
    os << "  loop " << l.id << " (" << l.kind << ")  " << l.location
       << "  (not rewritable: " << l.notRewritable << ")\n";
  for (const LegalTransform &t : site.transforms) {
    if (!t.legal) {
      os << "  - " << t.name << ": " << t.reason << "\n";
      continue;
    }
    os << "  " << t.name;
    if (!t.params.empty()) {
      os << "(";
      for (size_t i = 0; i < t.params.size(); ++i) {
        os << (i ? ", " : "") << t.params[i].name << "=";
        for (size_t j = 0; j < t.params[i].values.size(); ++j)
          os << (j ? "|" : "") << t.params[i].values[j];
      }
      os << ")";
    }
    os << (t.fastMath ? "  [fast-math]" : "");
    for (const std::string &l : t.links)
      os << "  [link -l" << l << "]";
    os << "\n";
  }
}

} // namespace

std::string cudal1::printLegalSpaceJson(const LegalSpace &space) {
  llvm::json::Object root{{"schema", "cudal1-transforms"},
                          {"version", 1},
                          {"file", space.file},
                          {"kernels", sitesJson(space.kernels)},
                          {"launches", sitesJson(space.launches)},
                          {"loops", sitesJson(space.loops)},
                          {"syncs", sitesJson(space.syncs)},
                          {"copies", sitesJson(space.copies)}};
  if (!space.unlistedHostLoops.empty()) {
    llvm::json::Array ids;
    for (unsigned id : space.unlistedHostLoops)
      ids.push_back(id);
    root["unlisted_host_loops"] = std::move(ids);
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return out;
}

std::string cudal1::printLegalSpaceText(const LegalSpace &space) {
  std::string out;
  llvm::raw_string_ostream os(out);
  for (const LegalSite &s : space.kernels) {
    os << "kernel " << s.kernelName << "  " << s.location << "\n";
    printTransforms(os, s);
  }
  for (const LegalSite &s : space.launches) {
    os << "launch #" << s.scope.launch << " " << s.kernelName << "  " << s.location << "\n";
    printTransforms(os, s);
  }
  for (const LegalSite &s : space.loops) {
    os << "loop #" << s.scope.loop << " in " << s.function << "  " << s.location << "  launches";
    for (unsigned id : s.launches)
      os << " #" << id;
    os << "\n";
    printTransforms(os, s);
  }
  for (const LegalSite &s : space.syncs) {
    os << "sync #" << s.scope.sync << " " << s.call << "  " << s.location << "\n";
    printTransforms(os, s);
  }
  for (const LegalSite &s : space.copies) {
    os << "copy #" << s.scope.copy << " " << s.call << "  " << s.location << "\n";
    printTransforms(os, s);
  }
  // Host loop ids count every host loop of the unit (headers included):
  // say which ids the listing skips, as ranges.
  const std::vector<unsigned> &u = space.unlistedHostLoops;
  if (!u.empty()) {
    os << "host loops launching no kernel (not listed):";
    for (size_t i = 0; i < u.size();) {
      size_t j = i;
      while (j + 1 < u.size() && u[j + 1] == u[j] + 1)
        ++j;
      os << " #" << u[i];
      if (j > i)
        os << "-#" << u[j];
      i = j + 1;
    }
    os << "\n";
  }
  return out;
}
