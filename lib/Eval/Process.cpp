// fork/exec with a pipe for the output and a deadline enforced by SIGKILL on
// the child's process group (so grandchildren, e.g. nvcc's, die too).
#include "cudal1/Eval/Process.h"

#include <ctime>
#include <utility>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace cudal1 {

std::string ProcessResult::describe() const {
  if (!started)
    return "could not start: " + output;
  if (timedOut)
    return "killed after the time limit";
  if (lost)
    return "ended without answering";
  if (signaled)
    return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit " + std::to_string(exitCode);
}

std::string selfExecutablePath() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return {};
  buf[n] = 0;
  return buf;
}

Expected<std::string> makeTempDirectory(const std::string &name) {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + name + ".XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back(0);
  if (!::mkdtemp(buf.data()))
    return makeError("cannot create a work directory at ", pattern, ": ", std::strerror(errno));
  return std::string(buf.data());
}

std::string utcTimestamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

ProcessResult runProcess(const std::vector<std::string> &argv, double timeoutSeconds,
                         const std::vector<std::string> &extraEnv) {
  ProcessResult res;
  if (argv.empty()) {
    res.output = "empty command";
    return res;
  }
  // Everything the child needs is prepared before fork: between fork and
  // exec only async-signal-safe calls are allowed.
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> envStore;
  for (char **e = environ; *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const std::string &x : extraEnv)
      if (x.substr(0, x.find('=')) == name)
        overridden = true;
    if (!overridden)
      envStore.push_back(entry);
  }
  for (const std::string &x : extraEnv)
    envStore.push_back(x);
  std::vector<char *> env;
  for (const std::string &e : envStore)
    env.push_back(const_cast<char *>(e.c_str()));
  env.push_back(nullptr);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    res.output = std::strerror(errno);
    return res;
  }
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    res.output = std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return res;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    if (argv[0].find('/') != std::string::npos)
      ::execve(args[0], args.data(), env.data());
    else {
      environ = env.data();
      ::execvp(args[0], args.data());
    }
    const char msg[] = "exec failed\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid); // also here, to win the race with the child
  ::close(fds[1]);
  res.started = true;
  bool pipeOpen = true;
  int status = 0;
  bool reaped = false;
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (!reaped) {
    if (pipeOpen) {
      pollfd p{fds[0], POLLIN, 0};
      int r = ::poll(&p, 1, 50);
      if (r > 0) {
        char buf[8192];
        ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n > 0) {
          res.output.append(buf, size_t(n));
          if (res.output.size() > 65536)
            res.output.erase(0, res.output.size() - 65536);
        } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
          pipeOpen = false;
        }
      }
    } else {
      ::usleep(20000);
    }
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      reaped = true;
      break;
    }
    if (timeoutSeconds > 0 && elapsed() > timeoutSeconds && !res.timedOut) {
      res.timedOut = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    }
  }
  // Drain what is left (a grandchild may still hold the pipe: bounded wait).
  for (int i = 0; pipeOpen && i < 20; ++i) {
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, 10) <= 0)
      break;
    char buf[8192];
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0)
      break;
    res.output.append(buf, size_t(n));
  }
  ::close(fds[0]);
  if (res.timedOut)
    ::kill(-pid, SIGKILL);
  res.seconds = elapsed();
  if (WIFEXITED(status)) {
    res.exited = true;
    res.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    res.signaled = true;
    res.signal = WTERMSIG(status);
  }
  return res;
}

std::vector<std::string>
substitutePlaceholders(const std::vector<std::string> &words,
                       const std::vector<std::pair<std::string, std::string>> &values) {
  std::vector<std::string> out;
  for (std::string w : words) {
    for (const auto &[key, value] : values)
      for (size_t p = 0; (p = w.find(key, p)) != std::string::npos; p += value.size())
        w.replace(p, key.size(), value);
    out.push_back(std::move(w));
  }
  return out;
}

} // namespace cudal1
