// Compiling variants the way the user compiles: nvcc with the user's flags,
// or NVRTC for self-contained kernels; many at once.
#ifndef CUDAL1_EVAL_COMPILE_H
#define CUDAL1_EVAL_COMPILE_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cudal1 {

struct CompileJob {
  std::string id;
  std::string source;             ///< path of the .cu file
  std::string output;             ///< path of the cubin to write
  std::string compiler;           ///< auto, nvrtc or nvcc
  std::vector<std::string> flags; ///< the user's flags, then the variant's
  std::string arch = "sm_90";
  /// A directory of cubins by content (compiler, arch, flags, toolkit and
  /// source text): a job seen before is copied from it instead of compiled.
  /// Headers the source includes are not part of the key, so a cache lives
  /// as long as one tuning session, whose files do not change. Empty: none.
  std::string cacheDir;
};

struct CompileResult {
  std::string id;
  bool ok = false;
  std::string compiler; ///< the one actually used
  double seconds = 0;
  bool cached = false; ///< copied from CompileJob::cacheDir
  std::string log;
};

/// "auto" picks nvcc when the flags ask for relocatable device code or the
/// source includes a header NVRTC does not provide, NVRTC otherwise.
std::string chooseCompiler(const std::string &requested, const std::string &source,
                           const std::vector<std::string> &flags);

/// Translates nvcc flags into NVRTC options; flags NVRTC rejects (-O3,
/// -Xcompiler, -ccbin, ...) are left out and listed in `dropped`.
std::vector<std::string> nvrtcOptions(const std::vector<std::string> &flags,
                                      const std::string &arch, std::vector<std::string> &dropped);

/// The nvcc command for a cubin (architecture flags of the user replaced by
/// ours: we compile for the GPU at hand).
std::vector<std::string> nvccCommand(const std::string &nvcc, const CompileJob &job,
                                     bool relocatable, const std::string &output);

/// Whether a cubin (ELF) image has a code section for kernel `entry`
/// (".text.ENTRY"): a cheap check, without a GPU, that a module will have
/// the entry point the workers ask for.
bool cubinDefinesKernel(const std::vector<uint8_t> &image, const std::string &entry);
/// Whether it has any code section at all.
bool cubinDefinesAnyKernel(const std::vector<uint8_t> &image);

/// The CUDA toolkit root: $CUDAL1_CUDA_ROOT, else the one found at build time.
std::string cudaRoot();

CompileResult compileVariant(const CompileJob &job);

/// Compiles all jobs with up to `parallelism` at a time; `progress` is
/// called after each one (from worker threads, serialized).
std::vector<CompileResult>
compileAll(const std::vector<CompileJob> &jobs, int parallelism,
           const std::function<void(const CompileResult &)> &progress = {});

} // namespace cudal1

#endif
