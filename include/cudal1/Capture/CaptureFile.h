// The capture file: recorded inputs and outputs of real kernel launches.
// Byte layout in docs/formats/capture.md; versioned and checksummed.
#ifndef CUDAL1_CAPTURE_CAPTUREFILE_H
#define CUDAL1_CAPTURE_CAPTUREFILE_H

#include "cudal1/Eval/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cudal1 {

/// Version written by this build. Readers accept it and version 1, whose
/// only difference is the checksum (fnv1a64 instead of laneHash64): a
/// bundle carries the capture runtime it was emitted with.
constexpr uint32_t kCaptureVersion = 2;

/// One allocation that a pointer argument points into, with its contents
/// before the launch and after it.
struct CapturedAlloc {
  uint64_t originalBase = 0; ///< device address in the recorded process
  uint64_t size = 0;
  std::vector<uint8_t> before;
  std::vector<uint8_t> after;
};

/// A kernel argument: either the bytes of a scalar (or struct), or a pointer
/// re-expressed as (allocation index, byte offset).
struct CapturedArg {
  bool isPointer = false;
  std::vector<uint8_t> bytes; ///< scalars only
  uint32_t alloc = 0;         ///< pointers only: index into allocs
  uint64_t offset = 0;        ///< pointers only
};

struct CapturedLaunch {
  std::string kernelKey;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t sharedBytes = 0;
  std::vector<CapturedArg> args;
  std::vector<CapturedAlloc> allocs;
};

struct CaptureFile {
  std::vector<CapturedLaunch> launches;
};

/// FNV-1a, 64 bit: version 1's checksum (under 1 GB/s, a byte at a time).
uint64_t fnv1a64(const uint8_t *data, size_t size);
/// Version 2's checksum: FNV-1a's step over 8-byte little-endian words in
/// four independent lanes, each word step followed by a shift-xor, the tail
/// bytes into lane 0, the lanes folded with FNV-1a's step (docs/formats/
/// capture.md). About 5x faster: every replay worker checks its capture.
uint64_t laneHash64(const uint8_t *data, size_t size);

std::vector<uint8_t> serializeCapture(const CaptureFile &file);
/// Parses a whole file image; `name` appears in error messages.
Expected<CaptureFile> parseCapture(const std::vector<uint8_t> &image, const std::string &name);

Status writeCaptureFile(const std::string &path, const CaptureFile &file);
Expected<CaptureFile> readCaptureFile(const std::string &path);

/// Reads a whole file into memory.
Expected<std::vector<uint8_t>> readWholeFile(const std::string &path);
/// Writes to PATH.tmp.PID, flushes it to disk and renames it over PATH, so
/// readers see the old file or the complete new one, never a torn one.
Status writeFileAtomically(const std::string &path, const void *data, size_t size);

} // namespace cudal1

#endif
