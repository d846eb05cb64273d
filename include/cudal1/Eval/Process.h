// Child processes with a time limit: compilers and evaluation workers run
// in them so that a crash or a hang is a result, not the end of the run.
#ifndef CUDAL1_EVAL_PROCESS_H
#define CUDAL1_EVAL_PROCESS_H

#include "cudal1/Eval/Error.h"

#include <string>
#include <vector>

namespace cudal1 {

struct ProcessResult {
  bool started = false;
  bool exited = false; ///< normal exit; see exitCode
  int exitCode = -1;
  bool signaled = false; ///< killed by a signal; see signal
  int signal = 0;
  bool timedOut = false; ///< killed by us after the time limit
  /// A kept worker (KeptWorkers.h) ended without answering: not our child,
  /// so its status is unknown; its reports say what it finished.
  bool lost = false;
  double seconds = 0;
  std::string output;           ///< stdout and stderr together (the last 64 KiB)
  std::string describe() const; ///< "exit 3", "signal 11 (SIGSEGV)", ...
};

/// Runs argv[0] (an absolute path or a name looked up in PATH) in its own
/// process group with extra "NAME=value" environment entries; kills the
/// group with SIGKILL after timeoutSeconds (<= 0: no limit).
ProcessResult runProcess(const std::vector<std::string> &argv, double timeoutSeconds,
                         const std::vector<std::string> &extraEnv = {});

/// A command's words with each placeholder ({src}, {exe}, {bundle}, ...)
/// replaced by its value wherever it occurs (a value that contains its
/// placeholder is not expanded again).
std::vector<std::string>
substitutePlaceholders(const std::vector<std::string> &words,
                       const std::vector<std::pair<std::string, std::string>> &values);

/// A fresh directory $TMPDIR/NAME.XXXXXX (/tmp without TMPDIR).
Expected<std::string> makeTempDirectory(const std::string &name);

/// The current time in UTC, as 2026-12-02T15:04:05Z.
std::string utcTimestamp();

/// Absolute path of the running executable.
std::string selfExecutablePath();

} // namespace cudal1

#endif
