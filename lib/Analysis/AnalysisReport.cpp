// Printing the analysis of a translation unit: JSON for tools, text for people.
#include "cudal1/Analysis/AnalysisReport.h"
#include "cudal1/Analysis/Dependence.h"
#include "cudal1/Analysis/KernelAnalysis.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace cudal1;
namespace json = llvm::json;

namespace {

struct Analyzed {
  std::vector<KernelAnalysis> kernels;
  std::vector<std::vector<LaunchDependence>> deps; ///< per host function
};

Analyzed analyzeAll(const ProgramModel &m) {
  mlir::MLIRContext ctx;
  Analyzed a;
  for (const Kernel &k : m.kernels)
    a.kernels.push_back(analyzeKernel(k, ctx));
  for (const HostFunction &f : m.hostFunctions)
    a.deps.push_back(analyzeLaunchPairs(m, f, ctx));
  return a;
}

json::Value strideJson(const Stride &s) {
  switch (s.kind) {
  case Stride::Kind::Constant:
    return s.value;
  case Stride::Kind::Symbolic:
    return s.text;
  case Stride::Kind::Unknown:
    return nullptr;
  }
  return nullptr;
}

json::Value orNull(const std::string &s) {
  return s.empty() ? json::Value(nullptr) : json::Value(s);
}

json::Array strings(const std::vector<std::string> &v) {
  json::Array a;
  for (const std::string &s : v)
    a.push_back(s);
  return a;
}

json::Array calls(const std::vector<KernelCall> &v, bool withTarget) {
  json::Array a;
  for (const KernelCall &c : v) {
    json::Object o{{"name", c.callee}, {"location", c.pos.str()}};
    if (withTarget)
      o["param"] = orNull(c.target);
    a.push_back(std::move(o));
  }
  return a;
}

} // namespace

