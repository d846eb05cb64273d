// libCudaL1Plugin.so: cudal1 inside a clang build (docs/Plugin.md).
//
//   clang++-19 -x cuda -fplugin=libCudaL1Plugin.so -fplugin-arg-cudal1-db=PATH
//       -fplugin-arg-cudal1-mode=apply|record|off [-fplugin-arg-cudal1-arch=sm_90]
//       [-fplugin-arg-cudal1-cache=DIR] [-fplugin-arg-cudal1-budget=SECONDS]
//       [-fplugin-arg-cudal1-verbose=1]
//
// In every cc1 job (host and each device side) the plugin derives the source
// to compile from the main file and swaps it in before parsing starts; code
// generation is clang's own, so -c, -MD, -fsyntax-only and -save-temps work
// unchanged. The derivation sees the file as the host side does
// (--cuda-host-only), whichever job runs it, so all jobs of one compile get
// the same text. On any failure it warns and the original is compiled: the
// plugin never breaks a build.
#include "cudal1/Apply/ApplyBest.h"
#include "cudal1/Config.h"
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/Rewrite/Instrument.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/Basic/LangStandard.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "clang/Lex/HeaderSearchOptions.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <exception>
#include <stdexcept>

using namespace clang;
using namespace llvm;

namespace {

/// Set while the plugin's own parse runs: clang instantiates every loaded
/// plugin for that parse too, and it must do nothing there.
thread_local bool inCudaL1 = false;

enum class Mode { Apply, Record, Off };

struct PluginOptions {
  Mode mode = Mode::Apply;
  std::string db;
  std::string arch;
  std::string gpu;
  std::string cache;
  /// The time deriving may take (docs/Plugin.md); 0: no budget.
  unsigned budgetMs = 20000;
  /// For the tests of the last resort only: "crash" or "throw" inside it.
  std::string testFault;
  bool verbose = false;
};

/// Warnings go to stderr directly, not through clang's diagnostics, so that
/// -Werror cannot turn them into a broken build.
void warn(StringRef file, const Twine &msg) {
  errs() << (file.empty() ? "" : file.str() + ": ") << "warning: cudal1: " << msg << "\n";
}

bool isUnder(StringRef path, StringRef dir) {
  if (dir.empty())
    return false;
  dir = dir.rtrim('/');
  return path == dir ||
         (path.starts_with(dir) && path.size() > dir.size() && path[dir.size()] == '/');
}

/// The user's flags that matter for parsing, recovered from the cc1 job:
/// macros, include directories and the language standard. The driver's own
/// system directories (the C++ library, clang's and CUDA's headers) are left
/// out; the analysis' own driver adds them again in the same order.
std::vector<std::string> userFlagsOf(const CompilerInstance &ci, StringRef arch) {
  std::vector<std::string> a;
  const LangOptions &lo = ci.getLangOpts();
  if (lo.LangStd != LangStandard::lang_unspecified)
    a.push_back("-std=" + std::string(LangStandard::getLangStandardForKind(lo.LangStd).getName()));
  if (lo.GPURelocatableDeviceCode)
    a.push_back("-fgpu-rdc");
  for (const auto &[name, undef] : ci.getPreprocessorOpts().Macros)
    a.push_back((undef ? "-U" : "-D") + name);
  const HeaderSearchOptions &hs = ci.getHeaderSearchOpts();
  for (const HeaderSearchOptions::Entry &e : hs.UserEntries) {
    if (e.IsFramework)
      continue;
    StringRef p = e.Path;
    switch (e.Group) {
    case frontend::Quoted:
      a.push_back("-iquote");
      break;
    case frontend::Angled:
      a.push_back("-I");
      break;
    case frontend::After:
      a.push_back("-idirafter");
      break;
    case frontend::System: {
      // A CUDA installation's include directory sits beside bin/nvcc.
      SmallString<256> nvcc(sys::path::parent_path(p));
      sys::path::append(nvcc, "bin", "nvcc");
      if (isUnder(p, "/usr/include") || isUnder(p, "/usr/local/include") ||
          isUnder(p, "/usr/lib/gcc") || isUnder(p, hs.ResourceDir) ||
          isUnder(p, cudal1::config::cudaStubInclude) || sys::fs::exists(nvcc))
        continue;
      a.push_back("-isystem");
      break;
    }
    default:
      continue;
    }
    a.push_back(p.str());
  }
  if (!arch.empty())
    a.push_back("--cuda-gpu-arch=" + arch.str());
  return a;
}

class CudaL1Action : public PluginASTAction {
  PluginOptions opts;

  bool ParseArgs(const CompilerInstance &, const std::vector<std::string> &args) override {
    for (const std::string &arg : args) {
      auto [key, value] = StringRef(arg).split('=');
      if (key == "mode") {
        if (value == "apply")
          opts.mode = Mode::Apply;
        else if (value == "record")
          opts.mode = Mode::Record;
        else if (value == "off")
          opts.mode = Mode::Off;
        else {
          warn("", "unknown mode '" + value + "' (apply, record or off); cudal1 is off");
          opts.mode = Mode::Off;
        }
      } else if (key == "db") {
        opts.db = value.str();
      } else if (key == "arch") {
        opts.arch = value.str();
      } else if (key == "gpu") {
        opts.gpu = value.str();
      } else if (key == "cache") {
        opts.cache = value.str();
      } else if (key == "budget") {
        double seconds;
        if (value.getAsDouble(seconds) || !(seconds >= 0) || seconds > 3600)
          warn("", "budget '" + value + "' is not a number of seconds from 0 to 3600; using " +
                       Twine(opts.budgetMs / 1000) + " s");
        else
          opts.budgetMs = unsigned(seconds * 1000);
      } else if (key == "test-fault") {
        opts.testFault = value.str();
      } else if (key == "verbose") {
        opts.verbose = value.empty() || value == "1" || value == "yes";
      } else {
        warn("", "unknown plugin argument '" + arg +
                     "' (db=, mode=, arch=, gpu=, cache=, budget=, verbose=); ignored");
      }
    }
    if (opts.db.empty())
      opts.db = cudal1::defaultTuneDBPath();
    // Never stop the compile: a bad argument only switches cudal1 off.
    return true;
  }

