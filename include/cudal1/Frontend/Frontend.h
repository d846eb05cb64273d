// The front end: parses a CUDA translation unit with Clang and builds its
// ProgramModel (kernels, launch sites, host launch sequences).
#ifndef CUDAL1_FRONTEND_FRONTEND_H
#define CUDAL1_FRONTEND_FRONTEND_H

#include "cudal1/Frontend/ProgramModel.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace clang::tooling {
struct CompileCommand;
}

namespace cudal1 {

/// The user's flags of a compilation-database entry: the compiler, the input
/// file and output options removed (translation happens in analysisArgs).
std::vector<std::string> userArgsFromCompileCommand(const clang::tooling::CompileCommand &cmd);

/// Parses `file` with clang-19 using `clangArgs` (see analysisArgs) and builds
/// its model. Clang's own diagnostics (file:line:col) go to stderr; a file
/// that does not parse yields an error.
llvm::Expected<ProgramModel> buildProgramModel(const std::string &file,
                                               const std::vector<std::string> &clangArgs);

} // namespace cudal1

#endif