std::string cudal1::analysisJson(const ProgramModel &m) {
  Analyzed an = analyzeAll(m);
  json::Array kernels;
  for (size_t ki = 0; ki < m.kernels.size(); ++ki) {
    const Kernel &k = m.kernels[ki];
    const KernelAnalysis &ka = an.kernels[ki];
    json::Array params;
    for (size_t i = 0; i < k.params.size(); ++i) {
      const KernelParam &p = k.params[i];
      params.push_back(json::Object{{"name", p.name},
                                    {"type", p.type},
                                    {"pointer", p.isPointer},
                                    {"const", p.pointeeConst},
                                    {"restrict", p.isRestrict},
                                    {"reads", ka.params[i].reads},
                                    {"writes", ka.params[i].writes}});
    }
    json::Array loops;
    for (const KernelLoop &l : k.loops)
      loops.push_back(json::Object{{"id", l.id},
                                   {"parent", l.parent},
                                   {"depth", l.depth},
                                   {"kind", l.kind},
                                   {"var", orNull(l.var)},
                                   {"init", orNull(l.init)},
                                   {"bound", orNull(l.bound)},
                                   {"step", orNull(l.step)},
                                   {"affine", l.affine},
                                   {"grid_stride", l.gridStride},
                                   {"location", l.pos.str()}});
    json::Array accesses;
    for (size_t i = 0; i < k.accesses.size(); ++i) {
      const MemAccess &a = k.accesses[i];
      const AccessAnalysis &aa = ka.accesses[i];
      json::Array lp;
      for (unsigned id : a.loops)
        lp.push_back(id);
      accesses.push_back(json::Object{{"param", a.param},
                                      {"kind", toString(a.kind)},
                                      {"atomic", a.atomic},
                                      {"index", a.index},
                                      {"affine", orNull(aa.affine)},
                                      {"stride_x", strideJson(aa.strideX)},
                                      {"guarded", aa.guarded},
                                      {"loops", std::move(lp)},
                                      {"location", a.pos.str()}});
    }
    json::Array shared;
    for (const SharedDecl &s : k.shared)
      shared.push_back(
          json::Object{{"name", s.name},
                       {"type", s.type},
                       {"bytes", s.bytes < 0 ? json::Value(nullptr) : json::Value(s.bytes)},
                       {"dynamic", s.dynamic},
                       {"location", s.pos.str()}});
    json::Object features;
    for (const auto &[name, v] : ka.features)
      features[name] = v;
    kernels.push_back(json::Object{
        {"name", k.name},
        {"mangled_name", k.mangledName},
        {"key", k.key},
        {"template_args", orNull(k.templateArgs)},
        {"location", k.pos.str()},
        {"from_header", k.fromHeader},
        {"params", std::move(params)},
        {"loops", std::move(loops)},
        {"accesses", std::move(accesses)},
        {"shared", std::move(shared)},
        {"barriers", calls(k.barriers, false)},
        {"atomics", calls(k.atomics, true)},
        {"calls", calls(k.calls, false)},
        {"guarded", ka.guarded},
        {"grid_stride", ka.gridStride},
        {"features", json::Object{{"version", featureVersion}, {"values", std::move(features)}}}});
  }
  json::Array launches;
  for (const LaunchSite &l : m.launches) {
    launches.push_back(
        json::Object{{"id", l.id},
                     {"kernel", l.kernel},
                     {"key", l.kernelIndex >= 0 ? json::Value(m.kernels[l.kernelIndex].key)
                                                : json::Value(nullptr)},
                     {"location", l.pos.str()},
                     {"line", l.pos.line},
                     {"function", l.function},
                     {"grid", l.grid},
                     {"block", l.block},
                     {"shared_mem", orNull(l.sharedMem)},
                     {"stream", orNull(l.stream)},
                     {"grid_dims", l.gridDims},
                     {"block_dims", l.blockDims},
                     {"args", strings(l.args)},
                     {"in_loop", l.inLoop},
                     {"loop_line", l.inLoop ? json::Value(l.loopPos.line) : json::Value(nullptr)}});
  }
  json::Array hosts;
  for (size_t fi = 0; fi < m.hostFunctions.size(); ++fi) {
    const HostFunction &f = m.hostFunctions[fi];
    json::Array events;
    for (const HostEvent &e : f.events) {
      json::Object o{{"kind", toString(e.kind)},  {"call", e.call},
                     {"line", e.pos.line},        {"in_loop", e.inLoop},
                     {"reads", strings(e.reads)}, {"writes", strings(e.writes)}};
      if (e.launch >= 0)
        o["launch"] = e.launch;
      events.push_back(std::move(o));
    }
    json::Array deps;
    for (const LaunchDependence &d : an.deps[fi]) {
      json::Array bufs;
      for (const BufferDependence &b : d.buffers)
        bufs.push_back(json::Object{{"buffer", b.buffer},
                                    {"kind", b.kind},
                                    {"result", toString(b.result)},
                                    {"detail", orNull(b.detail)}});
      deps.push_back(json::Object{{"first", d.first},
                                  {"second", d.second},
                                  {"sync_between", d.syncBetween},
                                  {"result", toString(d.overall())},
                                  {"buffers", std::move(bufs)}});
    }
    hosts.push_back(json::Object{{"name", f.name},
                                 {"location", f.pos.str()},
                                 {"events", std::move(events)},
                                 {"dependences", std::move(deps)}});
  }
  json::Object root{{"schema", "cudal1-analysis"},
                    {"version", analysisSchemaVersion},
                    {"file", m.mainFile},
                    // The host code's key (docs/TuneDB.md), so that an importer
                    // can record host plans under the key --tune uses.
                    {"host_key", m.hostKey},
                    {"kernels", std::move(kernels)},
                    {"launches", std::move(launches)},
                    {"host_functions", std::move(hosts)}};
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("{0:2}", json::Value(std::move(root))) << "\n";
  return os.str();
}

