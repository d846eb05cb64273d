// `cudal1-opt FILE --instrument`: the source with every launch wrapped in
// calls to the capture runtime (include/cudal1/Capture/Capture.h), so that
// running the program once records real launches for the evaluator.
#ifndef CUDAL1_REWRITE_INSTRUMENT_H
#define CUDAL1_REWRITE_INSTRUMENT_H

#include "cudal1/Rewrite/PlanDriver.h"

#include "llvm/Support/Error.h"

#include <string>

namespace cudal1 {

/// Each launch `k<<<g, b, s, st>>>(a...)` of a known kernel becomes an
/// immediately invoked lambda that evaluates the configuration and the
/// arguments once, opens a capture scope keyed by the kernel key, and
/// launches. Kernels that read __constant__ or __device__ globals are
/// declared refused (a capture cannot restore them). Launches in headers are
/// left alone. The include of the runtime's header is added on a first line.
llvm::Expected<std::string> instrumentSource(const RewriteInput &in);

} // namespace cudal1

#endif
