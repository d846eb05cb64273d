// Parses of one file share its precompiled preamble (lib/Frontend/SharedPreamble.h)
// and see what a full parse sees: the same kernels, launches and locations,
// a header's error, and a header changed between two parses.
#include "../../../lib/Frontend/SharedPreamble.h"
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Frontend/ParsedUnit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <future>
#include <gtest/gtest.h>

using namespace cudal1;

namespace {

/// A directory of its own for a test's files, removed after it.
struct TempDir {
  TempDir() {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("cudal1-preamble", p));
    path = std::string(p);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name, const std::string &text) const {
    std::string f = path + "/" + name;
    std::error_code ec;
    llvm::raw_fd_ostream os(f, ec);
    EXPECT_FALSE(ec);
    os << text;
    return f;
  }
  std::string path;
};

/// Everything the rest of cudal1 reads of a parse, as text.
std::string describe(const ParsedUnit &u) {
  std::string s;
  llvm::raw_string_ostream os(s);
  const ProgramModel &m = u.model();
  for (const Kernel &k : m.kernels) {
    os << "kernel " << k.name << " " << k.pos.str() << " key " << k.key << "\n";
    for (const MemAccess &a : k.accesses)
      os << "  " << a.param << "[" << a.normalized << "] " << a.pos.str() << "\n";
  }
  for (const LaunchSite &l : m.launches)
    os << "launch " << l.kernel << " " << l.pos.str() << " <<<" << l.grid << ", " << l.block
       << ">>>\n";
  return s;
}

std::unique_ptr<ParsedUnit> parse(const std::string &file, const std::string &code) {
  QuietParses quiet;
  auto u = ParsedUnit::parse(file, code, analysisArgs({}, nullptr));
  if (!u) {
    llvm::consumeError(u.takeError());
    return nullptr;
  }
  return std::move(*u);
}

const char *kHeader = "#pragma once\n#define WIDTH 4\n";
std::string program(const std::string &kernelBody) {
  return "#include <cstdio>\n#include \"width.h\"\n\n"
         "__global__ void scale(float *a, int n) {\n" +
         kernelBody +
         "}\n"
         "int main() {\n  float *a = nullptr;\n  scale<<<1, 32>>>(a, 32);\n"
         "  printf(\"%d\\n\", WIDTH);\n  return 0;\n}\n";
}

TEST(SharedPreambleTest, ParsesAfterTheFirstReuseItAndSeeWhatAFullParseSees) {
  TempDir dir;
  dir.file("width.h", kHeader);
  std::string file = dir.path + "/prog.cu";
  std::string first = program("  int i = threadIdx.x;\n  if (i < n) a[i] *= WIDTH;\n");
  std::string second = program("  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "  if (i < n) a[i] = a[i] * 2 + WIDTH;\n");
  SharedPreambleStats before = sharedPreambleStats();
  auto once = parse(file, first);
  ASSERT_TRUE(once);
  SharedPreambleStats afterOne = sharedPreambleStats();
  EXPECT_EQ(afterOne.built, before.built) << "a file parsed once builds no preamble";
  EXPECT_EQ(afterOne.reused, before.reused);
  auto a = parse(file, first);
  auto b = parse(file, second);
  ASSERT_TRUE(a && b);
  SharedPreambleStats after = sharedPreambleStats();
  EXPECT_EQ(after.built - before.built, 1u) << "the second parse builds it, the third reuses it";
  EXPECT_EQ(after.reused - before.reused, 2u);
  EXPECT_EQ(describe(*once), describe(*a));

  setenv("CUDAL1_PREAMBLE", "0", 1);
  auto fullA = parse(file, first);
  auto fullB = parse(file, second);
  unsetenv("CUDAL1_PREAMBLE");
  ASSERT_TRUE(fullA && fullB);
  EXPECT_EQ(sharedPreambleStats().reused, after.reused) << "CUDAL1_PREAMBLE=0 parses in full";
  EXPECT_EQ(describe(*a), describe(*fullA));
  EXPECT_EQ(describe(*b), describe(*fullB));
  EXPECT_NE(describe(*a).find("prog.cu:4:"), std::string::npos) << describe(*a);
}

// The tuner derives a round's variants in threads: parses of one file at
// once share one preamble, built once, and each sees its own code.
TEST(SharedPreambleTest, ParsesInThreadsShareOnePreamble) {
  TempDir dir;
  dir.file("width.h", kHeader);
  std::string file = dir.path + "/prog.cu";
  auto body = [](int k) {
    return program("  int i = threadIdx.x;\n  if (i < n) a[i + " + std::to_string(k) +
                   "] = WIDTH;\n");
  };
  SharedPreambleStats before = sharedPreambleStats();
  constexpr int kThreads = 6;
  std::vector<std::future<std::string>> parses;
  for (int k = 0; k < kThreads; ++k)
    parses.push_back(std::async(std::launch::async, [&, k] {
      auto u = parse(file, body(k));
      return u ? describe(*u) : std::string("failed");
    }));
  std::vector<std::string> got;
  for (auto &p : parses)
    got.push_back(p.get());
  SharedPreambleStats after = sharedPreambleStats();
  EXPECT_LE(after.built - before.built, 1u);
  setenv("CUDAL1_PREAMBLE", "0", 1);
  for (int k = 0; k < kThreads; ++k) {
    auto full = parse(file, body(k));
    ASSERT_TRUE(full);
    EXPECT_EQ(got[k], describe(*full)) << "thread " << k;
  }
  unsetenv("CUDAL1_PREAMBLE");
}

TEST(SharedPreambleTest, AnErrorInAnIncludedHeaderFailsTheParse) {
  TempDir dir;
  dir.file("width.h", "#pragma once\n#define WIDTH 4\nint broken(;\n");
  std::string file = dir.path + "/prog.cu";
  EXPECT_FALSE(parse(file, program("  a[threadIdx.x] = WIDTH;\n")));
}

TEST(SharedPreambleTest, AHeaderChangedBetweenParsesIsReadAgain) {
  TempDir dir;
  dir.file("width.h", "#pragma once\n__device__ int helperA() { return 1; }\n");
  std::string file = dir.path + "/prog.cu";
  auto code = [](const char *helper) {
    return std::string("#include \"width.h\"\n__global__ void k(int *a) { a[threadIdx.x] = ") +
           helper + "(); }\nint main() { k<<<1, 1>>>(nullptr); return 0; }\n";
  };
  ASSERT_TRUE(parse(file, code("helperA")));
  ASSERT_TRUE(parse(file, code("helperA"))); // the preamble is built
  // A longer header: its size changes, which the preamble's check sees
  // whatever the file system's time resolution.
  dir.file("width.h", "#pragma once\n__device__ int helperBB() { return 2; }\n");
  EXPECT_TRUE(parse(file, code("helperBB"))) << "the stale preamble was used";
  EXPECT_FALSE(parse(file, code("helperA"))) << "helperA is gone from the header";
}

} // namespace
