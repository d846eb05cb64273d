// The context holder's life cycle with stand-in executables: it starts,
// reports the GPU it holds, ends when its owner lets go (not killed: it read
// end-of-file), and a holder that fails, hangs or does not exist is a
// reason, not a crash or a stray process.
#include "cudal1/Eval/ContextHolder.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace cudal1;

namespace {

struct Scratch {
  std::string dir;
  Scratch() {
    char tmp[] = "/tmp/cudal1-holder-test.XXXXXX";
    dir = mkdtemp(tmp) ? tmp : "";
  }
  ~Scratch() { std::system(("rm -rf '" + dir + "'").c_str()); }
  /// An executable shell script DIR/NAME with `body`.
  std::string script(const std::string &name, const std::string &body) {
    std::string p = dir + "/" + name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    ::chmod(p.c_str(), 0755);
    return p;
  }
  bool exists(const std::string &name) {
    struct stat st;
    return ::stat((dir + "/" + name).c_str(), &st) == 0;
  }
};

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

} // namespace

TEST(ContextHolder, HoldsUntilItsOwnerLetsGo) {
  Scratch s;
  ASSERT_FALSE(s.dir.empty());
  // Its arguments are cudal1-eval's; it ends on end-of-file, as the real one.
  std::string exe = s.script("holder", "echo \"$@\" > '" + s.dir +
                                           "/args'\n"
                                           "echo 'holding Stand-in GPU'\n"
                                           "cat > /dev/null\n"
                                           "touch '" +
                                           s.dir + "/saw-eof'\n");
  std::string why;
  std::unique_ptr<ContextHolder> h = ContextHolder::start(exe, 1, 60, 10, why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(h->device(), "Stand-in GPU");
  pid_t pid = h->pid();
  EXPECT_TRUE(alive(pid));
  h.reset();
  EXPECT_FALSE(alive(pid)); // reaped
  EXPECT_TRUE(s.exists("saw-eof")) << "the holder was killed instead of let go";
  std::ifstream args(s.dir + "/args");
  std::string line;
  std::getline(args, line);
  EXPECT_EQ(line.rfind("--hold-context --gpu 1 --hold-max 60", 0), 0u) << line;
}

TEST(ContextHolder, AFailureIsItsReason) {
  Scratch s;
  ASSERT_FALSE(s.dir.empty());
  std::string exe = s.script("holder", "echo 'cudal1-eval: cannot hold a context on GPU 0: "
                                       "no CUDA driver' >&2\nexit 2\n");
  std::string why;
  EXPECT_FALSE(ContextHolder::start(exe, 0, 60, 10, why));
  EXPECT_EQ(why, "cudal1-eval: cannot hold a context on GPU 0: no CUDA driver");
}

TEST(ContextHolder, SilenceIsKilledAtTheWait) {
  Scratch s;
  ASSERT_FALSE(s.dir.empty());
  std::string exe = s.script("holder", "echo $$ > '" + s.dir + "/pid'\nexec sleep 60\n");
  std::string why;
  EXPECT_FALSE(ContextHolder::start(exe, 0, 60, 0.5, why));
  EXPECT_NE(why.find("said nothing within"), std::string::npos) << why;
  pid_t pid = 0;
  std::ifstream(s.dir + "/pid") >> pid;
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(alive(pid));
}

TEST(ContextHolder, AMissingExecutableIsItsReason) {
  std::string why;
  EXPECT_FALSE(ContextHolder::start("/nonexistent/cudal1-eval", 0, 60, 10, why));
  EXPECT_NE(why.find("cannot start /nonexistent/cudal1-eval"), std::string::npos) << why;
}
