// libFuzzer target: parsePlan on any bytes (plans come from users, files
// and tuning databases). Besides "no crash, no exception, no undefined
// behaviour", a plan that parses must print canonically and round-trip.
#include "cudal1/Rewrite/Plan.h"

#include <cstdio>
#include <cstdlib>

using namespace cudal1;

static void fail(const char *what, const std::string &text) {
  std::fprintf(stderr, "plan fuzz: %s: '%s'\n", what, text.c_str());
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<Plan> p = parsePlan(text);
  if (!p) {
    llvm::consumeError(p.takeError());
    return 0;
  }
  std::string printed = printPlan(*p);
  llvm::Expected<Plan> again = parsePlan(printed);
  if (!again) {
    llvm::consumeError(again.takeError());
    fail("the printed plan does not parse", printed);
  }
  if (!(*again == *p))
    fail("the printed plan parses to another plan", printed);
  if (printPlan(*again) != printed)
    fail("printing is not canonical", printed);
  for (const PlanStep &s : p->steps)
    for (const auto &[key, value] : s.params) {
      (void)s.uintParam(key, 1, 64);
      (void)parseDims(value);
    }
  return 0;
}
