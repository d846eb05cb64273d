// The capture runtime in an instrumented program's build (docs/Evaluator.md,
// "Capture"): lib/Capture's two host sources, compiled apart while the
// caller prepares the program, then linked into it. Shared by --tune's
// replay (lib/Tune/ReplayEvaluator.cpp) and cudal1-eval's kernel plans
// (lib/Eval/KernelPlansEval.cpp).
#ifndef CUDAL1_EVAL_CAPTUREBUILD_H
#define CUDAL1_EVAL_CAPTUREBUILD_H

#include "cudal1/Eval/Process.h"

#include <future>
#include <string>
#include <vector>

namespace cudal1 {

/// A build command that is a compiler's (nvcc, clang, gcc, c++): it takes -c.
bool isCompilerCommand(const std::vector<std::string> &build);

class CaptureRuntimeBuild {
public:
  /// Starts compiling the runtime's sources under `tree` (lib/Capture/*.cpp,
  /// include/) into `objectDir`, a process each, with the program's build
  /// command (`build`, its {src} and {exe} placeholders; {bundle} is
  /// `bundleDir`) and -c, when that command is a compiler's. Built one after
  /// the other behind the program's source, they were about half of the
  /// instrumented build (nvcc, H100 machine).
  CaptureRuntimeBuild(const std::vector<std::string> &build, const std::string &tree,
                      const std::string &objectDir, const std::string &bundleDir,
                      double timeoutSeconds);
  /// What the program's build command adds: the objects where both
  /// compiled, else the sources (a build command that is not a compiler's,
  /// or a compile that failed: the program's build then says why), and the
  /// include directory. Waits for the compiles.
  std::vector<std::string> linkWords();

private:
  std::string tree;
  std::vector<std::string> sources, objects;
  std::vector<std::future<ProcessResult>> compiling;
};

} // namespace cudal1

#endif
