// Builds the ProgramModel of a translation unit: kernels (scanned by
// KernelScanner), launch sites, and each host function's ordered launches,
// synchronizations and copies.
#include "cudal1/Frontend/Frontend.h"
#include "KernelScanner.h"
#include "SharedPreamble.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Frontend/ParsedUnit.h"

#include "mlir/IR/MLIRContext.h"
#include "clang/AST/ASTConsumer.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <tuple>

using namespace clang;
using namespace cudal1;
using namespace cudal1::frontend;

std::string SourcePos::str() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

const char *cudal1::toString(AccessKind k) { return k == AccessKind::Read ? "read" : "write"; }

const char *cudal1::toString(GuardOp op) {
  switch (op) {
  case GuardOp::LT:
    return "<";
  case GuardOp::LE:
    return "<=";
  case GuardOp::GT:
    return ">";
  case GuardOp::GE:
    return ">=";
  case GuardOp::EQ:
    return "==";
  case GuardOp::NE:
    return "!=";
  }
  return "?";
}

std::string Guard::str() const { return lhs + " " + toString(op) + " " + rhs; }

const char *cudal1::toString(HostEventKind k) {
  switch (k) {
  case HostEventKind::Launch:
    return "launch";
  case HostEventKind::Sync:
    return "sync";
  case HostEventKind::Memcpy:
    return "memcpy";
  case HostEventKind::Memset:
    return "memset";
  case HostEventKind::Alloc:
    return "alloc";
  case HostEventKind::Free:
    return "free";
  case HostEventKind::Other:
    return "call";
  }
  return "call";
}

namespace {

/// Dimensionality of a launch-configuration argument: an integer is 1-D,
/// dim3(a, b) is 2-D; a dim3 variable is looked up at its declaration.
unsigned configDims(const Expr *e) {
  if (!e || isa<CXXDefaultArgExpr>(e))
    return 1;
  const Expr *s = e->IgnoreUnlessSpelledInSource();
  if (s->getType()->isIntegerType())
    return 1;
  auto countArgs = [](const Expr *init) -> unsigned {
    init = init->IgnoreUnlessSpelledInSource();
    if (auto *ce = dyn_cast<CXXConstructExpr>(init)) {
      unsigned n = 0;
      for (const Expr *a : ce->arguments())
        n += !isa<CXXDefaultArgExpr>(a);
      return n == 0 ? 1 : n;
    }
    if (auto *il = dyn_cast<InitListExpr>(init))
      return il->getNumInits() ? il->getNumInits() : 1;
    if (auto *pl = dyn_cast<ParenListExpr>(init))
      return pl->getNumExprs();
    if (init->getType()->isIntegerType())
      return 1;
    return 0;
  };
  if (auto *dre = dyn_cast<DeclRefExpr>(s)) {
    if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()); vd && vd->hasInit())
      return countArgs(vd->getInit());
    return 0;
  }
  return countArgs(s);
}

std::string hex64(uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", (unsigned long long)v);
  return buf;
}

/// Where the model's entries live in the AST (for ParsedUnit).
struct ModelIndex {
  std::vector<const FunctionDecl *> kernels;
  std::vector<const CUDAKernelCallExpr *> launches;
  std::vector<std::vector<const Stmt *>> loops;
  std::vector<std::vector<const Expr *>> accesses;
  std::vector<const Stmt *> hostLoops;
  std::vector<const CallExpr *> syncs;
  std::vector<const FunctionDecl *> launchFunctions, hostLoopFunctions, syncFunctions;
};

class ModelBuilder : public RecursiveASTVisitor<ModelBuilder> {
public:
  ModelBuilder(ASTContext &ctx, ProgramModel &model, ModelIndex *index)
      : ctx(ctx), sm(ctx.getSourceManager()), model(model), mangler(ctx.createMangleContext()),
        index(index), mlirContext(mlir::MLIRContext::Threading::DISABLED) {}

  bool shouldVisitTemplateInstantiations() const { return true; }

  bool VisitFunctionDecl(FunctionDecl *fd) {
    if (!fd->hasBody() || !fd->isThisDeclarationADefinition() || fd->isDependentContext())
      return true;
    if (sm.isInSystemHeader(fd->getLocation()))
      return true;
    if (fd->hasAttr<CUDAGlobalAttr>())
      addKernel(fd);
    else if (!fd->hasAttr<CUDADeviceAttr>() || fd->hasAttr<CUDAHostAttr>())
      hostFunctions.push_back(fd);
    return true;
  }

