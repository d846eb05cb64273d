// Joining option values to their options before llvm::cl sees them (see
// CommandLine.h for why).
#include "cudal1/Support/CommandLine.h"

using namespace llvm;

cudal1::JoinOptionValues::JoinOptionValues(int &argc, char **&argv, ArrayRef<StringRef> names) {
  args.push_back(argv[0]);
  int i = 1;
  for (; i < argc; ++i) {
    StringRef a(argv[i]);
    if (a == "--")
      break;
    StringRef name = a;
    bool isOption = name.consume_front("--") || name.consume_front("-");
    // The value must exist and must not be the "--" that ends cudal1's flags
    // (llvm::cl then reports the missing value itself).
    if (isOption && is_contained(names, name) && i + 1 < argc && StringRef(argv[i + 1]) != "--") {
      joined.push_back("--" + name.str() + "=" + argv[i + 1]);
      args.push_back(joined.back().data());
      ++i;
      continue;
    }
    args.push_back(argv[i]);
  }
  for (; i < argc; ++i)
    args.push_back(argv[i]);
  args.push_back(nullptr); // argv[argc] is null by convention
  argc = int(args.size()) - 1;
  argv = args.data();
}
