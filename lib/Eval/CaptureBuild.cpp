// The capture runtime compiled apart for an instrumented program's build.
#include "cudal1/Eval/CaptureBuild.h"

#include <utility>

namespace cudal1 {

bool isCompilerCommand(const std::vector<std::string> &build) {
  if (build.empty())
    return false;
  std::string name = build.front().substr(build.front().find_last_of('/') + 1);
  for (const char *c : {"nvcc", "clang", "g++", "gcc", "c++"})
    if (name.rfind(c, 0) == 0)
      return true;
  return false;
}

CaptureRuntimeBuild::CaptureRuntimeBuild(const std::vector<std::string> &build,
                                         const std::string &tree_, const std::string &objectDir,
                                         const std::string &bundleDir, double timeoutSeconds)
    : tree(tree_) {
  for (const char *f : {"CaptureRuntime", "CaptureFile"}) {
    sources.push_back(tree + "/lib/Capture/" + f + ".cpp");
    objects.push_back(objectDir + "/" + f + ".o");
  }
  if (!isCompilerCommand(build))
    return;
  for (size_t i = 0; i < sources.size(); ++i) {
    std::vector<std::string> words = substitutePlaceholders(
        build, {{"{src}", sources[i]}, {"{exe}", objects[i]}, {"{bundle}", bundleDir}});
    words.push_back("-c");
    words.push_back("-I" + tree + "/include");
    compiling.push_back(std::async(
        std::launch::async, [words, timeoutSeconds] { return runProcess(words, timeoutSeconds); }));
  }
}

std::vector<std::string> CaptureRuntimeBuild::linkWords() {
  bool compiled = !compiling.empty();
  for (std::future<ProcessResult> &c : compiling)
    if (c.valid()) {
      ProcessResult r = c.get();
      compiled &= r.exited && r.exitCode == 0;
    }
  std::vector<std::string> out = compiled ? objects : sources;
  out.push_back("-I" + tree + "/include");
  return out;
}

} // namespace cudal1
