// The evaluator's outcome names, seen from the database. Its own file:
// cudal1/Eval/Error.h declares a cudal1::Expected that would hide
// llvm::Expected in the LLVM-side sources.
#ifndef CUDAL1_LIB_TUNEDB_OUTCOMES_H
#define CUDAL1_LIB_TUNEDB_OUTCOMES_H

#include <string>

namespace cudal1 {
bool isEvaluatorOutcome(const std::string &name);
} // namespace cudal1

#endif