  /// The host code as the host-code key hashes it: the normalized tokens
  /// of every host function, each template once (its pattern), in the order
  /// of definition.
  std::string hostCodeText() const {
    std::string text;
    std::set<const FunctionDecl *> seen;
    for (const FunctionDecl *fd : hostFunctions) {
      const FunctionDecl *pattern = fd->getTemplateInstantiationPattern();
      const FunctionDecl *d = pattern ? pattern : fd;
      if (!seen.insert(d).second)
        continue;
      text += normalizedTokens(ctx, d);
      text += '\n';
    }
    return text;
  }

  /// Host functions are walked after every kernel is known.
  void finish() {
    for (const FunctionDecl *fd : hostFunctions)
      scanHostFunction(fd);
    // Each launch reads and writes the buffers bound to the parameters its
    // kernel reads and writes.
    for (HostFunction &hf : model.hostFunctions)
      for (HostEvent &ev : hf.events) {
        if (ev.kind != HostEventKind::Launch)
          continue;
        const LaunchSite &l = model.launches[ev.launch];
        if (l.kernelIndex < 0)
          continue;
        const Kernel &k = model.kernels[l.kernelIndex];
        for (const MemAccess &a : k.accesses) {
          if (a.paramIndex < 0 || size_t(a.paramIndex) >= l.argBuffers.size())
            continue;
          const std::string &buf = l.argBuffers[a.paramIndex];
          if (buf.empty())
            continue;
          auto &set = a.kind == AccessKind::Read ? ev.reads : ev.writes;
          if (std::find(set.begin(), set.end(), buf) == set.end())
            set.push_back(buf);
        }
      }
  }

private:
  ASTContext &ctx;
  SourceManager &sm;
  ProgramModel &model;
  std::unique_ptr<MangleContext> mangler;
  ModelIndex *index;
  /// For the accesses' affine forms (affine expressions only, no dialects).
  mlir::MLIRContext mlirContext;
  llvm::DenseMap<const FunctionDecl *, int> kernelIndex;
  std::vector<const FunctionDecl *> hostFunctions;
  /// Host loops enclosing the statement being walked, innermost last.
  std::vector<unsigned> loopStack;
  int innermostLoop() const { return loopStack.empty() ? -1 : int(loopStack.back()); }

  void addKernel(const FunctionDecl *fd) {
    if (kernelIndex.count(fd->getCanonicalDecl()))
      return;
    Kernel k;
    k.name = fd->getNameAsString();
    {
      std::string m;
      llvm::raw_string_ostream os(m);
      if (mangler->shouldMangleDeclName(fd))
        mangler->mangleName(GlobalDecl(fd, KernelReferenceKind::Kernel), os);
      else
        os << k.name;
      k.mangledName = os.str();
    }
    if (const TemplateArgumentList *args = fd->getTemplateSpecializationArgs()) {
      std::string s;
      llvm::raw_string_ostream os(s);
      printTemplateArgumentList(os, args->asArray(), PrintingPolicy(ctx.getLangOpts()));
      k.templateArgs = os.str();
    }
    k.pos = position(sm, fd->getLocation());
    k.fromHeader = sm.getFileID(sm.getFileLoc(fd->getLocation())) != sm.getMainFileID();
    std::vector<const FunctionDecl *> callees;
    std::vector<const Stmt *> loopStmts;
    std::vector<const Expr *> accessExprs;
    scanKernel(ctx, fd, k, callees, &loopStmts, &accessExprs);
    k.key = kernelKey(fd, k, callees);
    // One index space per kernel: its names are the kernel's.
    IndexSpace space(mlirContext);
    for (MemAccess &a : k.accesses)
      a.affine = affineFormOf(a.normalized, space);
    if (index) {
      index->kernels.push_back(fd);
      index->loops.push_back(std::move(loopStmts));
      index->accesses.push_back(std::move(accessExprs));
    }
    kernelIndex[fd->getCanonicalDecl()] = model.kernels.size();
    model.kernels.push_back(std::move(k));
  }

