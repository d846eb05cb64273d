//===- ContextHolder.cpp - A process holding a CUDA context ---------------===//
#include "cudal1/Eval/ContextHolder.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace cudal1 {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// Waits for `pid` up to `seconds`; true once it was reaped.
bool reap(pid_t pid, double seconds) {
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR))
      return true;
    if (secondsSince(start) >= seconds)
      return false;
    ::usleep(5000);
  }
}

void endChild(pid_t pid) {
  if (!reap(pid, 5)) {
    ::kill(pid, SIGKILL);
    reap(pid, 5);
  }
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r'))
    s.pop_back();
  return s;
}

} // namespace

std::unique_ptr<ContextHolder> ContextHolder::start(const std::string &evalExe, int gpu,
                                                    double maxSeconds, double waitSeconds,
                                                    std::string &why) {
  // Close-on-exec: no other child of this process (a program run, a kept
  // worker) inherits the holder's input and keeps it alive after us.
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) {
    why = std::string("pipe: ") + std::strerror(errno);
    return nullptr;
  }
  if (::pipe2(out, O_CLOEXEC) != 0) {
    why = std::string("pipe: ") + std::strerror(errno);
    ::close(in[0]);
    ::close(in[1]);
    return nullptr;
  }
  std::vector<std::string> words = {evalExe,      "--hold-context",
                                    "--gpu",      std::to_string(gpu),
                                    "--hold-max", std::to_string(maxSeconds > 0 ? maxSeconds : 0)};
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, out[1], 2);
  pid_t pid = -1;
  int err = ::posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  if (err != 0) {
    why = "cannot start " + evalExe + ": " + std::strerror(err);
    ::close(in[1]);
    ::close(out[0]);
    return nullptr;
  }
  // Its first line: "holding NAME", or why it could not.
  std::string said;
  auto started = std::chrono::steady_clock::now();
  bool closed = false;
  while (said.find('\n') == std::string::npos && !closed) {
    double left = waitSeconds - secondsSince(started);
    if (left <= 0)
      break;
    pollfd p{out[0], POLLIN, 0};
    int n = ::poll(&p, 1, int(left * 1000) + 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    char buf[512];
    ssize_t got = ::read(out[0], buf, sizeof buf);
    if (got <= 0)
      closed = true;
    else
      said.append(buf, size_t(got));
  }
  ::close(out[0]); // it writes nothing after its first line
  std::string first = said.substr(0, said.find('\n'));
  const std::string tag = "holding ";
  if (first.compare(0, tag.size(), tag) == 0)
    return std::unique_ptr<ContextHolder>(new ContextHolder(pid, in[1], first.substr(tag.size())));
  ::close(in[1]);
  ::kill(pid, SIGKILL);
  reap(pid, 5);
  why = said.empty() ? (closed ? evalExe + " --hold-context ended without a word"
                               : evalExe + " --hold-context said nothing within " +
                                     std::to_string(int(waitSeconds)) + " s")
                     : trimmed(said);
  return nullptr;
}

ContextHolder::~ContextHolder() {
  ::close(input_); // the holder reads end-of-file and exits
  endChild(pid_);
}

} // namespace cudal1
