// cudal1-eval's command line, parsed once for the two places that read it:
// the tool's main and a kept worker's request (the words of `cudal1-eval
// --worker verify|time ...`, Eval/KeptWorkers.h), so that the two cannot
// disagree about a flag.
#ifndef CUDAL1_EVAL_EVALARGS_H
#define CUDAL1_EVAL_EVALARGS_H

#include "cudal1/Eval/EvalDriver.h"

#include <string>
#include <vector>

namespace cudal1 {

struct EvalArgs {
  EvalRequest request;
  bool help = false, version = false; ///< --help / -h, --version: nothing else is checked
};

/// The words after the program name. Errors are the usage error's text
/// ("--jobs: 'x' is not a number from 0 to 1e9", "unknown option --frob",
/// "no bundle given").
Expected<EvalArgs> parseEvalArgs(const std::vector<std::string> &words);

} // namespace cudal1

#endif
