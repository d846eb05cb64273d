// The tuning database: every measurement ever taken and the best plan per
// (kernel key, GPU, launch shape), in one SQLite file shared by concurrent
// compiler processes (docs/TuneDB.md). It stores plans, never source.
#ifndef CUDAL1_TUNEDB_TUNEDB_H
#define CUDAL1_TUNEDB_TUNEDB_H

#include "cudal1/Eval/Measurement.h"
#include "cudal1/TuneDB/Schema.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudal1 {

/// A GPU as results are keyed: the model ("NVIDIA H200") and its
/// architecture ("sm_90"). Results are reused only on the same model; a
/// lookup that knows only the architecture (a build agent without a GPU)
/// takes the best choice of any model of that architecture.
struct GpuKey {
  std::string name;
  std::string arch;
};

/// The launch shape of a best choice that holds for every shape the driver
/// saw (a compile-time lookup rarely knows the run-time grid).
constexpr llvm::StringLiteral kAnyShape = "*";

/// The most steps a best choice may have. The tuner proposes a few steps per
/// kernel; deriving costs a parse per step, so a longer plan (528 steps once
/// took 122 s for one compile) is refused by setBest and by the plugin and
/// `--apply`, which compile the original code instead.
constexpr unsigned kMaxPlanSteps = 16;

/// The number of steps of plan text (`;`-separated, outside parentheses),
/// without parsing it; 0 for the empty plan (the original).
unsigned countPlanSteps(llvm::StringRef plan);

/// One measurement as the database keeps it: the Measurement itself and
/// where it belongs (kernel, plan, GPU, shape, session) beside it. The plan
/// is the canonical plan text (printPlan); the empty plan is the original.
/// The outcome and judge are stored by their names (outcomeName,
/// judgeName); the speedup and its interval only when timed, a time only
/// when known (non-zero); samples, details and the compiler are not stored.
struct MeasurementRow {
  int64_t id = 0; ///< set by the database; ignored when recording
  std::string kernelKey;
  std::string kernelName; ///< for people; optional
  std::string plan;
  GpuKey gpu;
  std::string shape;
  /// Read back: outcome, judge, timed, speedup, lo, hi, timeMs, baselineMs,
  /// and faster (an Ok outcome whose interval lies above 1).
  Measurement measured;
  std::string driverVersion, cudaVersion;
  std::optional<int> smClockMHz, memClockMHz;
  std::string session;    ///< groups variants timed against each other
  std::string measuredAt; ///< UTC, 2026-12-02T15:04:05Z; empty: now
  /// The strategy that proposed the plan and the probability it gave it
  /// (empty for imported or user plans): a trainer weights data that other
  /// strategies collected by it.
  std::string strategy;
  std::optional<double> proposalProbability;
};

/// A kernel's analysis features as the tuner saw them (docs/Analysis.md),
/// recorded so that a trainer can rebuild a policy's input.
struct KernelFeatures {
  std::string kernelKey, kernelName;
  int featureVersion = 0;
  std::vector<std::pair<std::string, double>> features;
};

/// The plan chosen for (kernel key, GPU, shape).
struct BestChoice {
  std::string kernelKey;
  GpuKey gpu;
  std::string shape;
  std::string plan;
  std::optional<double> speedup, speedupLo, speedupHi;
  std::optional<int64_t> measurementId; ///< the measurement that justifies it
  std::string chosenAt;                 ///< empty when setting: now
};

/// What the plugin asks: an exact shape first, then kAnyShape; gpuName
/// empty means any GPU of gpuArch (the one with the highest lower bound).
struct BestQuery {
  std::string kernelKey;
  std::string gpuArch;
  std::string gpuName;
  std::string shape = kAnyShape.str();
};

struct TuneDBStats {
  int schemaVersion = 0;
  int64_t kernels = 0, plans = 0, variants = 0, measurements = 0, best = 0;
  int64_t bestOriginal = 0; ///< best choices of the empty plan: tuned, kept as is
  std::vector<std::pair<std::string, int64_t>> measurementsByOutcome;
  /// Which judge gave them (program, replay-double-reference, replay-fallback);
  /// empty for a database from before the judge column.
  std::vector<std::pair<std::string, int64_t>> measurementsByJudge;
  struct PerGpu {
    GpuKey gpu;
    int64_t measurements = 0, best = 0;
  };
  std::vector<PerGpu> perGpu;
};

enum class TuneDBMode {
  ReadOnly,  ///< never writes, never migrates; the file must exist
  ReadWrite, ///< creates the file and migrates it to this build's schema
};

struct TuneDBOptions {
  TuneDBMode mode = TuneDBMode::ReadWrite;
  /// How long one operation waits for other processes' write locks.
  unsigned busyTimeoutMs = 10000;
  /// The most time the SQL of one operation may run, waiting for locks not
  /// counted (an sqlite3_progress_handler deadline): a crafted file (a view
  /// over an unbounded recursive query, a huge table) fails with
  /// "took longer than N ms" instead of hanging a build. 0: no deadline.
  unsigned queryTimeoutMs = 30000;
  /// Replaces tuneDBMigrations(); for testing the migration path.
  llvm::ArrayRef<Migration> migrations;
};

