// The tuning database in a build without SQLite: opening fails with a
// message that says so, which every user (cudal1-opt, the plugin's
// fail-open lookup) already reports. No TuneDB object can exist here.
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/Support/ErrorHandling.h"

using namespace llvm;

namespace cudal1 {

struct TuneDB::Impl {};

Expected<TuneDB> TuneDB::open(StringRef path, const TuneDBOptions &) {
  return createStringError(inconvertibleErrorCode(),
                           "tuning database '" + path +
                               "': this cudal1 was built without SQLite (install "
                               "libsqlite3-dev and reconfigure)");
}

TuneDB::TuneDB(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
TuneDB::TuneDB(TuneDB &&) noexcept = default;
TuneDB &TuneDB::operator=(TuneDB &&) noexcept = default;
TuneDB::~TuneDB() = default;

#define CUDAL1_NO_TUNEDB llvm_unreachable("no TuneDB can be opened without SQLite")
int TuneDB::schemaVersion() const { CUDAL1_NO_TUNEDB; }
std::vector<std::string> TuneDB::migrationRemarks() const { CUDAL1_NO_TUNEDB; }
StringRef TuneDB::path() const { CUDAL1_NO_TUNEDB; }
Expected<int64_t> TuneDB::recordMeasurement(const MeasurementRow &) { CUDAL1_NO_TUNEDB; }
Expected<std::vector<int64_t>> TuneDB::recordMeasurements(ArrayRef<MeasurementRow>) {
  CUDAL1_NO_TUNEDB;
}
Error TuneDB::setBest(const BestChoice &) { CUDAL1_NO_TUNEDB; }
Expected<std::optional<BestChoice>> TuneDB::bestPlan(const BestQuery &) { CUDAL1_NO_TUNEDB; }
Expected<std::vector<TuneDB::TunedKernel>> TuneDB::tunedKernels(StringRef) { CUDAL1_NO_TUNEDB; }
Error TuneDB::forEachMeasurement(function_ref<Error(const MeasurementRow &)>) { CUDAL1_NO_TUNEDB; }
Expected<TuneDBStats> TuneDB::stats() { CUDAL1_NO_TUNEDB; }
Expected<std::vector<MeasurementRow>> TuneDB::exemplars(StringRef, const GpuKey &) {
  CUDAL1_NO_TUNEDB;
}
Error TuneDB::recordFeatures(const KernelFeatures &) { CUDAL1_NO_TUNEDB; }
Expected<std::optional<KernelFeatures>> TuneDB::features(StringRef, int) { CUDAL1_NO_TUNEDB; }
#undef CUDAL1_NO_TUNEDB

} // namespace cudal1
