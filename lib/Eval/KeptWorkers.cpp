// Kept workers: a Unix-socket server per kernel, and the client side that
// starts it on demand and reads its answers as a process result.
//
// The protocol is lines of text. On connecting, the server says
// "hello PID". The client sends "run\tWORD\tWORD...\n" (the worker's
// arguments) or "quit\n"; after a run the server answers "exit CODE\n".
// A server that will not serve again removes its socket before it answers,
// so that the next request starts a fresh worker instead of reaching a
// dying one.
#include "cudal1/Eval/KeptWorkers.h"
#include "cudal1/Capture/CaptureFile.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace cudal1 {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool fillAddress(const std::string &path, sockaddr_un &addr) {
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  return true;
}

/// A connected socket, or -1 when nothing listens at `path`.
int connectTo(const std::string &path) {
  sockaddr_un addr;
  if (!fillAddress(path, addr))
    return -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool sendAll(int fd, const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += size_t(n);
  }
  return true;
}

enum class Read { Line, Closed, TimedOut };

/// Reads one '\n'-terminated line (without it) within `seconds` (< 0: no
/// limit). `pending` keeps what came after it.
Read readLine(int fd, std::string &pending, std::string &line, double seconds) {
  auto start = Clock::now();
  for (;;) {
    size_t nl = pending.find('\n');
    if (nl != std::string::npos) {
      line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      return Read::Line;
    }
    int wait = 1000;
    if (seconds >= 0) {
      double left = seconds - since(start);
      if (left <= 0)
        return Read::TimedOut;
      wait = int(std::min(1000.0, left * 1000.0)) + 1;
    }
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, wait);
    if (r < 0 && errno != EINTR)
      return Read::Closed;
    if (r <= 0)
      continue;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return Read::Closed;
    pending.append(buf, size_t(n));
  }
}

std::string logPathOf(const std::string &socket) {
  std::string base = socket;
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".sock") == 0)
    base.resize(base.size() - 5);
  return base + ".log";
}

std::string tailOf(const std::string &path, size_t bytes) {
  Expected<std::vector<uint8_t>> all = readWholeFile(path);
  if (!all.ok())
    return {};
  size_t from = all->size() > bytes ? all->size() - bytes : 0;
  return std::string(all->begin() + long(from), all->end());
}

/// Starts `exe --worker serve --socket SOCKET --worker-idle S` in a session
/// of its own, its output appended to SOCKET's log. A double fork: the
/// worker is nobody's child here and outlives this process.
bool spawnServer(const std::string &exe, const std::string &socket, double idleSeconds) {
  std::vector<std::string> words = {
      exe, "--worker", "serve", "--socket", socket, "--worker-idle", std::to_string(idleSeconds)};
  std::vector<char *> args;
  for (std::string &w : words)
    args.push_back(w.data());
  args.push_back(nullptr);
  std::string log = logPathOf(socket);
  pid_t first = ::fork();
  if (first < 0)
    return false;
  if (first == 0) {
    ::setsid();
    pid_t second = ::fork();
    if (second == 0) {
      int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      int in = ::open("/dev/null", O_RDONLY);
      if (out >= 0) {
        ::dup2(out, 1);
        ::dup2(out, 2);
      }
      if (in >= 0)
        ::dup2(in, 0);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::_exit(second < 0 ? 1 : 0);
  }
  int status = 0;
  while (::waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// Connects to the worker at `socket`, starting one when none listens,
/// and reads its hello. -1 when no worker could be reached.
int reachWorker(const std::string &exe, const std::string &socket, double idleSeconds,
                std::string &pending, pid_t &pid) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    int fd = connectTo(socket);
    if (fd < 0) {
      ::unlink(socket.c_str()); // a worker that died without removing it
      ::mkdir(socket.substr(0, socket.rfind('/')).c_str(), 0700);
      if (!spawnServer(exe, socket, idleSeconds))
        return -1;
      auto start = Clock::now();
      while (fd < 0 && since(start) < 30) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        fd = connectTo(socket);
      }
      if (fd < 0)
        return -1;
    }
    std::string hello;
    pending.clear();
    if (readLine(fd, pending, hello, 30) == Read::Line && hello.rfind("hello ", 0) == 0) {
      pid = pid_t(std::atol(hello.c_str() + 6));
      return fd;
    }
    // A worker that was ending as we connected: start afresh.
    ::close(fd);
  }
  return -1;
}

} // namespace

std::string keptWorkerSocket(const std::string &dir, const std::string &kernelKey, int slot) {
  char name[48];
  std::snprintf(name, sizeof name, "/w%016llx-%d.sock",
                static_cast<unsigned long long>(
                    fnv1a64(reinterpret_cast<const uint8_t *>(kernelKey.data()), kernelKey.size())),
                slot);
  std::string path = dir + name;
  return path.size() < sizeof(sockaddr_un{}.sun_path) ? path : std::string();
}

