// Command-line helpers for the tools: keeping option values away from
// llvm::cl's response-file expansion.
#ifndef CUDAL1_SUPPORT_COMMANDLINE_H
#define CUDAL1_SUPPORT_COMMANDLINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <list>
#include <string>
#include <vector>

namespace cudal1 {

/// Rewrites argv in place so that `-NAME VALUE` and `--NAME VALUE`, for each
/// of `names`, become one argument `--NAME=VALUE`, up to the first "--".
/// llvm::cl::ParseCommandLineOptions reads every argument that starts with
/// '@' as a response file (LLVM 19 offers no switch to turn that off); a
/// value joined to its option never starts with '@', so a plan such as
/// `--plan '@k: restrict'` is taken as written, whatever its length and
/// whatever files the working directory holds. The object owns the new
/// argument strings: keep it alive as long as argv is used.
class JoinOptionValues {
public:
  JoinOptionValues(int &argc, char **&argv, llvm::ArrayRef<llvm::StringRef> names);
  JoinOptionValues(const JoinOptionValues &) = delete;
  JoinOptionValues &operator=(const JoinOptionValues &) = delete;

private:
  std::list<std::string> joined; ///< a list: the pointers into it stay valid
  std::vector<char *> args;
};

} // namespace cudal1

#endif
