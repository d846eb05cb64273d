// libFuzzer target: the kernel-bundle and program-bundle manifest parsers
// (parseManifest, parseProgramManifest), the split path's kernel part
// (parseKernelPlans, parseKernelPlansStatus) and the launch remap
// (parseLaunchRemap) on any bytes. A text that parses must format to text
// that parses to the same thing.
#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/KernelPlans.h"
#include "cudal1/Eval/LaunchRemap.h"
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
  if (Expected<KernelPlans> p = parseKernelPlans(text, "/fuzz", "m"); p.ok()) {
    std::string formatted = formatKernelPlans(*p);
    Expected<KernelPlans> again = parseKernelPlans(formatted, "/fuzz", "m");
    if (!again.ok())
      fail(("formatted kernel plans do not parse: " + again.error().message()).c_str(), formatted);
    if (formatKernelPlans(*again) != formatted)
      fail("kernel plans formatting is not stable", formatted);
  }
  if (Expected<KernelPlansStatus> st = parseKernelPlansStatus(text, "s"); st.ok()) {
    std::string formatted = formatKernelPlansStatus(*st);
    Expected<KernelPlansStatus> again = parseKernelPlansStatus(formatted, "s");
    if (!again.ok())
      fail(("a formatted kernel plans status does not parse: " + again.error().message()).c_str(),
           formatted);
    if (formatKernelPlansStatus(*again) != formatted)
      fail("kernel plans status formatting is not stable", formatted);
  }
  // One line as a launch remap: what it prints reads back as itself, and
  // applying it to any launch stays in range or is refused (no overflow).
  std::string line = text.substr(0, text.find('\n'));
  if (Expected<LaunchRemap> r = parseLaunchRemap(line); r.ok()) {
    Expected<LaunchRemap> again = parseLaunchRemap(r->str());
    if (!again.ok() || *again != *r)
      fail("a printed launch remap does not read back", r->str());
    uint32_t grid[3] = {2147483647u, 65535, 65535}, block[3] = {1024, 1, 1};
    (void)r->overrideFor(grid, block);
  }
  return 0;
}
