// The tuner's result as report data: what cudal1-opt --tune and
// --import-results hand to the report (docs/Report.md).
#ifndef CUDAL1_REPORT_TUNEREPORT_H
#define CUDAL1_REPORT_TUNEREPORT_H

#include "cudal1/Report/Report.h"
#include "cudal1/Tune/Tuner.h"

namespace cudal1 {

/// Fills the GPU, the kernels with every variant (samples included), the
/// original's timings per evaluation, the combination and the final plan;
/// the caller sets the files, sources, mode, time source and roofline.
void addTuneResult(ReportData &data, const TuneSpace &space, const TuneResult &result);

} // namespace cudal1

#endif
