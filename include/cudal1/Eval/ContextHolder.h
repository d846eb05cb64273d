// A process that holds a CUDA context while a tuner runs programs.
//
// A CUDA process on an idle GPU pays for waking it: on an H100 with
// persistence mode on, a trivial CUDA program took 291 ms (median) alone and
// 165 ms while another process held a context (bench/startup, 2026-12-07).
// The whole-program judge starts a process per run, so `cudal1-opt --tune`
// keeps one context open for the session (`cudal1-eval --hold-context`,
// cuda::holdContext). The holder launches nothing: it takes no GPU time
// from the programs measured beside it.
//
// Plain C++ (no CUDA). The holder reads its standard input until it closes:
// when this object goes, or when this process dies however it dies, the
// holder ends with it.
#ifndef CUDAL1_EVAL_CONTEXTHOLDER_H
#define CUDAL1_EVAL_CONTEXTHOLDER_H

#include <memory>
#include <string>
#include <sys/types.h>

namespace cudal1 {

class ContextHolder {
public:
  /// Starts `evalExe --hold-context --gpu GPU --hold-max MAX` and waits up to
  /// waitSeconds for its "holding NAME" line. Null, with the reason in
  /// `why`, when it cannot start, fails (no GPU, no driver) or says nothing
  /// in time (it is killed then).
  static std::unique_ptr<ContextHolder> start(const std::string &evalExe, int gpu,
                                              double maxSeconds, double waitSeconds,
                                              std::string &why);
  /// Closes the holder's input and waits for it (killed after 5 s).
  ~ContextHolder();
  ContextHolder(const ContextHolder &) = delete;
  ContextHolder &operator=(const ContextHolder &) = delete;

  pid_t pid() const { return pid_; }
  /// The GPU's name as the holder printed it.
  const std::string &device() const { return device_; }

private:
  ContextHolder(pid_t pid, int input, std::string device)
      : pid_(pid), input_(input), device_(std::move(device)) {}
  pid_t pid_;
  int input_; ///< the write end of the holder's stdin
  std::string device_;
};

} // namespace cudal1

#endif
