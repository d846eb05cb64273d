// The tuning report (docs/Report.md): one self-contained HTML page per tuning
// run, with the plots drawn here as inline SVG, the source diff and the
// roofline. It loads nothing from the network: no CSS, scripts, fonts or
// images from elsewhere.
#ifndef CUDAL1_REPORT_REPORT_H
#define CUDAL1_REPORT_REPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include "cudal1/Eval/Measurement.h"

#include <optional>
#include <string>
#include <vector>

namespace cudal1 {

/// One evaluated variant as the page shows it: its Measurement (outcome,
/// judge, interval, time, samples; the first detail is its note) and which
/// variant and evaluation it was. Replayed times are the kernel's own over
/// its captured launches (issue 15).
struct ReportVariant {
  std::string id, plan;
  unsigned batch = 0; ///< the evaluation it ran in
  Measurement measured;
  /// The first message, if any.
  std::string detail() const {
    return measured.details.empty() ? std::string() : measured.details.front();
  }
};

/// The original as timed in one evaluation (every evaluation times it).
struct ReportBaseline {
  unsigned batch = 0;
  double timeMs = 0;
  std::vector<double> samplesMs;
};

struct ReportKernel {
  std::string name, key;
  std::string bestPlan; ///< empty: no variant was faster, original kept
  double speedup = 1, lo = 1, hi = 1;
  unsigned tried = 0, correct = 0;
  std::vector<ReportVariant> variants;
};

/// What the program's memory system and arithmetic can do at best.
struct RooflineCeilings {
  double bandwidthGBs = 0; ///< DRAM, read + write
  double f32Gflops = 0, f64Gflops = 0;
  std::string source; ///< where the figures come from, for the page
};

/// The program's own floor (`floor: bytes=B flops=F dtype=D`).
struct ProgramFloor {
  bool known = false;
  double bytes = 0, flops = 0;
  std::string dtype = "f32";
};

struct RooflineFloor {
  bool known = false;
  double floorMs = 0;
  std::string bound; ///< "memory" or "compute"
  std::string why;   ///< when unknown: the reason, for the page
};

/// floor_ms = max(bytes / bandwidth, flops / rate of the dtype), the rule of
/// bench/run; i32 and other integer types have no arithmetic ceiling.
RooflineFloor computeRooflineFloor(const ProgramFloor &floor, const RooflineCeilings &ceilings);

/// Datasheet figures for the GPUs we know by their nvidia-smi name (H200,
/// H100 SXM and PCIe); std::nullopt for any other.
std::optional<RooflineCeilings> nominalCeilings(llvm::StringRef gpuName);

/// Reads the `bw_gbs=X sgemm_gflops=Y dgemm_gflops=Z` line that
/// bench/roofline/ceilings prints (measured ceilings).
llvm::Expected<RooflineCeilings> parseCeilings(llvm::StringRef text, llvm::StringRef name);

struct ReportData {
  std::string sourceFile, outputFile;
  std::string mode; ///< "--tune" or "--import-results DIR"
  std::string gpu, date;
  std::string timeSource; ///< how the times were taken, in words
  /// True when times are the program's own report of its GPU region (a
  /// time regex), the only times the roofline floor is comparable with.
  bool programTimes = false;
  std::vector<ReportBaseline> baselines;
  std::vector<ReportKernel> kernels;
  std::optional<ReportVariant> combination; ///< the bests applied together
  std::string finalPlan;                    ///< empty: the output is the original
  double finalSpeedup = 1, finalLo = 1, finalHi = 1;
  double finalMs = 0; ///< the chosen variant's time; 0 when unknown
  std::string originalSource, tunedSource;
  ProgramFloor floor;
  std::optional<RooflineCeilings> ceilings;
  std::string ceilingsNote; ///< why there are none, or a caveat
};

/// Escapes text for HTML element content and attribute values.
std::string htmlEscape(llvm::StringRef text);

/// A unified diff (`---`/`+++` headers, `@@` hunks with `context` lines
/// around each change); empty when the texts are equal.
std::string unifiedDiff(llvm::StringRef before, llvm::StringRef after, llvm::StringRef beforeName,
                        llvm::StringRef afterName, unsigned context = 3);

/// One row of a timing plot: a label and its samples.
struct PlotRow {
  std::string label;
  std::vector<double> samplesMs;
  double medianMs = 0; ///< drawn when there are no samples
  std::string note;    ///< right of the row, e.g. "1.21x [1.18, 1.25]"
  enum Kind { Original, Faster, Neutral, Slower } kind = Neutral;
};

/// A strip plot with a box (quartiles, median) per row on a shared time
/// axis, as an inline `<svg class="cudal1-plot">`. Every sample is one
/// `<circle class="sample">`.
std::string renderTimingPlot(const std::vector<PlotRow> &rows, llvm::StringRef title);

/// The whole page.
std::string renderReport(const ReportData &data);

/// Renders and writes the page atomically (temporary file + rename).
llvm::Error writeReport(llvm::StringRef path, const ReportData &data);

} // namespace cudal1

#endif
