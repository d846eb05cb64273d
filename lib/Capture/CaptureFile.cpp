// Reading and writing capture files (docs/formats/capture.md). No CUDA here:
// the evaluator and the CPU tests use the same code as the runtime.
#include "cudal1/Capture/CaptureFile.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cudal1 {
namespace {

const char kMagic[8] = {'C', 'U', 'D', 'A', 'L', '1', 'C', 'P'};
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 8;
// Bounds that a sane capture never exceeds; they stop a corrupted length
// field from asking for terabytes before the checksum is even looked at.
constexpr uint32_t kMaxArgs = 4096;
constexpr uint32_t kMaxStringLength = 1 << 16;

class Writer {
public:
  std::vector<uint8_t> bytes;
  void raw(const void *p, size_t n) {
    const uint8_t *b = static_cast<const uint8_t *>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  void u8(uint8_t v) { raw(&v, 1); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void str(const std::string &s) {
    u32(uint32_t(s.size()));
    raw(s.data(), s.size());
  }
  void blob(const std::vector<uint8_t> &b) {
    u64(b.size());
    raw(b.data(), b.size());
  }
};

class Reader {
public:
  Reader(const uint8_t *p, size_t n, std::string name) : data(p), size(n), name(std::move(name)) {}
  bool failed() const { return !status.ok(); }
  Status status;

  bool need(size_t n, const char *what) {
    if (failed())
      return false;
    if (n > size - pos) {
      status = makeError(name, ": truncated: ", what, " needs ", n, " bytes at offset ", pos,
                         " but only ", size - pos, " remain");
      return false;
    }
    return true;
  }
  void raw(void *out, size_t n, const char *what) {
    if (!need(n, what))
      return;
    std::memcpy(out, data + pos, n);
    pos += n;
  }
  uint8_t u8(const char *what) {
    uint8_t v = 0;
    raw(&v, 1, what);
    return v;
  }
  uint32_t u32(const char *what) {
    uint32_t v = 0;
    raw(&v, 4, what);
    return v;
  }
  uint64_t u64(const char *what) {
    uint64_t v = 0;
    raw(&v, 8, what);
    return v;
  }
  std::string str(const char *what) {
    uint32_t n = u32(what);
    if (n > kMaxStringLength && !failed())
      status = makeError(name, ": ", what, " length ", n, " is implausible");
    if (!need(n, what))
      return {};
    std::string s(reinterpret_cast<const char *>(data + pos), n);
    pos += n;
    return s;
  }
  std::vector<uint8_t> blob(const char *what) {
    uint64_t n = u64(what);
    if (!need(n, what))
      return {};
    std::vector<uint8_t> b(data + pos, data + pos + n);
    pos += n;
    return b;
  }
  void fail(Status s) {
    if (!failed())
      status = std::move(s);
  }
  size_t remaining() const { return size - pos; }

private:
  const uint8_t *data;
  size_t size;
  size_t pos = 0;
  std::string name;
};

} // namespace

uint64_t fnv1a64(const uint8_t *data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t laneHash64(const uint8_t *data, size_t size) {
  constexpr uint64_t kPrime = 0x100000001b3ull;
  uint64_t lane[4] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull,
                      0xc2b2ae3d27d4eb4full};
  size_t i = 0;
  for (; i + 32 <= size; i += 32)
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, data + i + 8 * size_t(k), 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      w = __builtin_bswap64(w); // the words are little-endian on every host
#endif
      lane[k] = (lane[k] ^ w) * kPrime;
      lane[k] ^= lane[k] >> 29;
    }
  for (; i < size; ++i)
    lane[0] = (lane[0] ^ data[i]) * kPrime;
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t l : lane)
    h = (h ^ l) * kPrime;
  return h;
}

std::vector<uint8_t> serializeCapture(const CaptureFile &file) {
  Writer payload;
  payload.u32(uint32_t(file.launches.size()));
  for (const CapturedLaunch &l : file.launches) {
    payload.str(l.kernelKey);
    for (uint32_t v : l.grid)
      payload.u32(v);
    for (uint32_t v : l.block)
      payload.u32(v);
    payload.u32(l.sharedBytes);
    payload.u32(uint32_t(l.allocs.size()));
    for (const CapturedAlloc &a : l.allocs) {
      payload.u64(a.originalBase);
      payload.u64(a.size);
      payload.blob(a.before);
      payload.blob(a.after);
    }
    payload.u32(uint32_t(l.args.size()));
    for (const CapturedArg &a : l.args) {
      payload.u8(a.isPointer ? 1 : 0);
      if (a.isPointer) {
        payload.u32(a.alloc);
        payload.u64(a.offset);
      } else {
        payload.blob(a.bytes);
      }
    }
  }
  Writer out;
  out.raw(kMagic, 8);
  out.u32(kCaptureVersion);
  out.u32(0); // flags, reserved
  out.u64(payload.bytes.size());
  out.u64(laneHash64(payload.bytes.data(), payload.bytes.size()));
  out.bytes.insert(out.bytes.end(), payload.bytes.begin(), payload.bytes.end());
  return out.bytes;
}

