// The front end: parses a CUDA translation unit with Clang and builds its
// ProgramModel (kernels, launch sites, host launch sequences).
#ifndef CUDAL1_FRONTEND_FRONTEND_H
#define CUDAL1_FRONTEND_FRONTEND_H

#include "cudal1/Frontend/ProgramModel.h"

#include "llvm/ADT/StringRef.h"
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

/// Whether clang accepts `clangArgs` (see analysisArgs) for `file`, without
/// parsing it: the driver and the compiler-invocation checks only (an
/// unknown flag, a bad -std=). Clang's diagnostics go to stderr (unless
/// QuietParses); for modes that may not parse at all (--apply on a file no
/// tuned plan names), so that flag errors are errors there too.
llvm::Error checkClangArgs(const std::string &file, const std::vector<std::string> &clangArgs);

/// `file` made absolute against the working directory, with `.` and `..`
/// removed and links left as they are: how the model names a header
/// (positions outside the main file; a precompiled preamble knows headers
/// only so).
std::string absoluteLexicalPath(llvm::StringRef file);

/// The directory host-code keys are relative to: the nearest ancestor of
/// `file` (symbolic links resolved) that holds a `.git` entry, else the
/// file's own directory. The tuner and the plugin find the same root from
/// the file alone, whatever directory they run in.
std::string projectRootOf(llvm::StringRef file);

/// The part of a host-code key that needs no parse: "host:" + the path of
/// `file` relative to projectRootOf(file), with '/' separators, + "#". The
/// plugin uses it to see, before parsing, whether a host plan may apply.
std::string hostKeyPrefix(llvm::StringRef file);

/// The host-code key of a parsed unit (ProgramModel::hostKey): hostKeyPrefix
/// of its main file + 16 hex digits of a hash of the path and of the
/// normalized tokens (comments and whitespace ignored, as in kernel keys) of
/// every host function defined outside system headers. A host plan is
/// measured on this code: another file of the same name, or this file after
/// its host code changed, has another key.
const std::string &hostCodeKey(const ProgramModel &model);

} // namespace cudal1

#endif