  /// DESIGN.md "Kernel key": the mangled name plus a hash of the normalized
  /// source of the kernel and of every device function it calls.
  std::string kernelKey(const FunctionDecl *fd, const Kernel &k,
                        std::vector<const FunctionDecl *> callees) {
    std::string text = k.mangledName + "\n";
    const FunctionDecl *pattern = fd->getTemplateInstantiationPattern();
    text += normalizedTokens(ctx, pattern ? pattern : fd);
    // Callees of callees, breadth first, bounded.
    for (size_t i = 0; i < callees.size() && i < 64; ++i) {
      const FunctionDecl *c = callees[i];
      const FunctionDecl *cp = c->getTemplateInstantiationPattern();
      text += "\n" + normalizedTokens(ctx, cp ? cp : c);
      Kernel scratch;
      std::vector<const FunctionDecl *> more;
      scanKernel(ctx, c, scratch, more);
      for (const FunctionDecl *m : more)
        if (std::find(callees.begin(), callees.end(), m) == callees.end())
          callees.push_back(m);
    }
    return "k" + hex64(llvm::xxh3_64bits(llvm::StringRef(text)));
  }

  // --- host side ----------------------------------------------------------
  /// `ns::run<float, 2>`: instantiations of one template stay apart.
  std::string hostFunctionName(const FunctionDecl *fd) const {
    std::string s;
    llvm::raw_string_ostream os(s);
    fd->getNameForDiagnostic(os, PrintingPolicy(ctx.getLangOpts()), /*Qualified=*/true);
    return os.str();
  }

  void scanHostFunction(const FunctionDecl *fd) {
    HostFunction hf;
    hf.name = hostFunctionName(fd);
    hf.pos = position(sm, fd->getLocation());
    walkHost(fd->getBody(), fd, hf, nullptr);
    if (!hf.events.empty())
      model.hostFunctions.push_back(std::move(hf));
  }

  void walkHost(const Stmt *s, const FunctionDecl *fd, HostFunction &hf, const Stmt *loop) {
    if (!s)
      return;
    // `do { ... } while (0)` (error-checking macros) is not a loop.
    bool onceOnly = false;
    if (auto *ds = dyn_cast<DoStmt>(s)) {
      bool value = true;
      onceOnly = ds->getCond()->EvaluateAsBooleanCondition(value, ctx) && !value;
    }
    if (!onceOnly &&
        (isa<ForStmt>(s) || isa<WhileStmt>(s) || isa<DoStmt>(s) || isa<CXXForRangeStmt>(s))) {
      HostLoop hl;
      hl.id = model.hostLoops.size();
      hl.parent = innermostLoop();
      hl.function = hf.name;
      hl.pos = position(sm, s->getBeginLoc());
      model.hostLoops.push_back(std::move(hl));
      if (index) {
        index->hostLoops.push_back(s);
        index->hostLoopFunctions.push_back(fd);
      }
      loopStack.push_back(model.hostLoops.size() - 1);
      for (const Stmt *c : s->children())
        walkHost(c, fd, hf, loop ? loop : s);
      loopStack.pop_back();
      return;
    }
    if (auto *kc = dyn_cast<CUDAKernelCallExpr>(s)) {
      // Arguments first: they are evaluated before the launch.
      for (const Expr *a : kc->arguments())
        walkHost(a, fd, hf, loop);
      addLaunch(kc, fd, hf, loop);
      return;
    }
    for (const Stmt *c : s->children())
      walkHost(c, fd, hf, loop);
    if (auto *ce = dyn_cast<CallExpr>(s))
      addHostCall(ce, fd, hf, loop);
  }