Expected<CaptureFile> parseCapture(const std::vector<uint8_t> &image, const std::string &name) {
  if (image.size() < kHeaderSize)
    return makeError(name, ": truncated: ", image.size(), " bytes is shorter than the ",
                     kHeaderSize, "-byte capture header");
  if (std::memcmp(image.data(), kMagic, 8) != 0)
    return makeError(name, ": not a cudal1 capture file (bad magic)");
  uint32_t version, flags;
  uint64_t payloadSize, checksum;
  std::memcpy(&version, image.data() + 8, 4);
  std::memcpy(&flags, image.data() + 12, 4);
  std::memcpy(&payloadSize, image.data() + 16, 8);
  std::memcpy(&checksum, image.data() + 24, 8);
  if (version != kCaptureVersion && version != 1)
    return makeError(name, ": capture format version ", version,
                     " is not supported (this build reads versions 1 to ", kCaptureVersion, ")");
  if (payloadSize != image.size() - kHeaderSize)
    return makeError(name, ": truncated or padded: header says ", payloadSize,
                     " payload bytes, file has ", image.size() - kHeaderSize);
  const uint8_t *payload = image.data() + kHeaderSize;
  if ((version == 1 ? fnv1a64(payload, payloadSize) : laneHash64(payload, payloadSize)) != checksum)
    return makeError(name, ": checksum mismatch: the file is corrupted");

  Reader r(payload, payloadSize, name);
  CaptureFile file;
  uint32_t numLaunches = r.u32("launch count");
  for (uint32_t i = 0; i < numLaunches && !r.failed(); ++i) {
    CapturedLaunch l;
    l.kernelKey = r.str("kernel key");
    for (uint32_t &v : l.grid)
      v = r.u32("grid");
    for (uint32_t &v : l.block)
      v = r.u32("block");
    l.sharedBytes = r.u32("shared memory size");
    uint32_t numAllocs = r.u32("allocation count");
    if (numAllocs > kMaxArgs)
      r.fail(makeError(name, ": launch ", i, " has an implausible ", numAllocs, " allocations"));
    for (uint32_t a = 0; a < numAllocs && !r.failed(); ++a) {
      CapturedAlloc al;
      al.originalBase = r.u64("allocation base");
      al.size = r.u64("allocation size");
      al.before = r.blob("contents before");
      al.after = r.blob("contents after");
      if (!r.failed() && (al.before.size() != al.size || al.after.size() != al.size))
        r.fail(makeError(name, ": launch ", i, " allocation ", a,
                         ": contents do not match its size ", al.size));
      l.allocs.push_back(std::move(al));
    }
    uint32_t numArgs = r.u32("argument count");
    if (numArgs > kMaxArgs)
      r.fail(makeError(name, ": launch ", i, " has an implausible ", numArgs, " arguments"));
    for (uint32_t a = 0; a < numArgs && !r.failed(); ++a) {
      CapturedArg arg;
      uint8_t kind = r.u8("argument kind");
      if (!r.failed() && kind > 1) // the fuzzer: 2 read as a pointer, written back as 1
        r.fail(makeError(name, ": launch ", i, " argument ", a, " has kind ", int(kind),
                         " (0 bytes, 1 pointer)"));
      arg.isPointer = kind == 1;
      if (arg.isPointer) {
        arg.alloc = r.u32("argument allocation");
        arg.offset = r.u64("argument offset");
        if (!r.failed() && (arg.alloc >= l.allocs.size() || arg.offset > l.allocs[arg.alloc].size))
          r.fail(makeError(name, ": launch ", i, " argument ", a,
                           " points outside the recorded allocations"));
      } else {
        arg.bytes = r.blob("argument bytes");
      }
      l.args.push_back(std::move(arg));
    }
    file.launches.push_back(std::move(l));
  }
  if (!r.failed() && r.remaining() != 0)
    r.fail(makeError(name, ": ", r.remaining(), " unexpected bytes after the last launch"));
  if (r.failed())
    return r.status;
  return file;
}

Expected<std::vector<uint8_t>> readWholeFile(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return makeError("cannot open ", path, ": ", std::strerror(errno));
  std::vector<uint8_t> data;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    data.insert(data.end(), buf, buf + n);
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad)
    return makeError("error reading ", path);
  return data;
}

Status writeFileAtomically(const std::string &path, const void *data, size_t size) {
  // Unique per process and per call: threads of one process may write the
  // same path at once (a compile cache), and each must rename its own file.
  static std::atomic<unsigned> calls{0};
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(calls++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return makeError("cannot create ", tmp, ": ", std::strerror(errno));
  const uint8_t *p = static_cast<const uint8_t *>(data);
  size_t left = size;
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return makeError("cannot write ", tmp, ": ", std::strerror(e));
    }
    p += w;
    left -= size_t(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return makeError("cannot flush ", tmp, ": ", std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return makeError("cannot rename ", tmp, " to ", path, ": ", std::strerror(e));
  }
  return Status::success();
}

Status writeCaptureFile(const std::string &path, const CaptureFile &file) {
  std::vector<uint8_t> bytes = serializeCapture(file);
  return writeFileAtomically(path, bytes.data(), bytes.size());
}

Expected<CaptureFile> readCaptureFile(const std::string &path) {
  Expected<std::vector<uint8_t>> data = readWholeFile(path);
  if (!data.ok())
    return data.error();
  return parseCapture(*data, path);
}

} // namespace cudal1
