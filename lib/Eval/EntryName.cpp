// Entry points by name in an ELF image (EntryName.h).
#include "cudal1/Eval/EntryName.h"

#include <cstring>

namespace cudal1 {

namespace {

template <typename T> bool readAt(const uint8_t *image, size_t size, uint64_t at, T &out) {
  if (at > size || size - at < sizeof(T))
    return false;
  std::memcpy(&out, image + at, sizeof(T));
  return true;
}

// The ELF64 layouts (little-endian, as every CUDA target is), by offset.
constexpr unsigned kSectionHeaderOffset = 0x28, kSectionHeaderSize = 0x3A, kSectionCount = 0x3C;
constexpr unsigned kShType = 4, kShOffset = 0x18, kShSize = 0x20, kShLink = 0x28,
                   kShEntrySize = 0x38;
constexpr uint32_t kSymtab = 2;
constexpr unsigned kSymName = 0, kSymInfo = 4, kSymbolSize = 24;
constexpr uint8_t kFunc = 2;

} // namespace

Expected<std::vector<std::string>> elfFunctionNames(const uint8_t *image, size_t size) {
  if (size < 64 ||
      std::memcmp(image,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      image[4] != 2 || image[5] != 1)
    return makeError("not a 64-bit little-endian ELF image");
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0;
  if (!readAt(image, size, kSectionHeaderOffset, shoff) ||
      !readAt(image, size, kSectionHeaderSize, shentsize) ||
      !readAt(image, size, kSectionCount, shnum) || shentsize < 64)
    return makeError("the ELF header is truncated");
  auto section = [&](uint32_t i, uint32_t &type, uint64_t &off, uint64_t &len, uint32_t &link,
                     uint64_t &entsize) {
    uint64_t at = shoff + uint64_t(i) * shentsize;
    return readAt(image, size, at + kShType, type) && readAt(image, size, at + kShOffset, off) &&
           readAt(image, size, at + kShSize, len) && readAt(image, size, at + kShLink, link) &&
           readAt(image, size, at + kShEntrySize, entsize) && off <= size && len <= size - off;
  };
  std::vector<std::string> names;
  for (uint32_t i = 0; i < shnum; ++i) {
    uint32_t type, link, strType, strLink;
    uint64_t off, len, entsize, strOff, strLen, strEnt;
    if (!section(i, type, off, len, link, entsize))
      return makeError("section header ", i, " lies outside the image");
    if (type != kSymtab)
      continue;
    if (entsize < kSymbolSize || link >= shnum ||
        !section(link, strType, strOff, strLen, strLink, strEnt))
      return makeError("the symbol table of section ", i, " is malformed");
    for (uint64_t s = off; s + entsize <= off + len; s += entsize) {
      uint32_t name = 0;
      uint8_t info = 0;
      readAt(image, size, s + kSymName, name);
      readAt(image, size, s + kSymInfo, info);
      if ((info & 0xF) != kFunc || name >= strLen)
        continue;
      const char *at = reinterpret_cast<const char *>(image + strOff + name);
      names.emplace_back(at, strnlen(at, strLen - name));
    }
  }
  return names;
}

std::string mangledStem(const std::string &m) {
  // <length><identifier>, as often as the scope nests.
  auto identifier = [&](size_t &at) {
    size_t n = 0, digits = 0;
    while (at < m.size() && m[at] >= '0' && m[at] <= '9' && digits < 6) {
      n = n * 10 + size_t(m[at++] - '0');
      ++digits;
    }
    if (!digits || n == 0 || m.size() - at < n)
      return false;
    at += n;
    return true;
  };
  size_t at = 0;
  if (m.compare(0, 3, "_ZN") == 0) {
    at = 3;
    while (at < m.size() && m[at] != 'E')
      if (!identifier(at))
        return "";
    return at < m.size() && at > 3 ? m.substr(0, at + 1) : "";
  }
  if (m.compare(0, 2, "_Z") == 0) {
    at = 2;
    return identifier(at) ? m.substr(0, at) : "";
  }
  return "";
}

Expected<std::string> matchEntry(const std::vector<std::string> &names, const std::string &entry) {
  for (const std::string &n : names)
    if (n == entry)
      return n;
  std::string stem = mangledStem(entry);
  if (stem.empty())
    return makeError("entry point '", entry, "' not found in the module");
  const std::string *best = nullptr;
  size_t bestShared = 0;
  bool tie = false;
  for (const std::string &n : names) {
    // The stem encodes its identifiers' lengths: a prefix match is a match
    // of the whole scoped name, never of a longer name that begins alike.
    if (n.compare(0, stem.size(), stem) != 0)
      continue;
    size_t shared = stem.size();
    while (shared < n.size() && shared < entry.size() && n[shared] == entry[shared])
      ++shared;
    if (!best || shared > bestShared) {
      best = &n;
      bestShared = shared;
      tie = false;
    } else if (shared == bestShared) {
      tie = true;
    }
  }
  if (!best)
    return makeError("entry point '", entry, "' not found in the module (no kernel named like it)");
  if (tie)
    return makeError("entry point '", entry, "' not found in the module, and several kernels of ",
                     "its name match it equally");
  return *best;
}

} // namespace cudal1