  void addLaunch(const CUDAKernelCallExpr *kc, const FunctionDecl *fd, HostFunction &hf,
                 const Stmt *loop) {
    LaunchSite l;
    l.id = model.launches.size();
    l.pos = position(sm, kc->getBeginLoc());
    l.function = hostFunctionName(fd);
    if (const FunctionDecl *callee = kc->getDirectCallee()) {
      l.kernel = callee->getNameAsString();
      auto it = kernelIndex.find(callee->getCanonicalDecl());
      if (it != kernelIndex.end())
        l.kernelIndex = it->second;
    } else {
      l.kernel = sourceText(ctx, kc->getCallee());
    }
    const CallExpr *cfg = kc->getConfig();
    auto cfgArg = [&](unsigned i) -> std::string {
      if (!cfg || i >= cfg->getNumArgs() || isa<CXXDefaultArgExpr>(cfg->getArg(i)))
        return "";
      return sourceText(ctx, cfg->getArg(i)->IgnoreUnlessSpelledInSource());
    };
    l.grid = cfgArg(0);
    l.block = cfgArg(1);
    l.sharedMem = cfgArg(2);
    l.stream = cfgArg(3);
    if (cfg && cfg->getNumArgs() >= 2) {
      l.gridDims = configDims(cfg->getArg(0));
      l.blockDims = configDims(cfg->getArg(1));
    }
    for (const Expr *a : kc->arguments()) {
      l.args.push_back(sourceText(ctx, a->IgnoreUnlessSpelledInSource()));
      l.argBuffers.push_back(a->getType()->isPointerType() ? pointerBase(ctx, a) : "");
    }
    if (loop) {
      l.inLoop = true;
      l.loopPos = position(sm, loop->getBeginLoc());
    }
    l.loop = innermostLoop();
    for (unsigned id : loopStack)
      model.hostLoops[id].launches.push_back(l.id);
    // The same launch seen twice (e.g. through two instantiations of one
    // host template at one location) is recorded once per instantiation.
    HostEvent ev;
    ev.kind = HostEventKind::Launch;
    ev.launch = l.id;
    ev.call = l.kernel;
    ev.inLoop = l.inLoop;
    ev.loop = l.loop;
    ev.pos = l.pos;
    hf.events.push_back(ev);
    model.launches.push_back(std::move(l));
    if (index) {
      index->launches.push_back(kc);
      index->launchFunctions.push_back(fd);
    }
  }

  void addHostCall(const CallExpr *ce, const FunctionDecl *fd, HostFunction &hf, const Stmt *loop) {
    const FunctionDecl *callee = ce->getDirectCallee();
    if (!callee)
      return;
    std::string name = callee->getNameAsString();
    StringRef n(name);
    // Error queries change nothing on the device.
    if (!n.starts_with("cuda") || n.starts_with("cudaGetError") || n == "cudaGetLastError" ||
        n == "cudaPeekAtLastError")
      return;
    HostEvent ev;
    ev.call = name;
    ev.inLoop = loop != nullptr;
    ev.loop = innermostLoop();
    ev.pos = position(sm, ce->getBeginLoc());
    auto base = [&](unsigned i) -> std::string {
      return i < ce->getNumArgs() ? pointerBase(ctx, ce->getArg(i)) : "";
    };
    auto push = [](std::vector<std::string> &v, const std::string &b) {
      if (!b.empty())
        v.push_back(b);
    };
    if (n == "cudaDeviceSynchronize" || n == "cudaStreamSynchronize" ||
        n == "cudaEventSynchronize" || n == "cudaThreadSynchronize") {
      ev.kind = HostEventKind::Sync;
      HostSync hs;
      hs.id = ev.sync = model.syncs.size();
      hs.call = name;
      hs.function = hf.name;
      hs.loop = ev.loop;
      hs.pos = ev.pos;
      model.syncs.push_back(std::move(hs));
      if (index) {
        index->syncs.push_back(ce);
        index->syncFunctions.push_back(fd);
      }
    } else if (n.starts_with("cudaMemcpy")) {
      ev.kind = HostEventKind::Memcpy;
      if (n.starts_with("cudaMemcpyToSymbol")) {
        push(ev.writes, ce->getNumArgs() ? sourceText(ctx, ce->getArg(0)) : "");
        push(ev.reads, base(1));
      } else if (n.starts_with("cudaMemcpyFromSymbol")) {
        push(ev.writes, base(0));
        push(ev.reads, ce->getNumArgs() > 1 ? sourceText(ctx, ce->getArg(1)) : "");
      } else {
        push(ev.writes, base(0));
        push(ev.reads, base(n.starts_with("cudaMemcpy2D") ? 2 : 1));
      }
    } else if (n.starts_with("cudaMemset")) {
      ev.kind = HostEventKind::Memset;
      push(ev.writes, base(0));
    } else if (n.starts_with("cudaMalloc") || n == "cudaHostAlloc") {
      ev.kind = HostEventKind::Alloc;
      push(ev.writes, base(0));
    } else if (n.starts_with("cudaFree")) {
      ev.kind = HostEventKind::Free;
      push(ev.writes, base(0));
    } else {
      ev.kind = HostEventKind::Other;
    }
    hf.events.push_back(ev);
  }
};

} // namespace

