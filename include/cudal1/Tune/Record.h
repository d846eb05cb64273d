// What a tuning session leaves in the database: every measurement, and
// which plans become the kernels' best choices (docs/TuneDB.md,
// "Recording rule").
#ifndef CUDAL1_TUNE_RECORD_H
#define CUDAL1_TUNE_RECORD_H

#include "cudal1/Tune/Space.h"
#include "cudal1/Tune/Tuner.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/Support/Error.h"

#include <string>

namespace cudal1 {

/// A new session id: "tune-<unix time>-<pid>".
std::string newSessionId();

/// The measurement rows of a result (refused plans are not measurements).
std::vector<MeasurementRow> measurementsOf(const TuneSpace &space, const TuneResult &result,
                                           const GpuKey &gpu, const std::string &session);

/// Records every evaluated variant. The final plan's parts become their
/// kernels' best choices for this GPU (shape "*": program-level runs do not
/// separate launch shapes); every other kernel measured here gets the empty
/// plan, also over an earlier session's choice: the plugin applies a file's
/// best choices together, and together only the final plan was verified. A
/// plan faster alone stays in the measurements.
llvm::Error recordSession(TuneDB &db, const TuneSpace &space, const TuneResult &result,
                          const std::string &arch, const std::string &session);

/// The earlier measurements of each kernel of the space on this GPU, as the
/// strategy's exemplars.
llvm::Error addExemplars(TuneDB &db, const TuneSpace &space, const GpuKey &gpu, Tuner &tuner);

} // namespace cudal1

#endif
