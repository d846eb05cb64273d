// `cudal1-opt --analyze`: the ProgramModel and its analyses as JSON (schema
// in docs/formats/analysis-json.md) or as text for people.
#ifndef CUDAL1_ANALYSIS_ANALYSISREPORT_H
#define CUDAL1_ANALYSIS_ANALYSISREPORT_H

#include "cudal1/Frontend/ProgramModel.h"

#include <string>

namespace cudal1 {

/// Version of the JSON schema; bump on incompatible changes.
inline constexpr int analysisSchemaVersion = 1;

std::string analysisJson(const ProgramModel &model);
std::string analysisText(const ProgramModel &model);

} // namespace cudal1

#endif