std::vector<std::string> cudal1::userArgsFromCompileCommand(const tooling::CompileCommand &cmd) {
  std::vector<std::string> out;
  const auto &cl = cmd.CommandLine;
  std::string fileName = llvm::sys::path::filename(cmd.Filename).str();
  // The entry's relative include paths are relative to its directory; the
  // parse (and a bundle's build) runs elsewhere.
  auto inDirectory = [&](llvm::StringRef p, bool mustExist) {
    if (p.empty() || cmd.Directory.empty() || llvm::sys::path::is_absolute(p))
      return p.str();
    llvm::SmallString<256> a(cmd.Directory);
    llvm::sys::path::append(a, p);
    llvm::sys::path::remove_dots(a, /*remove_dot_dot=*/true);
    return mustExist && !llvm::sys::fs::exists(a) ? p.str() : std::string(a);
  };
  for (size_t i = 1; i < cl.size(); ++i) {
    const std::string &a = cl[i];
    if (a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ") {
      ++i;
      continue;
    }
    if (a == "-c" || a == "--" || a == cmd.Filename ||
        (!a.empty() && a[0] != '-' && llvm::sys::path::filename(a) == fileName))
      continue;
    llvm::StringRef ar(a);
    bool joined = false;
    for (llvm::StringRef flag : {"-isystem", "-iquote", "-idirafter", "-I"})
      if (ar.starts_with(flag) && ar.size() > flag.size()) {
        out.push_back(flag.str() + inDirectory(ar.drop_front(flag.size()), false));
        joined = true;
        break;
      }
    if (joined)
      continue;
    out.push_back(a);
    if ((a == "-I" || a == "-isystem" || a == "-iquote" || a == "-idirafter" || a == "-include") &&
        i + 1 < cl.size())
      out.push_back(inDirectory(cl[++i], /*mustExist=*/a == "-include"));
  }
  return out;
}

namespace cudal1 {
/// Fills a ParsedUnit (a friend) from its AST.
class ParsedUnitBuilder {
public:
  static void build(ParsedUnit &u) {
    ASTContext &ctx = u.unit->getASTContext();
    u.programModel.mainFile = ctx.getSourceManager()
                                  .getFileEntryRefForID(ctx.getSourceManager().getMainFileID())
                                  ->getName()
                                  .str();
    ModelIndex index;
    ModelBuilder b(ctx, u.programModel, &index);
    b.TraverseDecl(ctx.getTranslationUnitDecl());
    b.finish();
    // Instantiations of one template share its position.
    std::map<std::tuple<std::string, unsigned, unsigned>, std::vector<unsigned>> byDefinition;
    std::vector<Kernel> &ks = u.programModel.kernels;
    for (unsigned i = 0; i < ks.size(); ++i)
      byDefinition[{ks[i].pos.file, ks[i].pos.line, ks[i].pos.col}].push_back(i);
    for (Kernel &k : ks)
      k.sameDefinition = byDefinition[{k.pos.file, k.pos.line, k.pos.col}];
    std::string prefix = hostKeyPrefix(u.programModel.mainFile);
    std::string hashed = prefix + "\n" + b.hostCodeText();
    u.programModel.hostKey = prefix + hex64(llvm::xxh3_64bits(llvm::StringRef(hashed)));
    u.kernels = std::move(index.kernels);
    u.launches = std::move(index.launches);
    u.loops = std::move(index.loops);
    u.accesses = std::move(index.accesses);
    u.hostLoops = std::move(index.hostLoops);
    u.syncs = std::move(index.syncs);
    u.launchFunctions = std::move(index.launchFunctions);
    u.hostLoopFunctions = std::move(index.hostLoopFunctions);
    u.syncFunctions = std::move(index.syncFunctions);
  }
};
} // namespace cudal1

namespace {
thread_local bool quietParses = false;

/// `file` absolute, with symbolic links resolved where it exists.
std::string absolutePath(llvm::StringRef file) {
  llvm::SmallString<256> p;
  if (!llvm::sys::fs::real_path(file, p))
    return std::string(p);
  return absoluteLexicalPath(file);
}
} // namespace

