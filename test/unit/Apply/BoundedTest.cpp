// runBounded: the child process the plugin derives in. Its answer comes
// back whole; a crash, an abort, an exception or a hang in it is an error
// of the right kind, and the caller goes on.
#include "Bounded.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <thread>

using namespace cudal1;

namespace {

/// The kind of failure, or -1 for a result.
int kindOf(llvm::Expected<std::string> r, std::string *message = nullptr) {
  if (r)
    return -1;
  int kind = -2;
  llvm::handleAllErrors(r.takeError(), [&](const BoundedRunError &e) {
    kind = int(e.kind);
    if (message)
      *message = e.message;
  });
  return kind;
}

TEST(Bounded, ResultComesBackWhole) {
  std::string big(3 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4099)
    big[i] = char(i);
  llvm::Expected<std::string> r = runBounded([&] { return big; }, 10000);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(*r, big);
  llvm::Expected<std::string> empty = runBounded([] { return std::string(); }, 10000);
  ASSERT_TRUE(bool(empty));
  EXPECT_EQ(*empty, "");
}

TEST(Bounded, CrashAbortAndExceptionAreErrors) {
  std::string msg;
  EXPECT_EQ(kindOf(runBounded(
                       []() -> std::string {
                         std::raise(SIGSEGV);
                         return "x";
                       },
                       10000),
                   &msg),
            int(BoundedFailure::Crashed));
  EXPECT_NE(msg.find("signal 11"), std::string::npos) << msg;
  EXPECT_EQ(kindOf(runBounded([]() -> std::string { std::abort(); }, 10000)),
            int(BoundedFailure::Crashed));
  EXPECT_EQ(
      kindOf(runBounded([]() -> std::string { throw std::out_of_range("stoi"); }, 10000), &msg),
      int(BoundedFailure::Threw));
  EXPECT_NE(msg.find("stoi"), std::string::npos) << msg;
  // The caller is unharmed.
  llvm::Expected<std::string> r = runBounded([] { return std::string("after"); }, 10000);
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(*r, "after");
}

TEST(Bounded, HangIsKilledAtTheBudget) {
  auto start = std::chrono::steady_clock::now();
  std::string msg;
  EXPECT_EQ(kindOf(runBounded(
                       []() -> std::string {
                         std::this_thread::sleep_for(std::chrono::seconds(30));
                         return "late";
                       },
                       200),
                   &msg),
            int(BoundedFailure::TimedOut));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_NE(msg.find("budget of 200 ms"), std::string::npos) << msg;
}

} // namespace
