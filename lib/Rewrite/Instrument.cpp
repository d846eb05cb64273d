// Instrumentation for captures: launches wrapped in the capture runtime.
#include "cudal1/Rewrite/Instrument.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include <map>

using namespace clang;
using namespace cudal1;

namespace {

/// The first __constant__ or __device__ global a kernel reads, or "".
class GlobalFinder : public RecursiveASTVisitor<GlobalFinder> {
public:
  std::string found;
  bool VisitDeclRefExpr(DeclRefExpr *e) {
    if (auto *vd = dyn_cast<VarDecl>(e->getDecl()))
      if (vd->hasGlobalStorage() && !vd->isStaticLocal() &&
          (vd->hasAttr<CUDAConstantAttr>() || vd->hasAttr<CUDADeviceAttr>()) &&
          !vd->getType()->isRecordType()) // threadIdx and friends are records
        if (found.empty())
          found = vd->getNameAsString();
    return true;
  }
};

std::string cString(const std::string &s) {
  std::string out = "\"";
  for (char c : s)
    out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

} // namespace

llvm::Expected<std::string> cudal1::instrumentSource(const RewriteInput &in) {
  auto unit = ParsedUnit::parse(in.file, in.code, in.args);
  if (!unit)
    return unit.takeError();
  ParsedUnit &u = **unit;
  const ProgramModel &m = u.model();
  ASTContext &ast = u.ast();
  SourceManager &sm = ast.getSourceManager();
  Rewriter rw(sm, ast.getLangOpts());
  unsigned wrapped = 0, skipped = 0;
  // A launch in a function template appears once per instantiation, each
  // with its own kernel key: one textual wrapper cannot name them all.
  std::map<std::string, unsigned> perLocation;
  for (const LaunchSite &l : m.launches)
    ++perLocation[l.pos.str()];
  for (const LaunchSite &l : m.launches) {
    // In the main file's text (an inlined .cu's launches too), not a header's.
    if (l.kernelIndex < 0 || !sm.isInMainFile(sm.getFileLoc(u.launchExpr(l.id)->getBeginLoc())))
      continue;
    if (perLocation[l.pos.str()] > 1) {
      ++skipped;
      continue;
    }
    const CUDAKernelCallExpr *kc = u.launchExpr(l.id);
    if (kc->getBeginLoc().isMacroID() || kc->getEndLoc().isMacroID()) {
      ++skipped; // a launch spelled inside a macro cannot be wrapped textually
      continue;
    }
    const Kernel &k = m.kernels[l.kernelIndex];
    GlobalFinder gf;
    gf.TraverseStmt(const_cast<Stmt *>(u.kernelDecl(l.kernelIndex)->getBody()));
    const CallExpr *cfg = kc->getConfig();
    auto cfgText = [&](unsigned i, const char *dflt) -> std::string {
      if (!cfg || i >= cfg->getNumArgs() || isa<CXXDefaultArgExpr>(cfg->getArg(i)))
        return dflt;
      return spelled(ast, cfg->getArg(i)->IgnoreUnlessSpelledInSource());
    };
    std::string s = "[&]() { /* cudal1 capture */ ";
    if (!gf.found.empty())
      s += "cudal1_capture_refuse_kernel(" + cString(k.key) + ", " +
           cString("reads the global '" + gf.found + "'") + "); ";
    s += "dim3 cudal1_grid(" + cfgText(0, "1") + "), cudal1_block(" + cfgText(1, "1") + "); ";
    s += "size_t cudal1_shmem = " + cfgText(2, "0") + "; ";
    std::string argList, ptrs, sizes, addrs;
    unsigned n = kc->getNumArgs();
    for (unsigned i = 0; i < n; ++i) {
      std::string v = "cudal1_a" + std::to_string(i);
      // Declared with the parameter's type, so the recorded bytes are those
      // the kernel receives (a literal 2 passed to a float is 2.0f).
      std::string type = "auto";
      if (i < k.params.size() && k.params[i].type.find("(anonymous") == std::string::npos &&
          k.params[i].type.find("lambda") == std::string::npos)
        type = k.params[i].type;
      s += type + " " + v + " = " + spelled(ast, kc->getArg(i)) + "; ";
      argList += (i ? ", " : "") + v;
      addrs += (i ? ", " : "") + std::string("(void *)&") + v;
      sizes += (i ? ", " : "") + std::string("sizeof(") + v + ")";
      bool ptr = i < k.params.size() && k.params[i].isPointer;
      ptrs += (i ? ", " : "") + std::string(ptr ? "1" : "0");
    }
    if (n) {
      s += "void *cudal1_args[] = {" + addrs + "}; size_t cudal1_sizes[] = {" + sizes +
           "}; int cudal1_isptr[] = {" + ptrs + "}; ";
    }
    s += "cudal1::CaptureScope cudal1_scope(" + cString(k.key) +
         ", cudal1_grid.x, cudal1_grid.y, cudal1_grid.z, cudal1_block.x, cudal1_block.y, "
         "cudal1_block.z, cudal1_shmem, " +
         (n ? "cudal1_args, cudal1_sizes, cudal1_isptr, " : "nullptr, nullptr, nullptr, ") +
         std::to_string(n) + "); ";
    std::string stream = cfgText(3, "");
    s += spelled(ast, kc->getCallee()) + "<<<cudal1_grid, cudal1_block, cudal1_shmem" +
         (stream.empty() ? "" : ", " + stream) + ">>>(" + argList + "); }()";
    rw.ReplaceText(CharSourceRange::getTokenRange(kc->getSourceRange()), s);
    ++wrapped;
  }
  std::string text = in.code;
  if (const RewriteBuffer *buf = rw.getRewriteBufferFor(sm.getMainFileID()))
    text = std::string(buf->begin(), buf->end());
  return "#include \"cudal1/Capture/Capture.h\" // cudal1-opt --instrument: " +
         std::to_string(wrapped) + " launch(es) captured" +
         (skipped ? ", " + std::to_string(skipped) + " left alone (macros, templates)" : "") +
         "\n" + text;
}
