// Turns a user's compile command (clang or nvcc, from a compilation database
// or the command line) into the clang-19 arguments cudal1 parses with.
#ifndef CUDAL1_FRONTEND_COMPILEFLAGS_H
#define CUDAL1_FRONTEND_COMPILEFLAGS_H

#include <string>
#include <vector>

namespace cudal1 {

struct TranslatedFlags {
  std::vector<std::string> args;  ///< clang arguments (no compiler, no input file)
  std::vector<std::string> notes; ///< one line per nvcc flag translated or dropped
};

/// Translates compiler arguments (argv[0] excluded, input files and -o kept
/// out) so that clang-19 accepts them: nvcc spellings become clang ones
/// (`-x cu` → `-x cuda`, `-arch=sm_90`/`-gencode` → `--cuda-gpu-arch=sm_90`),
/// nvcc-only flags are dropped, and every change is noted.
TranslatedFlags translateCompileFlags(const std::vector<std::string> &userArgs);

/// The arguments that make clang-19 work with CUDA 13 (the generated CUDA
/// path and the stub include directory) plus the resource directory.
std::vector<std::string> cudaToolchainArgs();

/// A full argument list for parsing: translated user flags, `-x cuda` and a
/// GPU architecture when the user gave none, the toolchain arguments, and
/// `--cuda-host-only` (kernels and host code are both visible there).
std::vector<std::string> analysisArgs(const std::vector<std::string> &userArgs,
                                      std::vector<std::string> *notes);

/// The flags of a clang argument list (the user's, or analysisArgs()) that
/// a build of the same source elsewhere needs, in words nvcc and clang both
/// take: -I, -isystem, -iquote (as -I: nvcc has no -iquote), -include, -D,
/// -U (joined or separate) and -std=. Paths are made absolute against
/// `workingDir` (the current directory when empty): a bundle is built in
/// another directory. The toolchain's own (cudaToolchainArgs) are left out.
std::vector<std::string> buildFlagsOf(const std::vector<std::string> &args,
                                      const std::string &workingDir = "");

} // namespace cudal1

#endif
