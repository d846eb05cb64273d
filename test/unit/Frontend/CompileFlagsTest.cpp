// nvcc → clang flag translation.
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Frontend/Frontend.h"
#include "cudal1/Frontend/ParsedUnit.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace cudal1;

namespace {

bool has(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(CompileFlagsTest, TranslatesNvccSpellings) {
  TranslatedFlags t = translateCompileFlags(
      {"-x", "cu", "-arch=sm_90", "-O3", "-DN=4", "-Iinc", "--use_fast_math", "-rdc=true"});
  EXPECT_TRUE(has(t.args, "cuda"));
  EXPECT_TRUE(has(t.args, "--cuda-gpu-arch=sm_90"));
  EXPECT_TRUE(has(t.args, "-O3"));
  EXPECT_TRUE(has(t.args, "-DN=4"));
  EXPECT_TRUE(has(t.args, "-Iinc"));
  EXPECT_TRUE(has(t.args, "-ffast-math"));
  EXPECT_TRUE(has(t.args, "-fgpu-rdc"));
  EXPECT_FALSE(has(t.args, "cu"));
  EXPECT_GE(t.notes.size(), 4u);
}

TEST(CompileFlagsTest, GencodeFormsGiveOneArchEach) {
  TranslatedFlags t =
      translateCompileFlags({"-gencode", "arch=compute_80,code=sm_80",
                             "--generate-code=arch=compute_90,code=[compute_90,sm_90]",
                             "-gencode=arch=compute_90,code=sm_90"});
  EXPECT_EQ(std::count(t.args.begin(), t.args.end(), "--cuda-gpu-arch=sm_80"), 1);
  EXPECT_EQ(std::count(t.args.begin(), t.args.end(), "--cuda-gpu-arch=sm_90"), 1);
}

TEST(CompileFlagsTest, DropsNvccOnlyFlagsWithTheirValues) {
  TranslatedFlags t = translateCompileFlags({"-lineinfo", "-ccbin", "g++-12", "-Xptxas", "-v",
                                             "--expt-extended-lambda", "-o", "k.o", "-c"});
  EXPECT_TRUE(t.args.empty()) << t.args.front();
  EXPECT_TRUE(std::any_of(t.notes.begin(), t.notes.end(), [](const std::string &n) {
    return n.find("-ccbin g++-12") != std::string::npos;
  }));
}

TEST(CompileFlagsTest, HostCompilerOptionsPassThrough) {
  TranslatedFlags t = translateCompileFlags({"-Xcompiler", "-fPIC,-Wall", "-Xcompiler=-O2"});
  EXPECT_TRUE(has(t.args, "-fPIC"));
  EXPECT_TRUE(has(t.args, "-Wall"));
  EXPECT_TRUE(has(t.args, "-O2"));
}

TEST(CompileFlagsTest, AnalysisArgsAddLanguageArchAndToolchain) {
  std::vector<std::string> notes;
  std::vector<std::string> a = analysisArgs({"-DX=1"}, &notes);
  EXPECT_TRUE(has(a, "cuda"));
  EXPECT_TRUE(has(a, "--cuda-gpu-arch=sm_90"));
  EXPECT_TRUE(has(a, "--cuda-host-only"));
  EXPECT_TRUE(std::any_of(a.begin(), a.end(),
                          [](const std::string &s) { return s.rfind("--cuda-path=", 0) == 0; }));
  // A user's own architecture wins.
  std::vector<std::string> b = analysisArgs({"--cuda-gpu-arch=sm_80"}, nullptr);
  EXPECT_FALSE(has(b, "--cuda-gpu-arch=sm_90"));
}

TEST(CompileFlagsTest, BuildFlagsKeepPreprocessorFlagsWithAbsolutePaths) {
  std::vector<std::string> args = analysisArgs(
      {"-I", "inc", "-Isub/../other", "-DX=1", "-D", "Y", "-UZ", "-isystem", "sys", "-iquote",
       "/abs/q", "-include", "missing-pre.h", "-std=c++17", "-O2", "-Wall", "-fgpu-rdc"},
      nullptr);
  std::vector<std::string> f = buildFlagsOf(args, "/work/dir");
  std::vector<std::string> want = {
      "-I/work/dir/inc", "-I/work/dir/other", "-DX=1",    "-DY",           "-UZ",       "-isystem",
      "/work/dir/sys",   "-I/abs/q",          "-include", "missing-pre.h", "-std=c++17"};
  EXPECT_EQ(f, want);
  // None of cudal1's own toolchain flags (the stub include directory, the
  // CUDA path, the resource directory) leak into a build command.
  for (const std::string &t : cudaToolchainArgs())
    if (t != "-isystem")
      EXPECT_FALSE(has(f, t)) << t;
}

TEST(CompileFlagsTest, CheckClangArgsRefusesWhatTheDriverRejects) {
  llvm::SmallString<128> file;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("check-args", "cu", file));
  auto cleanup = llvm::make_scope_exit([&] { llvm::sys::fs::remove(file); });
  QuietParses quiet;
  std::string f(file);
  EXPECT_FALSE(llvm::errorToBool(checkClangArgs(f, analysisArgs({"-DX=1", "-Iinc"}, nullptr))));
  for (std::vector<std::string> bad :
       {std::vector<std::string>{"--frobnicate"}, std::vector<std::string>{"-std=c++99x"}}) {
    llvm::Error e = checkClangArgs(f, analysisArgs(bad, nullptr));
    ASSERT_TRUE(bool(e)) << bad[0];
    EXPECT_NE(llvm::toString(std::move(e)).find("clang rejected the arguments"), std::string::npos);
  }
}

} // namespace
