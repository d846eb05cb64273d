// libFuzzer target: the kernel-bundle and program-bundle manifest parsers
// (parseManifest, parseProgramManifest) on any bytes. A manifest that parses
// must format to text that parses to the same manifest.
#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/ProgramBundle.h"

#include <cstdio>
#include <cstdlib>

using namespace cudal1;

static void fail(const char *what, const std::string &text) {
  std::fprintf(stderr, "manifest fuzz: %s:\n%s\n", what, text.c_str());
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  if (Expected<Bundle> b = parseManifest(text, "/fuzz", "m"); b.ok()) {
    std::string formatted = formatManifest(*b);
    Expected<Bundle> again = parseManifest(formatted, "/fuzz", "m");
    if (!again.ok())
      fail(("a formatted manifest does not parse: " + again.error().message()).c_str(), formatted);
    if (formatManifest(*again) != formatted)
      fail("formatting is not stable", formatted);
  }
  if (Expected<ProgramBundle> b = parseProgramManifest(text, "/fuzz", "m"); b.ok()) {
    std::string formatted = formatProgramManifest(*b);
    Expected<ProgramBundle> again = parseProgramManifest(formatted, "/fuzz", "m");
    if (!again.ok())
      fail(("a formatted program manifest does not parse: " + again.error().message()).c_str(),
           formatted);
    if (formatProgramManifest(*again) != formatted)
      fail("program manifest formatting is not stable", formatted);
  }
  return 0;
}
