// Child processes: exit codes, signals, output and the time limit.
#include "cudal1/Eval/Process.h"
#include "cudal1/Eval/CaptureBuild.h"

#include <gtest/gtest.h>

using namespace cudal1;

TEST(Process, ExitCodeAndOutput) {
  ProcessResult r = runProcess({"/bin/sh", "-c", "echo hi; echo err >&2; exit 3"}, 10);
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_NE(r.output.find("hi"), std::string::npos);
  EXPECT_NE(r.output.find("err"), std::string::npos);
}

TEST(Process, SignalIsReported) {
  ProcessResult r = runProcess({"/bin/sh", "-c", "kill -SEGV $$"}, 10);
  EXPECT_TRUE(r.signaled);
  EXPECT_EQ(r.signal, 11);
  EXPECT_NE(r.describe().find("signal 11"), std::string::npos);
}

TEST(Process, HangIsKilledAtTheLimit) {
  ProcessResult r = runProcess({"/bin/sh", "-c", "sleep 30 & sleep 30"}, 0.5);
  EXPECT_TRUE(r.timedOut);
  EXPECT_LT(r.seconds, 5.0);
}

TEST(Process, EnvironmentAndPathLookup) {
  ProcessResult r = runProcess({"sh", "-c", "echo $CUDAL1_X"}, 10, {"CUDAL1_X=42"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.output, "42\n");
  ProcessResult missing = runProcess({"/nonexistent/binary"}, 10);
  EXPECT_EQ(missing.exitCode, 127);
}

// Command words with placeholders (lib/Eval/CaptureBuild.cpp).
TEST(Placeholders, EveryOccurrenceOnceAndNoOther) {
  EXPECT_EQ(substitutePlaceholders({"nvcc", "{src}", "-o", "{exe}", "-DDIR={bundle}/{bundle}"},
                                   {{"{src}", "a.cu"}, {"{exe}", "a"}, {"{bundle}", "/b"}}),
            (std::vector<std::string>{"nvcc", "a.cu", "-o", "a", "-DDIR=/b//b"}));
  // A value holding its own placeholder is not expanded again.
  EXPECT_EQ(substitutePlaceholders({"{exe}"}, {{"{exe}", "x{exe}"}}),
            (std::vector<std::string>{"x{exe}"}));
}

TEST(Placeholders, CompilerCommands) {
  EXPECT_TRUE(isCompilerCommand({"/usr/local/cuda/bin/nvcc", "{src}"}));
  EXPECT_TRUE(isCompilerCommand({"clang++-19", "{src}"}));
  EXPECT_TRUE(isCompilerCommand({"g++"}));
  EXPECT_FALSE(isCompilerCommand({"make", "app"}));
  EXPECT_FALSE(isCompilerCommand({"sh", "-c", "nvcc {src}"}));
  EXPECT_FALSE(isCompilerCommand({}));
}

// A build command that is not a compiler's gets the runtime's sources.
TEST(CaptureRuntimeBuild, AScriptGetsTheSources) {
  CaptureRuntimeBuild b({"sh", "build.sh", "{src}", "{exe}"}, "/tree", "/objs", "/bundle", 10);
  EXPECT_EQ(b.linkWords(),
            (std::vector<std::string>{"/tree/lib/Capture/CaptureRuntime.cpp",
                                      "/tree/lib/Capture/CaptureFile.cpp", "-I/tree/include"}));
}
