// Entry points found by name in an ELF image (Eval/EntryName.h).
#include "cudal1/Eval/EntryName.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace cudal1;

namespace {

/// A minimal ELF64 image: a null section, .symtab and .strtab, one symbol
/// per (name, is-function) pair.
std::vector<uint8_t> elfWith(const std::vector<std::pair<std::string, bool>> &symbols) {
  std::string strtab(1, '\0');
  std::vector<uint8_t> symtab(24, 0); // symbol 0 is null
  for (const auto &[name, func] : symbols) {
    uint8_t sym[24] = {0};
    uint32_t at = uint32_t(strtab.size());
    std::memcpy(sym, &at, 4);
    sym[4] = func ? 0x12 : 0x11; // global, STT_FUNC or STT_OBJECT
    symtab.insert(symtab.end(), sym, sym + 24);
    strtab += name;
    strtab.push_back('\0');
  }
  std::vector<uint8_t> img(64, 0);
  std::memcpy(img.data(),
              "\x7f"
              "ELF",
              4);
  img[4] = 2; // 64-bit
  img[5] = 1; // little-endian
  uint64_t symOff = img.size();
  img.insert(img.end(), symtab.begin(), symtab.end());
  uint64_t strOff = img.size();
  img.insert(img.end(), strtab.begin(), strtab.end());
  uint64_t shoff = img.size();
  auto put = [&](size_t at, const void *v, size_t n) { std::memcpy(img.data() + at, v, n); };
  uint16_t shentsize = 64, shnum = 3;
  put(0x28, &shoff, 8);
  put(0x3A, &shentsize, 2);
  put(0x3C, &shnum, 2);
  img.resize(img.size() + 3 * 64, 0);
  auto header = [&](int i, uint32_t type, uint64_t off, uint64_t size, uint32_t link,
                    uint64_t entsize) {
    size_t h = shoff + size_t(i) * 64;
    put(h + 4, &type, 4);
    put(h + 0x18, &off, 8);
    put(h + 0x20, &size, 8);
    put(h + 0x28, &link, 4);
    put(h + 0x38, &entsize, 8);
  };
  header(1, 2, symOff, symtab.size(), 2, 24);
  header(2, 3, strOff, strtab.size(), 0, 0);
  return img;
}

} // namespace

TEST(EntryName, FunctionSymbolsOfAnElfImage) {
  std::vector<uint8_t> img =
      elfWith({{"_Z5scalePfi", true}, {"table", false}, {"_Z4initPf", true}});
  Expected<std::vector<std::string>> names = elfFunctionNames(img.data(), img.size());
  ASSERT_TRUE(names.ok()) << names.error().message();
  EXPECT_EQ(*names, (std::vector<std::string>{"_Z5scalePfi", "_Z4initPf"}));
}

TEST(EntryName, NotAnElfImageIsAnError) {
  std::vector<uint8_t> text(100, 'x');
  EXPECT_FALSE(elfFunctionNames(text.data(), text.size()).ok());
  std::vector<uint8_t> img = elfWith({{"_Z1kv", true}});
  // A truncated image: its section headers lie past the end.
  EXPECT_FALSE(elfFunctionNames(img.data(), img.size() - 10).ok());
}

TEST(EntryName, StemOfPlainAndNestedNames) {
  EXPECT_EQ(mangledStem("_Z5scalePfi"), "_Z5scale");
  EXPECT_EQ(mangledStem("_ZN2ns5scaleEPfi"), "_ZN2ns5scaleE");
  EXPECT_EQ(mangledStem("_Z5scaleIfEvPT_i"), "_Z5scale");
  EXPECT_EQ(mangledStem("scale"), "");                // extern "C"
  EXPECT_EQ(mangledStem("_ZN2ns5scaleIfEEvPT_"), ""); // template arguments in a scope
  EXPECT_EQ(mangledStem("_Z9short"), "");             // a length past the end
}

TEST(EntryName, TheSameKernelWithAnotherSignatureIsFound) {
  // restrict made the first argument const: _Z5scalePfi became _Z5scalePKfPfi.
  std::vector<std::string> names = {"_Z4initPf", "_Z5scalePKfPfi", "_Z6scale2Pf"};
  Expected<std::string> e = matchEntry(names, "_Z5scalePfPfi");
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(*e, "_Z5scalePKfPfi");
  // The exact name wins when it is there.
  names.push_back("_Z5scalePfPfi");
  EXPECT_EQ(*matchEntry(names, "_Z5scalePfPfi"), "_Z5scalePfPfi");
}

TEST(EntryName, TemplateInstantiationsAreToldApartByTheLongestSharedPrefix) {
  std::vector<std::string> names = {"_Z5scaleIfEvPKT_i", "_Z5scaleIdEvPKT_i"};
  EXPECT_EQ(*matchEntry(names, "_Z5scaleIdEvPT_i"), "_Z5scaleIdEvPKT_i");
}

TEST(EntryName, NoKernelOrTwoEquallyGoodOnesIsAnError) {
  EXPECT_FALSE(matchEntry({"_Z4initPf"}, "_Z5scalePf").ok());
  // "scale2" never matches "scale": the stem carries the length.
  EXPECT_FALSE(matchEntry({"_Z6scale2Pf"}, "_Z5scalePf").ok());
  EXPECT_FALSE(matchEntry({"_Z5scalePKfi", "_Z5scalePVfi"}, "_Z5scalePfi").ok());
  EXPECT_FALSE(matchEntry({"scale"}, "scale_ref").ok());
}
