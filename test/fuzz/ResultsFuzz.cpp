// libFuzzer target: parseResults on any bytes (results.txt comes back from
// another machine). Results that parse must format to text that parses, and
// formatting must be stable from then on (numbers are printed with 9 digits,
// so the first format may round).
#include "cudal1/Eval/Results.h"

#include <cstdio>
#include <cstdlib>

using namespace cudal1;

static void fail(const char *what, const std::string &text) {
  std::fprintf(stderr, "results fuzz: %s:\n%s\n", what, text.c_str());
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Expected<EvalResults> r = parseResults(text, "r");
  if (!r.ok())
    return 0;
  std::string once = formatResults(*r);
  Expected<EvalResults> again = parseResults(once, "r");
  if (!again.ok())
    fail(("formatted results do not parse: " + again.error().message()).c_str(), once);
  std::string twice = formatResults(*again);
  Expected<EvalResults> third = parseResults(twice, "r");
  if (!third.ok() || formatResults(*third) != twice)
    fail("formatting is not stable", twice);
  for (const VariantResult &v : r->results)
    (void)r->find(v.id);
  return 0;
}
