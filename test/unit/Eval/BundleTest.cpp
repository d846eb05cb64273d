// Bundle manifests round-trip; bad ones are rejected with file:line.
#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/LaunchRemap.h"

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

using namespace cudal1;

namespace {
const char *kGood = R"(cudal1-bundle 1
# comment
kernel-key stencil
entry stencil
args f32* f32* f32*w i32 i32
flags -O3 "-DNAME=a b" -std=c++17
reduction-length 257
capture demo.capture
original original.cu
reference reference.cu entry=stencil_ref
variant fast fast.cu
variant wide original.cu block=128 grid=32768,1,1 shmem=64 fast-math=1
variant rdc side.cu compiler=nvcc flags=-rdc=true,-lineinfo
variant rows rows.cu remap=reshape(32x8);divide-x(2)
)";

std::string errorOf(const std::string &text) {
  Expected<Bundle> b = parseManifest(text, "/b", "m.txt");
  return b.ok() ? "" : b.error().message();
}
} // namespace

TEST(Bundle, ParsesAndRoundTrips) {
  Expected<Bundle> b = parseManifest(kGood, "/b", "m.txt");
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(b->kernelKey, "stencil");
  ASSERT_EQ(b->args.size(), 5u);
  EXPECT_TRUE(b->args[2].writeOnly);
  ASSERT_EQ(b->flags.size(), 3u);
  EXPECT_EQ(b->flags[1], "-DNAME=a b");
  EXPECT_EQ(b->tolerance.reductionLength, 257);
  EXPECT_TRUE(b->hasReference);
  EXPECT_EQ(b->reference.entry, "stencil_ref");
  ASSERT_EQ(b->variants.size(), 4u);
  EXPECT_EQ(b->variants[0].entry, "stencil");
  EXPECT_EQ(LaunchRemap{b->variants[3].remap}.str(), "reshape(32x8);divide-x(2)");
  const VariantSpec &w = b->variants[1];
  EXPECT_TRUE(w.launch.hasGrid && w.launch.hasBlock && w.launch.hasShared);
  EXPECT_EQ(w.launch.grid[0], 32768u);
  EXPECT_EQ(w.launch.block[0], 128u);
  EXPECT_EQ(w.launch.block[1], 1u);
  EXPECT_TRUE(w.fastMath);
  EXPECT_EQ(b->variants[2].extraFlags.size(), 2u);
  EXPECT_EQ(b->variants[2].compiler, "nvcc");

  Expected<Bundle> again = parseManifest(formatManifest(*b), "/b", "again");
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(formatManifest(*again), formatManifest(*b));
}

// Found by fuzz/manifest: words holding a carriage return or a space (a
// template entry) must survive formatting.
TEST(Bundle, QuotedWordsRoundTrip) {
  Expected<Bundle> b = parseManifest("cudal1-bundle 1\nkernel-key \"k\r1\"\nentry \"\"\n"
                                     "args f32*\ncapture c\noriginal o.cu \"entry=f<int, 2>\"\n"
                                     "variant v o.cu \"entry=a\rb\"\n",
                                     "/b", "m.txt");
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(b->kernelKey, "k\r1");
  EXPECT_EQ(b->original.entry, "f<int, 2>");
  EXPECT_EQ(b->variants[0].entry, "a\rb");
  Expected<Bundle> again = parseManifest(formatManifest(*b), "/b", "again");
  ASSERT_TRUE(again.ok()) << again.error().message() << "\n" << formatManifest(*b);
  EXPECT_EQ(again->kernelKey, b->kernelKey);
  EXPECT_EQ(again->entry, b->entry);
  EXPECT_EQ(again->original.entry, "f<int, 2>");
  EXPECT_EQ(again->variants[0].entry, "a\rb");
  EXPECT_EQ(formatManifest(*again), formatManifest(*b));
}

