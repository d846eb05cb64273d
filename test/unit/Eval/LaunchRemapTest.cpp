// The launch remap (cudal1/Eval/LaunchRemap.h): each step against the
// arithmetic the passes used before it existed (copied here as it was, on
// several shapes), its text's round trip, diagnostics for bad text, and the
// one-configuration rule for the captured launches.
#include "cudal1/Eval/LaunchRemap.h"
#include "cudal1/Capture/CaptureFile.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace cudal1;

namespace {

// The passes' remapLaunch bodies before the remap existed (git 1579fd2).
void oldLaunchConfig(const std::vector<unsigned> &dims, uint64_t grid[3], uint64_t block[3]) {
  uint64_t nb[3] = {1, 1, 1};
  for (size_t d = 0; d < dims.size(); ++d)
    nb[d] = dims[d];
  for (int d = 0; d < 3; ++d) {
    grid[d] = (grid[d] * block[d] + nb[d] - 1) / nb[d];
    block[d] = nb[d];
  }
}
void oldCoarsen(unsigned f, uint64_t grid[3], uint64_t[3]) { grid[0] = (grid[0] + f - 1) / f; }
void oldWarpRows(uint64_t lanes, uint64_t grid[3], uint64_t block[3]) {
  const unsigned kBlock = 256;
  uint64_t blocks = (grid[0] * block[0] * lanes + kBlock - 1) / kBlock;
  grid[0] = std::min<uint64_t>(blocks, 2147483647u);
  block[0] = kBlock;
  block[1] = block[2] = 1;
}
void oldStageShared(unsigned tile, unsigned rows, uint64_t grid[3], uint64_t block[3]) {
  for (int d = 0; d < 2; ++d)
    grid[d] = (grid[d] * block[d] + tile - 1) / tile;
  grid[2] *= block[2];
  block[0] = tile;
  block[1] = tile / rows;
  block[2] = 1;
}

struct Shape {
  uint64_t grid[3], block[3];
};
const Shape kShapes[] = {{{4096, 1, 1}, {256, 1, 1}},      {{1, 1, 1}, {1, 1, 1}},
                         {{7, 3, 1}, {32, 8, 1}},          {{1000, 1, 1}, {96, 1, 1}},
                         {{5, 7, 11}, {8, 4, 2}},          {{2147483647u, 1, 1}, {1024, 1, 1}},
                         {{65535, 65535, 1}, {16, 16, 1}}, {{33, 1, 2}, {1023, 1, 1}}};

/// Runs `remap` and `old` on the same shape; both must agree.
template <typename Old> void expectSame(const LaunchRemapStep &remap, Old old) {
  for (const Shape &s : kShapes) {
    Shape a = s, b = s;
    remap.apply(a.grid, a.block);
    old(b.grid, b.block);
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(a.grid[d], b.grid[d]) << remap.str() << " grid[" << d << "] of shape " << s.grid[0]
                                      << "x" << s.grid[1] << "x" << s.grid[2];
      EXPECT_EQ(a.block[d], b.block[d]) << remap.str() << " block[" << d << "]";
    }
  }
}

TEST(LaunchRemap, StepsDoWhatThePassesDid) {
  for (std::vector<unsigned> dims : std::vector<std::vector<unsigned>>{
           {128}, {96}, {1024}, {32, 8}, {16, 16}, {8, 8, 4}, {32, 4, 2}, {1}})
    expectSame(LaunchRemapStep::reshape(dims[0], dims.size() > 1 ? dims[1] : 1,
                                        dims.size() > 2 ? dims[2] : 1),
               [&](uint64_t g[3], uint64_t b[3]) { oldLaunchConfig(dims, g, b); });
  for (unsigned f : {1u, 2u, 3u, 4u, 8u, 1000u})
    expectSame(LaunchRemapStep::divideX(f),
               [&](uint64_t g[3], uint64_t b[3]) { oldCoarsen(f, g, b); });
  for (unsigned l : {1u, 2u, 8u, 16u, 32u})
    expectSame(LaunchRemapStep::lanes(l, 256),
               [&](uint64_t g[3], uint64_t b[3]) { oldWarpRows(l, g, b); });
  for (unsigned tile : {16u, 32u})
    for (unsigned rows : {1u, 2u, 4u})
      expectSame(LaunchRemapStep::tiles(tile, tile / rows),
                 [&](uint64_t g[3], uint64_t b[3]) { oldStageShared(tile, rows, g, b); });
}