std::string cudal1::analysisText(const ProgramModel &m) {
  Analyzed an = analyzeAll(m);
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "file " << m.mainFile << ": " << m.kernels.size() << " kernel(s), " << m.launches.size()
     << " launch site(s)\n";
  for (size_t ki = 0; ki < m.kernels.size(); ++ki) {
    const Kernel &k = m.kernels[ki];
    const KernelAnalysis &ka = an.kernels[ki];
    os << "\nkernel " << k.name;
    if (!k.templateArgs.empty())
      os << k.templateArgs;
    os << "  [" << k.key << "]  " << k.pos.str() << (k.fromHeader ? " (header)" : "") << "\n";
    os << "  params:";
    for (size_t i = 0; i < k.params.size(); ++i) {
      const KernelParam &p = k.params[i];
      os << (i ? ", " : " ") << p.type << " " << p.name;
      if (p.isPointer)
        os << " (" << (ka.params[i].reads ? "r" : "") << (ka.params[i].writes ? "w" : "") << ")";
    }
    os << "\n";
    os << "  guarded: " << (ka.guarded ? "yes" : "no")
       << "   grid-stride: " << (ka.gridStride ? "yes" : "no") << "\n";
    for (const KernelLoop &l : k.loops)
      os << "  loop " << l.id << " (" << l.kind << ", depth " << l.depth << ") "
         << (l.var.empty() ? std::string("?") : l.var) << (l.bound.empty() ? "" : " < " + l.bound)
         << (l.gridStride ? "  grid-stride" : "") << "  line " << l.pos.line << "\n";
    for (size_t i = 0; i < k.accesses.size(); ++i) {
      const MemAccess &a = k.accesses[i];
      const AccessAnalysis &aa = ka.accesses[i];
      std::string stride = aa.strideX.kind == Stride::Kind::Unknown ? "?" : aa.strideX.text;
      os << "  " << (a.kind == AccessKind::Read ? "read " : "write") << (a.atomic ? " atomic" : "")
         << " " << a.param << "[" << a.index << "]  stride_x=" << stride
         << (aa.guarded ? "" : "  unguarded") << "  line " << a.pos.line << "\n";
    }
    for (const SharedDecl &s : k.shared)
      os << "  shared " << s.type << " " << s.name
         << (s.dynamic ? " (dynamic)" : " (" + std::to_string(s.bytes) + " bytes)") << "\n";
    if (!k.barriers.empty())
      os << "  barriers: " << k.barriers.size() << "\n";
    for (const KernelCall &c : k.atomics)
      os << "  atomic " << c.callee << " on " << (c.target.empty() ? "?" : c.target) << "  line "
         << c.pos.line << "\n";
    for (const KernelCall &c : k.calls)
      os << "  calls " << c.callee << "  line " << c.pos.line << "\n";
  }
  if (!m.launches.empty())
    os << "\nlaunches:\n";
  for (const LaunchSite &l : m.launches) {
    os << "  #" << l.id << " " << l.kernel << "<<<" << l.grid << ", " << l.block;
    if (!l.sharedMem.empty())
      os << ", " << l.sharedMem;
    if (!l.stream.empty())
      os << ", " << l.stream;
    os << ">>>  in " << l.function << "  " << l.pos.str();
    if (l.inLoop)
      os << "  (in loop at line " << l.loopPos.line << ")";
    os << "\n";
  }
  for (size_t fi = 0; fi < m.hostFunctions.size(); ++fi) {
    const HostFunction &f = m.hostFunctions[fi];
    os << "\nhost function " << f.name << ":\n";
    for (const HostEvent &e : f.events) {
      os << "  line " << e.pos.line << ": " << toString(e.kind) << " " << e.call;
      if (!e.reads.empty()) {
        os << "  reads";
        for (const std::string &r : e.reads)
          os << " " << r;
      }
      if (!e.writes.empty()) {
        os << "  writes";
        for (const std::string &w : e.writes)
          os << " " << w;
      }
      os << (e.inLoop ? "  (loop)" : "") << "\n";
    }
    for (const LaunchDependence &d : an.deps[fi]) {
      os << "  launch #" << d.first << " -> #" << d.second << ": " << toString(d.overall());
      for (const BufferDependence &b : d.buffers) {
        os << "\n    " << b.buffer << " (" << b.kind << "): " << toString(b.result);
        if (!b.detail.empty())
          os << " — " << b.detail;
      }
      os << "\n";
    }
  }
  return os.str();
}