TEST(Bundle, RejectsBadManifests) {
  EXPECT_NE(errorOf("cudal1-bundle 2\n").find("version 2"), std::string::npos);
  EXPECT_NE(errorOf("hello\n").find("not a cudal1 bundle"), std::string::npos);
  EXPECT_NE(errorOf("").find("empty"), std::string::npos);
  std::string base = "cudal1-bundle 1\nkernel-key k\nargs i32\ncapture c\n"
                     "original o.cu\n";
  EXPECT_EQ(errorOf(base), "");
  EXPECT_NE(errorOf(base + "frobnicate 3\n").find("m.txt:6: unknown directive"), std::string::npos);
  EXPECT_NE(errorOf(base + "variant a ../x.cu\n").find("relative path"), std::string::npos);
  EXPECT_NE(errorOf(base + "variant a /etc/x.cu\n").find("relative path"), std::string::npos);
  EXPECT_NE(errorOf(base + "variant a a.cu\nvariant a b.cu\n").find("twice"), std::string::npos);
  EXPECT_NE(errorOf(base + "variant original a.cu\n").find("twice"), std::string::npos);
  EXPECT_NE(errorOf(base + "variant a a.cu grid=0\n").find("bad grid"), std::string::npos);
  EXPECT_NE(errorOf(base + "variant a a.cu remap=reshape(0)\n").find("bad remap"),
            std::string::npos);
  EXPECT_NE(
      errorOf(base + "variant a a.cu remap=divide-x(2) block=64\n").find("exclude each other"),
      std::string::npos);
  EXPECT_NE(errorOf(base + "variant a a.cu color=red\n").find("unknown key"), std::string::npos);
  EXPECT_NE(
      errorOf("cudal1-bundle 1\nkernel-key k\nargs i32\ncapture c\n").find("missing 'original'"),
      std::string::npos);
  EXPECT_NE(
      errorOf("cudal1-bundle 1\nkernel-key k\ncapture c\noriginal o.cu\n").find("missing 'args'"),
      std::string::npos);
  EXPECT_NE(errorOf(base + "args f128\n").find("unknown argument type"), std::string::npos);
}

// Issue 19: every number is read whole and range-checked, never thrown on.
TEST(Bundle, HugeAndMalformedNumbersAreErrors) {
  std::string base = "cudal1-bundle 1\nkernel-key k\nargs i32\ncapture c\n"
                     "original o.cu\n";
  for (const char *bad :
       {"variant a a.cu grid=99999999999", "variant a a.cu block=-1", "variant a a.cu block= 32",
        "variant a a.cu shmem=4294967296", "variant a a.cu grid=1,2,3,4",
        "variant a a.cu grid=0x10", "reduction-length 99999999999", "reduction-length -3",
        "reduction-length 4294967295", "tolerance k=inf", "tolerance rel32=nan",
        "tolerance k=1e999", "args b99999999999", "args b-1", "args b0", "args b4097"})
    EXPECT_NE(errorOf(base + bad + "\n"), "") << bad;
  EXPECT_EQ(errorOf(base + "variant a a.cu grid=4294967295 shmem=4294967295 block=1024\n"), "");
  EXPECT_EQ(errorOf(base + "reduction-length 2147483647\nargs b4096\n"), "");
}

TEST(Bundle, ReadBundleChecksFiles) {
  char dir[] = "/tmp/cudal1-bundle-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string d = dir;
  EXPECT_NE(readBundle(d).error().message().find("not a bundle"), std::string::npos);
  std::ofstream(d + "/manifest.txt")
      << "cudal1-bundle 1\nkernel-key k\nargs i32\ncapture c.capture\n"
         "original o.cu\n";
  EXPECT_NE(readBundle(d).error().message().find("'c.capture' does not exist"), std::string::npos);
  std::ofstream(d + "/c.capture") << "x";
  std::ofstream(d + "/o.cu") << "x";
  Expected<Bundle> b = readBundle(d);
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(b->path("o.cu"), d + "/o.cu");
  unlink((d + "/manifest.txt").c_str());
  unlink((d + "/c.capture").c_str());
  unlink((d + "/o.cu").c_str());
  rmdir(dir);
}
