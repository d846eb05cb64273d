// A child process with a deadline: the plugin derives tuned sources in one,
// because a derivation cannot be interrupted from inside (each plan step is
// a full parse) and because a crash there must not take clang down.
#include "Bounded.h"

#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <exception>
#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;

namespace cudal1 {

char BoundedRunError::ID;

void BoundedRunError::log(raw_ostream &os) const { os << message; }

namespace {

Error failure(BoundedFailure kind, const Twine &msg) {
  return make_error<BoundedRunError>(kind, msg.str());
}

bool writeAll(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

/// The child: its answer is one status byte ('R' result, 'E' exception)
/// and the bytes; it never returns.
[[noreturn]] void child(int fd, function_ref<std::string()> work) {
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, SIGXCPU, SIGXFSZ,
                  SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2})
    std::signal(sig, SIG_DFL);
  std::signal(SIGPIPE, SIG_IGN);
  char status = 'R';
  std::string out;
  try {
    out = work();
  } catch (const std::exception &e) {
    status = 'E';
    out = e.what();
  } catch (...) {
    status = 'E';
    out = "an exception that is not a std::exception";
  }
  bool ok = writeAll(fd, &status, 1) && writeAll(fd, out.data(), out.size());
  ::close(fd);
  // No destructors, no atexit handlers: they belong to the parent.
  ::_exit(ok ? 0 : 1);
}

} // namespace

Expected<std::string> runBounded(function_ref<std::string()> work, unsigned budgetMs) {
  int fds[2];
  if (::pipe(fds) != 0)
    return failure(BoundedFailure::CannotFork, Twine("cannot create a pipe: ") + strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return failure(BoundedFailure::CannotFork, Twine("cannot fork: ") + strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], work);
  }
  ::close(fds[1]);

  // Read until the child closes its end or the budget is spent.
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::milliseconds(budgetMs);
  std::string got;
  bool timedOut = false;
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timedOut = true;
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int n = ::poll(&p, 1, int(std::min<long long>(left.count(), 1 << 30)));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      break;
    if (n == 0)
      continue; // the loop's check ends it
    ssize_t r = ::read(fds[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got.append(buf, size_t(r));
  }
  ::close(fds[0]);
  if (timedOut)
    ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut)
    return failure(BoundedFailure::TimedOut,
                   "took longer than its budget of " + Twine(budgetMs) + " ms");
  if (WIFSIGNALED(status))
    return failure(BoundedFailure::Crashed, Twine("crashed (signal ") + Twine(WTERMSIG(status)) +
                                                ", " + strsignal(WTERMSIG(status)) + ")");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got.empty())
    return failure(BoundedFailure::Crashed, "ended without an answer");
  if (got[0] == 'E')
    return failure(BoundedFailure::Threw, "threw: " + Twine(got.substr(1)));
  return got.substr(1);
}

} // namespace cudal1