// tile-shared's register blocking: blocks of T x T/rb over the same grid.
TEST(LaunchRemap, BlockKeepsTheGrid) {
  uint64_t g[3] = {64, 16, 1}, b[3] = {16, 16, 1};
  LaunchRemapStep::block(16, 8).apply(g, b);
  EXPECT_EQ(g[0], 64u);
  EXPECT_EQ(g[1], 16u);
  EXPECT_EQ(b[0], 16u);
  EXPECT_EQ(b[1], 8u);
  EXPECT_EQ(b[2], 1u);
}

TEST(LaunchRemap, StepsComposeInOrder) {
  LaunchRemap r{{LaunchRemapStep::reshape(32, 8), LaunchRemapStep::divideX(2)}};
  uint64_t g[3] = {4096, 1, 1}, b[3] = {256, 1, 1};
  r.apply(g, b);
  EXPECT_EQ(g[0], (4096u * 256u / 32u + 1) / 2);
  EXPECT_EQ(g[1], 1u);
  EXPECT_EQ(b[0], 32u);
  EXPECT_EQ(b[1], 8u);
}

TEST(LaunchRemap, TextRoundTrips) {
  LaunchRemap r{{LaunchRemapStep::reshape(128), LaunchRemapStep::reshape(32, 8),
                 LaunchRemapStep::reshape(8, 8, 4), LaunchRemapStep::divideX(4),
                 LaunchRemapStep::lanes(8, 256), LaunchRemapStep::tiles(32, 8),
                 LaunchRemapStep::block(16, 8)}};
  EXPECT_EQ(r.str(), "reshape(128);reshape(32x8);reshape(8x8x4);divide-x(4);lanes(8,256);tiles(32,"
                     "8);block(16x8)");
  Expected<LaunchRemap> back = parseLaunchRemap(r.str());
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, r);
  EXPECT_EQ(back->str(), r.str());
  // The canonical printer leaves trailing 1s out.
  Expected<LaunchRemap> ones = parseLaunchRemap("reshape(64x1x1);reshape(32x2x1)");
  ASSERT_TRUE(ones.ok()) << ones.error().message();
  EXPECT_EQ(ones->str(), "reshape(64);reshape(32x2)");
  Expected<LaunchRemap> none = parseLaunchRemap("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(none->str(), "");
}

TEST(LaunchRemap, BadTextIsDiagnosed) {
  auto error = [](const std::string &text) {
    Expected<LaunchRemap> r = parseLaunchRemap(text);
    return r.ok() ? std::string("(parsed: ") + r->str() + ")" : r.error().message();
  };
  EXPECT_NE(error("reshape").find("'reshape' is not NAME(ARGS)"), std::string::npos)
      << error("reshape");
  EXPECT_NE(error("spin(3)").find("unknown step 'spin'"), std::string::npos);
  EXPECT_NE(error("reshape(0)").find("'0' is not a number from 1 to 1024"), std::string::npos);
  EXPECT_NE(error("reshape(2048)").find("'2048' is not a number from 1 to 1024"),
            std::string::npos);
  EXPECT_NE(error("reshape(64x64)").find("more than 1024 threads"), std::string::npos);
  EXPECT_NE(error("reshape(2x2x2x2)").find("takes 1 to 3 numbers"), std::string::npos);
  EXPECT_NE(error("divide-x(2,3)").find("takes one number"), std::string::npos);
  EXPECT_NE(error("divide-x(-1)").find("'-1' is not a number"), std::string::npos);
  EXPECT_NE(error("lanes(64,256)").find("more than 32 lanes"), std::string::npos);
  EXPECT_NE(error("lanes(8)").find("takes 2 numbers"), std::string::npos);
  EXPECT_NE(error("tiles(32,64)").find("more than 1024 threads"), std::string::npos);
  EXPECT_NE(error("reshape(128);").find("'' is not NAME(ARGS)"), std::string::npos);
  EXPECT_NE(error("reshape(128) ").find("is not NAME(ARGS)"), std::string::npos);
  EXPECT_NE(error("divide-x(4)x").find("is not NAME(ARGS)"), std::string::npos);
}