  ActionType getActionType() override { return AddBeforeMainAction; }

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &ci, StringRef) override {
    if (inCudaL1 || opts.mode == Mode::Off || !ci.getLangOpts().CUDA)
      return std::make_unique<ASTConsumer>();
    SourceManager &sm = ci.getSourceManager();
    FileID mainId = sm.getMainFileID();
    OptionalFileEntryRef entry = sm.getFileEntryRefForID(mainId);
    if (!entry)
      return std::make_unique<ASTConsumer>(); // standard input: nothing to key on
    std::string file = entry->getName().str();
    uint64_t dbSize = 0;
    if (opts.mode == Mode::Apply && (sys::fs::file_size(opts.db, dbSize) ||
                                     (dbSize == 0 && sys::fs::is_regular_file(opts.db)))) {
      // Nothing tuned yet: the normal state before the first tuning run
      // (cudal1_enable creates the file empty, so that objects depend on it).
      if (opts.verbose && !ci.getLangOpts().CUDAIsDevice)
        warn(file, "no tuning database at '" + opts.db + "' yet; compiling the original source");
      return std::make_unique<ASTConsumer>();
    }
    cudal1::RewriteInput in;
    in.file = file;
    in.code = sm.getBufferData(mainId).str();
    in.args = cudal1::analysisArgs(userFlagsOf(ci, opts.arch), nullptr);

    std::string source;
    bool changed = false;
    std::vector<std::string> notes;
    std::string failure;
    auto derive = [&] {
      inCudaL1 = true;
      cudal1::QuietParses quiet;
      if (opts.testFault == "crash")
        raise(SIGSEGV);
      if (opts.testFault == "throw")
        throw std::runtime_error("test-fault=throw");
      if (opts.mode == Mode::Record) {
        Expected<std::string> s = cudal1::instrumentSource(in);
        if (!s) {
          failure = toString(s.takeError());
        } else {
          // The capture runtime's header, wherever the build looks.
          source = std::move(*s);
          std::string from = "#include \"cudal1/Capture/Capture.h\"";
          size_t at = source.find(from);
          if (at != std::string::npos)
            source.replace(at, from.size(),
                           "#include \"" + std::string(cudal1::config::includeDir) +
                               "/cudal1/Capture/Capture.h\"");
          changed = true;
        }
      } else {
        cudal1::ApplyOptions ao;
        ao.checkArgs = false; // this compile's own arguments
        ao.dbPath = opts.db;
        ao.gpuArch = opts.arch;
        ao.gpuName = opts.gpu;
        ao.cacheDir = opts.cache;
        ao.budgetMs = opts.budgetMs;
        Expected<cudal1::ApplyResult> r = cudal1::applyBestPlans(in, ao);
        if (!r) {
          failure = toString(r.takeError());
        } else {
          // A cached derivation brings its warnings along: the job that
          // derived may have been a silent device job.
          notes = r->warnings;
          changed = r->changed;
          source = std::move(r->source);
          if (opts.verbose)
            for (const cudal1::AppliedPlan &p : r->applied)
              notes.push_back("applied " + p.plan);
        }
      }
      inCudaL1 = false;
    };
    // The last resort: whatever escapes cudal1 costs the optimisation, not
    // the build. The derivation itself runs in a child process with a
    // budget (ApplyOptions::budgetMs); this catches the rest. CUDA runs
    // cc1 out of process, where nothing has enabled crash recovery, so it
    // is enabled here (a no-op when clang already did); the try catches
    // C++ exceptions, which LLVM code never throws but the C++ library does.
    CrashRecoveryContext::Enable();
    CrashRecoveryContext crc;
    std::string lastResort;
    bool survived = crc.RunSafely([&] {
      try {
        derive();
      } catch (const std::exception &e) {
        lastResort = std::string("an exception (") + e.what() + ")";
      } catch (...) {
        lastResort = "an exception";
      }
    });
    if (!survived)
      lastResort = "a crash";
    // Say things once per compile: from the host job (device jobs see the same).
    bool speak = !ci.getLangOpts().CUDAIsDevice;
    if (!lastResort.empty()) {
      inCudaL1 = false;
      if (speak)
        warn(file,
             "internal error while rewriting (" + lastResort + "); compiling the original source");
      return std::make_unique<ASTConsumer>();
    }
    if (!failure.empty()) {
      if (speak)
        warn(file, failure + "; compiling the original source");
      return std::make_unique<ASTConsumer>();
    }
    if (speak)
      for (const std::string &n : notes)
        warn(file, n);
    if (!changed)
      return std::make_unique<ASTConsumer>();

    // The old FileID's size was fixed from the file on disk: override the
    // contents, then enter the file afresh under a new FileID.
    sm.overrideFileContents(*entry, MemoryBuffer::getMemBufferCopy(source, file));
    FileID fresh = sm.createFileID(*entry, SourceLocation(), SrcMgr::C_User);
    sm.setMainFileID(fresh);
    return std::make_unique<ASTConsumer>();
  }
};

} // namespace

static FrontendPluginRegistry::Add<CudaL1Action>
    registration("cudal1", "cudal1: compile kernels with their tuned plans");
