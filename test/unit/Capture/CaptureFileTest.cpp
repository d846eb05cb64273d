// The capture format round-trips, and damaged files are rejected with a
// message that says what is wrong.
#include "cudal1/Capture/CaptureFile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>

using namespace cudal1;

namespace {
CaptureFile sample() {
  CaptureFile f;
  CapturedLaunch l;
  l.kernelKey = "stencil";
  l.grid[0] = 16384;
  l.block[0] = 256;
  l.sharedBytes = 128;
  CapturedAlloc a;
  a.originalBase = 0x7f0000000000ull;
  a.size = 16;
  for (int i = 0; i < 16; ++i) {
    a.before.push_back(uint8_t(i));
    a.after.push_back(uint8_t(100 + i));
  }
  l.allocs.push_back(a);
  CapturedArg p;
  p.isPointer = true;
  p.alloc = 0;
  p.offset = 4;
  l.args.push_back(p);
  CapturedArg s;
  s.bytes = {1, 0, 0, 0};
  l.args.push_back(s);
  f.launches.push_back(l);
  l.kernelKey = "other";
  f.launches.push_back(l);
  return f;
}
} // namespace

TEST(CaptureFile, RoundTrips) {
  std::vector<uint8_t> bytes = serializeCapture(sample());
  Expected<CaptureFile> f = parseCapture(bytes, "mem");
  ASSERT_TRUE(f.ok()) << f.error().message();
  ASSERT_EQ(f->launches.size(), 2u);
  const CapturedLaunch &l = f->launches[0];
  EXPECT_EQ(l.kernelKey, "stencil");
  EXPECT_EQ(l.grid[0], 16384u);
  EXPECT_EQ(l.block[0], 256u);
  EXPECT_EQ(l.sharedBytes, 128u);
  ASSERT_EQ(l.allocs.size(), 1u);
  EXPECT_EQ(l.allocs[0].originalBase, 0x7f0000000000ull);
  EXPECT_EQ(l.allocs[0].after[3], 103);
  ASSERT_EQ(l.args.size(), 2u);
  EXPECT_TRUE(l.args[0].isPointer);
  EXPECT_EQ(l.args[0].offset, 4u);
  EXPECT_EQ(l.args[1].bytes, (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(serializeCapture(*f), bytes);
}

TEST(CaptureFile, EveryTruncationIsRejected) {
  std::vector<uint8_t> bytes = serializeCapture(sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    Expected<CaptureFile> f = parseCapture(cut, "cut");
    ASSERT_FALSE(f.ok()) << "accepted a file cut to " << n << " bytes";
    EXPECT_NE(f.error().message().find("truncated"), std::string::npos) << f.error().message();
  }
}

TEST(CaptureFile, EveryFlippedPayloadByteIsRejected) {
  std::vector<uint8_t> bytes = serializeCapture(sample());
  for (size_t i = 32; i < bytes.size(); ++i) {
    std::vector<uint8_t> bad = bytes;
    bad[i] ^= 0x40;
    Expected<CaptureFile> f = parseCapture(bad, "bad");
    ASSERT_FALSE(f.ok()) << "accepted a flip at byte " << i;
    EXPECT_NE(f.error().message().find("checksum"), std::string::npos);
  }
}

TEST(CaptureFile, HeaderErrorsAreExplained) {
  std::vector<uint8_t> bytes = serializeCapture(sample());
  std::vector<uint8_t> magic = bytes;
  magic[0] = 'X';
  EXPECT_NE(parseCapture(magic, "m").error().message().find("bad magic"), std::string::npos);
  std::vector<uint8_t> version = bytes;
  version[8] = 9;
  EXPECT_NE(parseCapture(version, "v").error().message().find("version 9"), std::string::npos);
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_FALSE(parseCapture(longer, "l").ok());
}

TEST(CaptureFile, WritesAtomicallyAndReadsBack) {
  char dir[] = "/tmp/cudal1-capture-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/x.capture";
  ASSERT_TRUE(writeCaptureFile(path, sample()).ok());
  Expected<CaptureFile> f = readCaptureFile(path);
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ(f->launches.size(), 2u);
  EXPECT_NE(access((path + ".tmp." + std::to_string(getpid())).c_str(), F_OK), 0);
  Expected<CaptureFile> missing = readCaptureFile(std::string(dir) + "/none");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("cannot open"), std::string::npos);
  std::remove(path.c_str());
  rmdir(dir);
}

TEST(CaptureFile, Fnv1aKnownValues) {
  EXPECT_EQ(fnv1a64(nullptr, 0), 0xcbf29ce484222325ull);
  const uint8_t a = 'a';
  EXPECT_EQ(fnv1a64(&a, 1), 0xaf63dc4c8601ec8cull);
}

// Version 2's checksum: each lane and the tail count, a flipped bit or two
// swapped words anywhere change it, and it does not depend on alignment.
TEST(CaptureFile, LaneHashSeesEveryByteAndOrder) {
  std::vector<uint8_t> data(1000 + 64);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = uint8_t(i * 131 + 7);
  const uint8_t *p = data.data();
  uint64_t h = laneHash64(p, 1000);
  EXPECT_NE(h, laneHash64(p, 999));
  for (size_t at : {0u, 9u, 17u, 31u, 500u, 995u, 999u}) {
    std::vector<uint8_t> flipped(p, p + 1000);
    flipped[at] ^= 0x10;
    EXPECT_NE(laneHash64(flipped.data(), 1000), h) << at;
  }
  std::vector<uint8_t> swapped(p, p + 1000);
  std::swap_ranges(swapped.begin(), swapped.begin() + 8, swapped.begin() + 32);
  EXPECT_NE(laneHash64(swapped.data(), 1000), h);
  std::vector<uint8_t> shifted(1001);
  std::copy(p, p + 1000, shifted.begin() + 1);
  EXPECT_EQ(laneHash64(shifted.data() + 1, 1000), h);
}

// Files of version 1 (FNV-1a checksums, as bundles emitted before version 2
// carry in their capture runtime) still read; version 2 files checked with
// FNV-1a do not.
TEST(CaptureFile, VersionOneStillReads) {
  std::vector<uint8_t> image = serializeCapture(sample());
  uint32_t version = 0;
  std::memcpy(&version, image.data() + 8, 4);
  EXPECT_EQ(version, kCaptureVersion);
  Expected<CaptureFile> two = parseCapture(image, "v2");
  ASSERT_TRUE(two.ok()) << two.error().message();
  std::vector<uint8_t> one = image;
  version = 1;
  std::memcpy(one.data() + 8, &version, 4);
  Expected<CaptureFile> stale = parseCapture(one, "v1-with-v2-checksum");
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.error().message().find("checksum mismatch"), std::string::npos);
  uint64_t fnv = fnv1a64(one.data() + 32, one.size() - 32);
  std::memcpy(one.data() + 24, &fnv, 8);
  Expected<CaptureFile> v1 = parseCapture(one, "v1");
  ASSERT_TRUE(v1.ok()) << v1.error().message();
  EXPECT_EQ(serializeCapture(*v1), image);
  std::vector<uint8_t> three = image;
  version = 3;
  std::memcpy(three.data() + 8, &version, 4);
  Expected<CaptureFile> future = parseCapture(three, "v3");
  ASSERT_FALSE(future.ok());
  EXPECT_NE(future.error().message().find("version 3 is not supported"), std::string::npos);
}

// Found by test/fuzz/CaptureFuzz.cpp: an argument kind of 2 was read as a
// pointer and written back as 1. Only 0 and 1 are kinds.
TEST(CaptureFile, UnknownArgumentKindIsRejected) {
  CaptureFile one;
  one.launches.push_back(sample().launches[0]);
  one.launches[0].args.resize(1); // the pointer: kind byte last but 12 bytes
  std::vector<uint8_t> bytes = serializeCapture(one);
  size_t kindAt = bytes.size() - 13;
  ASSERT_EQ(bytes[kindAt], 1);
  bytes[kindAt] = 2;
  // Re-frame: payload size is unchanged, the checksum must be recomputed.
  uint64_t sum = laneHash64(bytes.data() + 32, bytes.size() - 32);
  std::memcpy(bytes.data() + 24, &sum, 8);
  Expected<CaptureFile> f = parseCapture(bytes, "mem");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message(), "mem: launch 0 argument 0 has kind 2 (0 bytes, 1 pointer)");
}