/// An open database. Move-only; one thread at a time. Every write is one
/// BEGIN IMMEDIATE transaction, retried while other processes hold the lock.
class TuneDB {
public:
  /// Opens `path`, checks that it is a cudal1 database of a schema this
  /// build knows, and in ReadWrite mode creates it and runs the missing
  /// migrations. Errors name the path and say what is wrong.
  static llvm::Expected<TuneDB> open(llvm::StringRef path, const TuneDBOptions &options = {});

  TuneDB(TuneDB &&) noexcept;
  TuneDB &operator=(TuneDB &&) noexcept;
  ~TuneDB();

  /// Returns the new measurement's id. Kernel, plan, GPU and variant rows
  /// are created as needed.
  llvm::Expected<int64_t> recordMeasurement(const MeasurementRow &m);
  /// All or none, in one transaction; ids in the order given.
  llvm::Expected<std::vector<int64_t>> recordMeasurements(llvm::ArrayRef<MeasurementRow> ms);

  /// Sets (or replaces) the best plan for (kernel key, GPU, shape).
  llvm::Error setBest(const BestChoice &choice);
  /// None when nothing was chosen for the query.
  llvm::Expected<std::optional<BestChoice>> bestPlan(const BestQuery &query);
  /// The best choices on an architecture (every architecture when
  /// `gpuArch` is empty), with the kernel's name: what the plugin checks
  /// before it parses anything, and what its cache of derived sources is
  /// keyed on.
  struct TunedKernel {
    std::string key, name, arch, gpu, shape, plan;
    std::optional<double> speedup, speedupLo, speedupHi;
    std::string chosenAt;
    /// Why the stored plan is not returned (it is not a plan: control
    /// characters, too long, too many steps); `plan` is empty then.
    std::string refused;
  };
  llvm::Expected<std::vector<TunedKernel>> tunedKernels(llvm::StringRef gpuArch);

  /// Every measurement in recording order (for training); stops at the
  /// first error `fn` returns, and at a row whose outcome or judge this
  /// build does not know (the error names the row and the text).
  llvm::Error forEachMeasurement(llvm::function_ref<llvm::Error(const MeasurementRow &)> fn);

  llvm::Expected<TuneDBStats> stats();

  /// Every earlier measurement of a kernel on a GPU model (any model of the
  /// architecture when gpu.name is empty), in recording order: the
  /// exemplars a strategy sees. An unknown outcome or judge is an error,
  /// as for forEachMeasurement.
  llvm::Expected<std::vector<MeasurementRow>> exemplars(llvm::StringRef kernelKey,
                                                        const GpuKey &gpu);
  /// Stores (or replaces) the features of a kernel at their version.
  llvm::Error recordFeatures(const KernelFeatures &features);
  /// The features of a kernel at a version; none when never recorded.
  llvm::Expected<std::optional<KernelFeatures>> features(llvm::StringRef kernelKey,
                                                         int featureVersion);

  int schemaVersion() const;
  /// One line per migration that this open ran on an existing file: the
  /// versions, what the step changes and what it did (plan texts rewritten,
  /// texts left alone because they do not parse); empty when none ran or
  /// the file was new. cudal1-opt prints them as remarks.
  std::vector<std::string> migrationRemarks() const;
  llvm::StringRef path() const;

private:
  struct Impl;
  explicit TuneDB(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// The summary `cudal1-opt --db-stats` prints.
std::string formatTuneDBStats(const TuneDBStats &stats, llvm::StringRef path);

/// $CUDAL1_DB, else $XDG_CACHE_HOME/cudal1/tune.db, else
/// ~/.cache/cudal1/tune.db.
std::string defaultTuneDBPath();

/// The choice bestPlan would give for `query` among `tuned` (one
/// tunedKernels answer), so that a caller can choose without the database
/// open; null when none matches.
const TuneDB::TunedKernel *chooseBest(llvm::ArrayRef<TuneDB::TunedKernel> tuned,
                                      const BestQuery &query);

/// The plugin's view: read-only lookups that never fail. A missing,
/// corrupt, foreign, too new or locked database gives "no plan" and a
/// warning; the database is opened on the first lookup.
class PlanLookup {
public:
  explicit PlanLookup(std::string path, unsigned busyTimeoutMs = 200,
                      unsigned queryTimeoutMs = 2000);
  std::optional<BestChoice> find(const BestQuery &query);
  /// TuneDB::tunedKernels; empty (with a warning) when the file is unusable.
  std::vector<TuneDB::TunedKernel> tunedKernels(llvm::StringRef gpuArch);
  /// Warnings since the last call; a failure to open is reported once.
  std::vector<std::string> takeWarnings();

private:
  bool open();
  void warn(std::string w);

  std::string path;
  unsigned busyTimeoutMs, queryTimeoutMs;
  bool tried = false;
  std::optional<TuneDB> db;
  std::vector<std::string> warnings;
};

} // namespace cudal1

#endif
