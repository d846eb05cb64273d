#include "SharedPreamble.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/PrecompiledPreamble.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <atomic>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>

using namespace clang;

namespace cudal1 {
namespace {

/// A preamble being built or built; `preamble` null once its build failed.
struct CachedPreamble {
  std::mutex building;
  unsigned asked = 0; ///< parses that wanted it
  bool done = false;
  std::shared_ptr<PrecompiledPreamble> preamble;
};

/// The process's preambles by (file, arguments, preamble text). A handful
/// suffices (a tuning session parses one file; the tests a few), each a
/// few MB in memory: the oldest goes first, kept alive by the units using it.
class PreambleCache {
public:
  std::shared_ptr<CachedPreamble> entry(const std::string &key) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = entries.find(key);
    if (it != entries.end())
      return it->second;
    if (order.size() >= kMaxPreambles) {
      entries.erase(order.front());
      order.pop_front();
    }
    order.push_back(key);
    return entries[key] = std::make_shared<CachedPreamble>();
  }

private:
  static constexpr size_t kMaxPreambles = 8;
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<CachedPreamble>> entries;
  std::deque<std::string> order;
};

PreambleCache &cache() {
  static PreambleCache c;
  return c;
}

/// The parse of a file that first builds its preamble.
constexpr unsigned kParsesBeforeBuilding = 2;

std::atomic<unsigned> reusedCount{0}, builtCount{0}, failedCount{0};

bool sharingEnabled() {
  const char *env = std::getenv("CUDAL1_PREAMBLE");
  return !(env && std::string(env) == "0");
}

/// tooling's ASTBuilderAction with the shared preamble put in first.
class SharedPreambleAction : public tooling::ToolAction {
public:
  SharedPreambleAction(const std::string &code, const std::string &key) : code(code), key(key) {}

  bool runInvocation(std::shared_ptr<CompilerInvocation> invocation, FileManager *files,
                     std::shared_ptr<PCHContainerOperations> pch,
                     DiagnosticConsumer *consumer) override {
    IntrusiveRefCntPtr<FileManager> fileManager(files);
    if (sharingEnabled() && invocation->getFrontendOpts().Inputs.size() == 1)
      usePreamble(*invocation, fileManager, pch);
    result.unit = ASTUnit::LoadFromCompilerInvocation(
        invocation, std::move(pch),
        CompilerInstance::createDiagnostics(&invocation->getDiagnosticOpts(), consumer,
                                            /*ShouldOwnClient=*/false),
        fileManager.get());
    result.keepAlive = std::move(preamble);
    return result.unit != nullptr;
  }

  SharedPreambleParse result;

private:
  void usePreamble(CompilerInvocation &invocation, IntrusiveRefCntPtr<FileManager> &files,
                   const std::shared_ptr<PCHContainerOperations> &pch) {
    std::unique_ptr<llvm::MemoryBuffer> mainFile = llvm::MemoryBuffer::getMemBufferCopy(
        code, invocation.getFrontendOpts().Inputs[0].getFile());
    PreambleBounds bounds =
        ComputePreambleBounds(invocation.getLangOpts(), mainFile->getMemBufferRef(), 0);
    std::string fullKey = key;
    fullKey.append(code, 0, bounds.Size);
    std::shared_ptr<CachedPreamble> entry = cache().entry(fullKey);
    IntrusiveRefCntPtr<llvm::vfs::FileSystem> vfs(&files->getVirtualFileSystem());
    std::shared_ptr<PrecompiledPreamble> usable;
    {
      std::lock_guard<std::mutex> lock(entry->building);
      // Built once; built again where a file it includes changed since.
      auto reusable = [&] {
        return entry->preamble &&
               entry->preamble->CanReuse(invocation, mainFile->getMemBufferRef(), bounds, *vfs);
      };
      // Building one costs about a third more than a parse: a process
      // that parses a file once (the plugin, --apply) never builds it.
      if (++entry->asked < kParsesBeforeBuilding && !entry->done)
        return;
      bool ok = reusable();
      if (!entry->done || (entry->preamble && !ok)) {
        entry->done = true;
        entry->preamble = build(invocation, *mainFile, bounds, vfs, pch);
        ok = reusable();
      }
      if (ok)
        usable = entry->preamble;
    }
    if (!usable)
      return;
    // The main file is remapped to this buffer, which the ASTUnit owns and
    // deletes with its invocation's remapped buffers.
    usable->AddImplicitPreamble(invocation, vfs, mainFile.release());
    // The in-memory PCH is reachable only through the overlay it returns.
    files = new FileManager(files->getFileSystemOpts(), vfs);
    preamble = std::move(usable);
    ++reusedCount;
  }

  static std::shared_ptr<PrecompiledPreamble>
  build(CompilerInvocation &invocation, const llvm::MemoryBuffer &mainFile, PreambleBounds bounds,
        IntrusiveRefCntPtr<llvm::vfs::FileSystem> vfs,
        const std::shared_ptr<PCHContainerOperations> &pch) {
    // The preamble's own diagnostics are not shown: where it has an error
    // its build fails and the full parse reports it.
    IgnoringDiagConsumer ignore;
    IntrusiveRefCntPtr<DiagnosticsEngine> quiet =
        CompilerInstance::createDiagnostics(&invocation.getDiagnosticOpts(), &ignore,
                                            /*ShouldOwnClient=*/false);
    PreambleCallbacks callbacks;
    llvm::ErrorOr<PrecompiledPreamble> built =
        PrecompiledPreamble::Build(invocation, &mainFile, bounds, *quiet, vfs, pch,
                                   /*StoreInMemory=*/true, /*StoragePath=*/"", callbacks);
    if (!built) {
      ++failedCount;
      return nullptr;
    }
    ++builtCount;
    return std::make_shared<PrecompiledPreamble>(std::move(*built));
  }

  const std::string &code;
  std::string key;
  std::shared_ptr<PrecompiledPreamble> preamble; ///< the unit reads its PCH while it lives
};

} // namespace

SharedPreambleParse parseWithSharedPreamble(const std::string &code,
                                            const std::vector<std::string> &args,
                                            const std::string &file,
                                            DiagnosticConsumer *diagnostics) {
  // As tooling::buildASTFromCodeWithArgs: the code in an in-memory file
  // over the real file system, a syntax-only invocation.
  std::vector<std::string> command = {"cudal1", "-fsyntax-only"};
  for (std::string &a : tooling::getClangStripDependencyFileAdjuster()(args, file))
    command.push_back(std::move(a));
  command.push_back(file);
  std::string key; // the command names the file last
  for (const std::string &a : command)
    key += a + '\0';
  SharedPreambleAction action(code, key);
  auto overlay =
      llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  auto inMemory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  overlay->pushOverlay(inMemory);
  IntrusiveRefCntPtr<FileManager> files(new FileManager(FileSystemOptions(), overlay));
  tooling::ToolInvocation invocation(command, &action, files.get(),
                                     std::make_shared<PCHContainerOperations>());
  invocation.setDiagnosticConsumer(diagnostics);
  inMemory->addFile(file, 0, llvm::MemoryBuffer::getMemBufferCopy(code));
  if (!invocation.run())
    return {};
  return std::move(action.result);
}

SharedPreambleStats sharedPreambleStats() {
  return {reusedCount.load(), builtCount.load(), failedCount.load()};
}

} // namespace cudal1