std::string cudal1::absoluteLexicalPath(llvm::StringRef file) {
  llvm::SmallString<256> p(file);
  llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return std::string(p);
}

std::string cudal1::projectRootOf(llvm::StringRef file) {
  std::string abs = absolutePath(file);
  llvm::StringRef dir = llvm::sys::path::parent_path(abs);
  for (llvm::StringRef d = dir; !d.empty(); d = llvm::sys::path::parent_path(d)) {
    llvm::SmallString<256> git(d);
    llvm::sys::path::append(git, ".git");
    if (llvm::sys::fs::exists(git))
      return d.str();
    if (d == llvm::sys::path::parent_path(d))
      break;
  }
  return dir.str();
}

std::string cudal1::hostKeyPrefix(llvm::StringRef file) {
  std::string abs = absolutePath(file);
  std::string root = projectRootOf(file);
  llvm::StringRef rel(abs);
  if (rel.consume_front(root))
    rel = rel.ltrim('/');
  return "host:" + llvm::sys::path::convert_to_slash(rel) + "#";
}

const std::string &cudal1::hostCodeKey(const ProgramModel &model) { return model.hostKey; }
QuietParses::QuietParses() : saved(quietParses) { quietParses = true; }
QuietParses::~QuietParses() { quietParses = saved; }
bool QuietParses::active() { return quietParses; }

namespace {
/// Counts a parse's errors, the driver's included (an unknown flag is the
/// driver's error, which never reaches the ASTUnit's own diagnostics, so it
/// used to be printed and then ignored), and prints every diagnostic to
/// stderr unless parses are quiet: with the compiler's own diagnostic
/// options once it has them, as clang's printer would.
class ParseDiagnostics : public DiagnosticConsumer {
public:
  explicit ParseDiagnostics(bool quiet) : quiet(quiet) {
    if (!quiet)
      printer = std::make_unique<TextDiagnosticPrinter>(llvm::errs(), new DiagnosticOptions());
  }
  void BeginSourceFile(const LangOptions &lo, const Preprocessor *pp) override {
    inSource = true;
    if (quiet)
      return;
    if (pp)
      printer = std::make_unique<TextDiagnosticPrinter>(
          llvm::errs(), &pp->getDiagnostics().getDiagnosticOptions());
    printer->BeginSourceFile(lo, pp);
  }
  void EndSourceFile() override {
    if (printer)
      printer->EndSourceFile();
  }
  void finish() override {
    if (printer)
      printer->finish();
  }
  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic &info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level >= DiagnosticsEngine::Error && !inSource)
      argumentErrors = true;
    if (printer)
      printer->HandleDiagnostic(level, info);
  }
  /// Errors before the source was opened: the arguments'.
  bool argumentErrors = false;

private:
  bool quiet;
  bool inSource = false;
  std::unique_ptr<TextDiagnosticPrinter> printer;
};
} // namespace

ParsedUnit::~ParsedUnit() = default;

llvm::Error cudal1::checkClangArgs(const std::string &file, const std::vector<std::string> &args) {
  ParseDiagnostics seen(quietParses);
  IntrusiveRefCntPtr<DiagnosticsEngine> engine = CompilerInstance::createDiagnostics(
      new DiagnosticOptions(), &seen, /*ShouldOwnClient=*/false);
  // Errors only: the -W flags are not applied here (the parse that may
  // follow prints its warnings as the flags say).
  engine->setIgnoreAllWarnings(true);
  // As a parse would see them (tooling's syntax-only command line).
  std::vector<std::string> words = {"clang-tool", "-fsyntax-only"};
  words.insert(words.end(), args.begin(), args.end());
  words.push_back(file);
  std::vector<const char *> argv;
  for (const std::string &w : words)
    argv.push_back(w.c_str());
  CreateInvocationOptions opts;
  opts.Diags = engine;
  opts.ProbePrecompiled = false;
  std::shared_ptr<CompilerInvocation> ci = createInvocation(argv, opts);
  if (!ci || seen.getNumErrors())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        quietParses ? "clang rejected the arguments for '%s'"
                    : "clang rejected the arguments for '%s' (see the errors above)",
        file.c_str());
  return llvm::Error::success();
}
ASTContext &ParsedUnit::ast() { return unit->getASTContext(); }