ProcessResult runKeptWorker(const std::string &socket, const std::vector<std::string> &argv,
                            double timeoutSeconds, double idleSeconds) {
  ProcessResult res;
  auto start = Clock::now();
  std::string request = "run";
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i].find_first_of("\t\n") != std::string::npos)
      return runProcess(argv, timeoutSeconds); // not a word the protocol can carry
    request += "\t" + argv[i];
  }
  request += "\n";
  std::string pending;
  pid_t pid = 0;
  int fd = argv.empty() ? -1 : reachWorker(argv[0], socket, idleSeconds, pending, pid);
  if (fd < 0) // no worker could be kept: one process for this request
    return runProcess(argv, timeoutSeconds);
  res.started = true;
  std::string answer;
  Read r = sendAll(fd, request) ? readLine(fd, pending, answer,
                                           timeoutSeconds > 0 ? timeoutSeconds - since(start) : -1)
                                : Read::Closed;
  ::close(fd);
  res.seconds = since(start);
  if (r == Read::Line && answer.rfind("exit ", 0) == 0) {
    res.exited = true;
    res.exitCode = std::atoi(answer.c_str() + 5);
    if (res.exitCode != 0)
      res.output = tailOf(logPathOf(socket), 4096);
    return res;
  }
  if (r == Read::TimedOut) {
    res.timedOut = true;
    if (pid > 0) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    }
    ::unlink(socket.c_str());
    return res;
  }
  // A watchdog or a fault ended the worker mid-request: its reports, if it
  // wrote them, say what happened.
  res.lost = true;
  ::unlink(socket.c_str());
  res.output = "the kept worker (pid " + std::to_string(pid) +
               ") ended without answering; its log: " + tailOf(logPathOf(socket), 2048);
  return res;
}

void stopKeptWorkers(const std::string &dir) {
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return;
  std::vector<std::string> sockets;
  while (dirent *e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".sock") == 0)
      sockets.push_back(dir + "/" + n);
  }
  ::closedir(d);
  std::vector<std::pair<pid_t, std::string>> asked;
  for (const std::string &s : sockets) {
    int fd = connectTo(s);
    if (fd < 0) {
      ::unlink(s.c_str());
      continue;
    }
    std::string pending, hello;
    if (readLine(fd, pending, hello, 5) == Read::Line && hello.rfind("hello ", 0) == 0) {
      pid_t pid = pid_t(std::atol(hello.c_str() + 6));
      if (sendAll(fd, "quit\n") && pid > 0)
        asked.push_back({pid, s});
    }
    ::close(fd);
  }
  // A worker frees its GPU memory as it exits: wait for that (bounded).
  auto start = Clock::now();
  for (const auto &[pid, socket] : asked) {
    while (::kill(pid, 0) == 0 && since(start) < 5)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (::kill(pid, 0) == 0) {
      ::kill(pid, SIGKILL);
      ::unlink(socket.c_str()); // it may not have reached its own unlink
    }
  }
}

int serveKeptWorker(const std::string &socket, double idleSeconds,
                    const KeptWorkerHandler &handle) {
  std::signal(SIGPIPE, SIG_IGN);
  sockaddr_un addr;
  if (!fillAddress(socket, addr)) {
    std::fprintf(stderr, "kept worker: socket path too long: %s\n", socket.c_str());
    return 2;
  }
  int lfd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0 || ::bind(lfd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
      ::listen(lfd, 8) != 0) {
    std::fprintf(stderr, "kept worker: cannot listen at %s: %s\n", socket.c_str(),
                 std::strerror(errno));
    return 2;
  }
  struct stat mine;
  ::stat(socket.c_str(), &mine);
  // Still ours: a later worker may have taken the name after a client gave
  // up on this one.
  auto ours = [&] {
    struct stat now;
    return ::stat(socket.c_str(), &now) == 0 && now.st_ino == mine.st_ino &&
           now.st_dev == mine.st_dev;
  };
  auto leave = [&](int code) {
    if (ours())
      ::unlink(socket.c_str());
    ::close(lfd);
    return code;
  };
  auto idleSince = Clock::now();
  for (;;) {
    pollfd p{lfd, POLLIN, 0};
    int r = ::poll(&p, 1, 1000);
    if (r < 0 && errno != EINTR)
      return leave(2);
    if (r <= 0) {
      if (!ours())
        return leave(0);
      if (idleSeconds > 0 && since(idleSince) > idleSeconds)
        return leave(0);
      continue;
    }
    int cfd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (cfd < 0)
      continue;
    std::string pending, line;
    if (!sendAll(cfd, "hello " + std::to_string(::getpid()) + "\n") ||
        readLine(cfd, pending, line, 30) != Read::Line) {
      ::close(cfd);
      continue;
    }
    if (line == "quit") {
      ::close(cfd);
      return leave(0);
    }
    if (line.rfind("run\t", 0) != 0) {
      ::close(cfd);
      continue;
    }
    std::vector<std::string> words;
    size_t at = 4;
    for (;;) {
      size_t tab = line.find('\t', at);
      words.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
      if (tab == std::string::npos)
        break;
      at = tab + 1;
    }
    bool keep = true;
    int code = handle(words, keep);
    std::fflush(nullptr);
    if (!keep && ours())
      ::unlink(socket.c_str()); // before the answer: no request reaches us now
    sendAll(cfd, "exit " + std::to_string(code) + "\n");
    ::close(cfd);
    if (!keep) {
      ::close(lfd);
      return code;
    }
    idleSince = Clock::now();
  }
}

} // namespace cudal1