CapturedLaunch launch(uint32_t gx, uint32_t bx, uint32_t shared = 0) {
  CapturedLaunch l;
  l.grid[0] = gx;
  l.block[0] = bx;
  l.sharedBytes = shared;
  return l;
}

TEST(LaunchRemap, EveryCapturedLaunchIsRemappedOnItsOwn) {
  LaunchRemap reshape{{LaunchRemapStep::reshape(128)}};
  // Launches of different shapes each remap (a kernel called with several
  // sizes keeps one variant line): 16 x 256 -> 32 x 128, 8 x 256 -> 16 x 128.
  EXPECT_TRUE(reshape.checkLaunches({launch(16, 256), launch(8, 256), launch(3, 100)}).ok());
  Expected<LaunchOverride> a = reshape.overrideFor(launch(8, 256).grid, launch(8, 256).block);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->grid[0], 16u);
  EXPECT_EQ(a->block[0], 128u);
  // One launch the remap cannot express names its index: 2^31 threads in
  // blocks of one are 2^31 blocks, beyond CUDA's grid.
  LaunchRemap single{{LaunchRemapStep::reshape(1)}};
  Status bad = single.checkLaunches({launch(16, 256), launch(1u << 21, 1024)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("captured launch 1: launch remap reshape(1) gives"),
            std::string::npos)
      << bad.message();
  // No remap: nothing to check, whatever the launches.
  EXPECT_TRUE(LaunchRemap{}.checkLaunches({launch(16, 256), launch(8, 32)}).ok());
}

TEST(LaunchRemap, ResultsBeyondCudaLimitsAreRefused) {
  // 2^21 blocks of 1024 threads in blocks of one thread: 2^31 blocks along
  // x, one more than CUDA allows.
  uint32_t g[3] = {1u << 21, 1, 1}, b[3] = {1024, 1, 1};
  Expected<LaunchOverride> x = LaunchRemap{{LaunchRemapStep::reshape(1)}}.overrideFor(g, b);
  ASSERT_FALSE(x.ok());
  EXPECT_NE(x.error().message().find("launch remap reshape(1) gives 2147483648x1x1 blocks of "
                                     "1x1x1: beyond CUDA's grid limits"),
            std::string::npos)
      << x.error().message();
  // Along y the limit is 65535.
  uint32_t g2[3] = {1, 65535, 1}, b2[3] = {1, 2, 1};
  EXPECT_FALSE(LaunchRemap{{LaunchRemapStep::reshape(1)}}.overrideFor(g2, b2).ok());
  EXPECT_TRUE(LaunchRemap{{LaunchRemapStep::reshape(1, 2)}}.overrideFor(g2, b2).ok());
  // A step built in code (not parsed) with too many threads is refused too.
  Expected<LaunchOverride> big = LaunchRemap{{LaunchRemapStep::reshape(64, 64)}}.overrideFor(g, b);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message().find("more than 1024 threads per block"), std::string::npos);
  Expected<LaunchOverride> ok = LaunchRemap{{LaunchRemapStep::divideX(4)}}.overrideFor(g, b);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(ok->grid[0], (1u << 21) / 4);
  EXPECT_EQ(ok->block[0], 1024u);
}

} // namespace
