// libFuzzer target: the capture-file reader (parseCapture) on any bytes, and
// on the same bytes as the payload of a well-formed header (right size and
// checksum), so that the fuzzer reaches the payload parser. A capture that
// parses must serialize back to the same bytes.
#include "cudal1/Capture/CaptureFile.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace cudal1;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> raw(data, data + size);
  (void)parseCapture(raw, "raw");

  // The header of docs/formats/capture.md: magic, version, flags, payload
  // size, the payload's laneHash64 (version 2).
  std::vector<uint8_t> image = {'C', 'U', 'D', 'A', 'L', '1', 'C', 'P'};
  auto put = [&](const void *p, size_t n) {
    const uint8_t *b = static_cast<const uint8_t *>(p);
    image.insert(image.end(), b, b + n);
  };
  uint32_t version = kCaptureVersion, flags = 0;
  uint64_t payloadSize = size, checksum = laneHash64(data, size);
  put(&version, 4);
  put(&flags, 4);
  put(&payloadSize, 8);
  put(&checksum, 8);
  put(data, size);
  Expected<CaptureFile> c = parseCapture(image, "framed");
  if (c.ok() && serializeCapture(*c) != image) {
    std::fprintf(stderr, "capture fuzz: a parsed capture serializes differently\n");
    std::abort();
  }
  return 0;
}