const MemAccess *ParsedUnit::accessOf(unsigned kernel, const Expr *e, AccessKind kind) const {
  if (!e || kernel >= accesses.size())
    return nullptr;
  e = e->IgnoreParenImpCasts();
  const std::vector<MemAccess> &model = programModel.kernels[kernel].accesses;
  for (size_t i = 0; i < accesses[kernel].size(); ++i)
    if (accesses[kernel][i] == e && model[i].kind == kind)
      return &model[i];
  return nullptr;
}

const MemAccess *ParsedUnit::accessOf(unsigned kernel, const Expr *e) const {
  if (const MemAccess *a = accessOf(kernel, e, AccessKind::Read))
    return a;
  return accessOf(kernel, e, AccessKind::Write);
}

SourcePos ParsedUnit::positionOf(SourceLocation loc) {
  return frontend::position(ast().getSourceManager(), loc);
}

namespace {
std::atomic<uint64_t> parseCount{0};
}

uint64_t ParsedUnit::parsesSoFar() { return parseCount.load(); }

llvm::Expected<std::unique_ptr<ParsedUnit>>
ParsedUnit::parse(const std::string &file, const std::string &code,
                  const std::vector<std::string> &args) {
  ++parseCount;
  InlinedUnit in = inlineIncludedSources(file, code);
  if (in.inlined.empty()) {
    auto u = parseText(file, code, args);
    if (u)
      (*u)->notInlined = std::move(in.skipped);
    return u;
  }
  auto u = parseText(file, in.code, args);
  if (u) {
    (*u)->inlined = std::move(in.inlined);
    (*u)->notInlined = std::move(in.skipped);
    return u;
  }
  // Inlined, it does not parse: the original may (nothing is rewritable in
  // the included files then). The errors were just printed (at the
  // included files' own lines): a second parse says nothing.
  QuietParses quiet;
  auto original = parseText(file, code, args);
  if (!original) {
    llvm::consumeError(original.takeError());
    return u.takeError();
  }
  llvm::consumeError(u.takeError());
  for (const InlinedSource &s : in.inlined)
    (*original)->notInlined.push_back(
        {s.path, "the unit does not parse with it inlined (is it included again elsewhere?)"});
  return original;
}

llvm::Expected<std::unique_ptr<ParsedUnit>>
ParsedUnit::parseText(const std::string &file, const std::string &code,
                      const std::vector<std::string> &args) {
  std::unique_ptr<ParsedUnit> u(new ParsedUnit());
  u->source = code;
  // Sees the driver's diagnostics and the unit's; outlives the unit.
  auto diags = std::make_unique<ParseDiagnostics>(quietParses);
  ParseDiagnostics &seen = *diags;
  u->diagnostics = std::move(diags);
  SharedPreambleParse parsed = parseWithSharedPreamble(code, args, file, &seen);
  u->parseInputs = std::move(parsed.keepAlive);
  u->unit = std::move(parsed.unit);
  if (seen.argumentErrors)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        quietParses ? "clang rejected the arguments for '%s'"
                    : "clang rejected the arguments for '%s' (see the errors above)",
        file.c_str());
  if (!u->unit || u->unit->getDiagnostics().hasErrorOccurred() || seen.getNumErrors())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   quietParses ? "'%s' could not be parsed"
                                               : "'%s' could not be parsed (see the errors above)",
                                   file.c_str());
  ParsedUnitBuilder::build(*u);
  return std::move(u);
}

llvm::Expected<ProgramModel> cudal1::buildProgramModel(const std::string &file,
                                                       const std::vector<std::string> &args) {
  if (!llvm::sys::fs::exists(file))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no such file: '%s'",
                                   file.c_str());
  if (llvm::sys::fs::is_directory(file))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "'%s' is a directory",
                                   file.c_str());
  auto buf = llvm::MemoryBuffer::getFile(file);
  if (!buf)
    return llvm::createStringError(buf.getError(), "cannot read '%s': %s", file.c_str(),
                                   buf.getError().message().c_str());
  auto unit = ParsedUnit::parse(file, (*buf)->getBuffer().str(), args);
  if (!unit)
    return unit.takeError();
  return (*unit)->model();
}
