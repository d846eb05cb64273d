// tunedb-test-helper: the other processes of the TuneDB tests (concurrent
// writers, a writer to kill, a writer that holds the lock), the fixed
// database of the lit test of `cudal1-opt --db-stats`, and the databases of
// the lit tests of --apply and the plugin (keys of a file, best choices,
// raw SQL for poisoned files).
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/Support/MemoryBuffer.h"

#include "llvm/Support/raw_ostream.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace cudal1;

namespace {

int usage() {
  llvm::errs() << "usage: tunedb-test-helper write DB WRITER COUNT\n"
                  "       tunedb-test-helper loop DB BATCH\n"
                  "       tunedb-test-helper hold DB\n"
                  "       tunedb-test-helper populate DB\n"
                  "       tunedb-test-helper keys FILE [CLANG-ARGS...]\n"
                  "       tunedb-test-helper set-best DB KEY NAME ARCH PLAN\n"
                  "       tunedb-test-helper sql DB STATEMENTS\n"
                  "       tunedb-test-helper exclusive DB\n";
  return 2;
}

int fail(llvm::Error e) {
  llvm::errs() << "tunedb-test-helper: " << llvm::toString(std::move(e)) << "\n";
  return 1;
}

MeasurementRow sample(int kernel, int plan, const std::string &session) {
  MeasurementRow m;
  m.kernelKey = "_Z6kernelPf#" + std::to_string(kernel);
  m.kernelName = "kernel" + std::to_string(kernel);
  m.plan = "unroll(loop=0, factor=" + std::to_string(plan) + ")";
  m.gpu = {"NVIDIA H200", "sm_90"};
  m.shape = "grid=1024x1x1 block=256x1x1";
  Measurement &r = m.measured;
  r.outcome = Outcome::Ok;
  r.timed = true;
  r.speedup = 1.0 + plan / 100.0;
  r.lo = r.speedup - 0.01;
  r.hi = r.speedup + 0.01;
  r.timeMs = 0.5;
  r.baselineMs = 0.5 * r.speedup;
  m.driverVersion = "580.65";
  m.cudaVersion = "13.0";
  m.smClockMHz = 1980;
  m.memClockMHz = 3201;
  m.session = session;
  return m;
}

/// COUNT measurements, one transaction each, on kernels shared with the
/// other writers (so that they race on the same kernel and plan rows).
int write(const char *path, int writer, int count) {
  llvm::Expected<TuneDB> db = TuneDB::open(path);
  if (!db)
    return fail(db.takeError());
  for (int i = 0; i < count; ++i) {
    llvm::Expected<int64_t> id =
        db->recordMeasurement(sample(i % 4, i % 8, "writer-" + std::to_string(writer)));
    if (!id)
      return fail(id.takeError());
  }
  return 0;
}

/// Batches of BATCH measurements forever; after each commit, one line
/// "committed K" on stdout: the parent kills it at a moment it does not pick.
int loop(const char *path, int batch) {
  llvm::Expected<TuneDB> db = TuneDB::open(path);
  if (!db)
    return fail(db.takeError());
  for (int k = 0;; ++k) {
    std::vector<MeasurementRow> ms;
    for (int i = 0; i < batch; ++i)
      ms.push_back(sample(i % 4, i % 8, "loop-" + std::to_string(k)));
    llvm::Expected<std::vector<int64_t>> ids = db->recordMeasurements(ms);
    if (!ids)
      return fail(ids.takeError());
    std::printf("committed %d\n", k);
    std::fflush(stdout);
  }
}

/// An open write transaction whose pages have spilled into the WAL (a tiny
/// page cache), then "holding" on stdout and a sleep: the parent reads
/// while this holds the write lock, or kills it.
int hold(const char *path) {
  sqlite3 *db = nullptr;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    llvm::errs() << "tunedb-test-helper: " << sqlite3_errmsg(db) << "\n";
    return 1;
  }
  std::string sql = "PRAGMA cache_size = 8; BEGIN IMMEDIATE; "
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                    "WHERE i < 4000) INSERT INTO plans(text) "
                    "SELECT 'held-' || i || '-' || hex(randomblob(64)) FROM n;";
  char *msg = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    llvm::errs() << "tunedb-test-helper: " << msg << "\n";
    return 1;
  }
  std::printf("holding\n");
  std::fflush(stdout);
  sleep(60);
  return 3; // never reached in the tests: the parent kills it first
}

/// The fixed contents of test/cudal1-opt/db-stats.test.
int populate(const char *path) {
  llvm::Expected<TuneDB> db = TuneDB::open(path);
  if (!db)
    return fail(db.takeError());
  std::vector<MeasurementRow> ms;
  const Outcome outcomes[] = {Outcome::Ok,    Outcome::Ok,    Outcome::Ok,
                              Outcome::Wrong, Outcome::Crash, Outcome::CompileError};
  for (int i = 0; i < 6; ++i) {
    MeasurementRow m = sample(i % 3, i, "populate");
    m.measured.outcome = outcomes[i];
    if (m.measured.outcome != Outcome::Ok) {
      m.measured.timed = false;
      m.measured.timeMs = 0;
    }
    m.measuredAt = "2026-12-02T12:00:0" + std::to_string(i) + "Z";
    ms.push_back(m);
  }
  MeasurementRow a100 = sample(0, 1, "populate");
  a100.gpu = {"NVIDIA A100-SXM4-80GB", "sm_80"};
  ms.push_back(a100);
  llvm::Expected<std::vector<int64_t>> ids = db->recordMeasurements(ms);
  if (!ids)
    return fail(ids.takeError());
  for (int k = 0; k < 2; ++k) {
    BestChoice c;
    c.kernelKey = ms[k].kernelKey;
    c.gpu = ms[k].gpu;
    c.shape = kAnyShape.str();
    c.plan = ms[k].plan;
    c.speedup = ms[k].measured.timed ? std::optional<double>(ms[k].measured.speedup) : std::nullopt;
    c.measurementId = (*ids)[k];
    c.chosenAt = "2026-12-02T12:30:00Z";
    if (llvm::Error e = db->setBest(c))
      return fail(std::move(e));
  }
  return 0;
}

/// "host KEY" and "kernel NAME KEY" lines: the keys the tuner records.
int keys(const char *file, std::vector<std::string> userArgs) {
  auto buf = llvm::MemoryBuffer::getFile(file);
  if (!buf) {
    llvm::errs() << "tunedb-test-helper: cannot read " << file << "\n";
    return 1;
  }
  llvm::Expected<std::unique_ptr<ParsedUnit>> u =
      ParsedUnit::parse(file, (*buf)->getBuffer().str(), analysisArgs(userArgs, nullptr));
  if (!u)
    return fail(u.takeError());
  llvm::outs() << "host " << (*u)->model().hostKey << "\n";
  for (const Kernel &k : (*u)->model().kernels)
    llvm::outs() << "kernel " << k.name << " " << k.key << "\n";
  return 0;
}

/// A measurement of PLAN for KEY (named NAME) on an H200-like GPU of ARCH,
/// chosen as its best: what a tuning run records.
int setBest(const char *path, const char *key, const char *name, const char *arch,
            const char *plan) {
  llvm::Expected<TuneDB> db = TuneDB::open(path);
  if (!db)
    return fail(db.takeError());
  MeasurementRow m = sample(0, 1, "set-best");
  m.kernelKey = key;
  m.kernelName = name;
  m.plan = plan;
  m.gpu = {"NVIDIA H200", arch};
  m.shape = kAnyShape.str();
  m.measured.speedup = 1.5;
  m.measured.lo = 1.4;
  m.measured.hi = 1.6;
  llvm::Expected<int64_t> id = db->recordMeasurement(m);
  if (!id)
    return fail(id.takeError());
  BestChoice c;
  c.kernelKey = key;
  c.gpu = m.gpu;
  c.shape = kAnyShape.str();
  c.plan = plan;
  c.speedup = m.measured.speedup;
  c.speedupLo = m.measured.lo;
  c.speedupHi = m.measured.hi;
  c.measurementId = *id;
  if (llvm::Error e = db->setBest(c))
    return fail(std::move(e));
  return 0;
}

/// Statements run as they are, past every check of the library: how a
/// poisoned database is made.
int sql(const char *path, const char *statements) {
  sqlite3 *db = nullptr;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    llvm::errs() << "tunedb-test-helper: " << sqlite3_errmsg(db) << "\n";
    return 1;
  }
  char *msg = nullptr;
  int rc = sqlite3_exec(db, statements, nullptr, nullptr, &msg);
  if (rc != SQLITE_OK)
    llvm::errs() << "tunedb-test-helper: " << (msg ? msg : sqlite3_errstr(rc)) << "\n";
  sqlite3_free(msg);
  sqlite3_close(db);
  return rc == SQLITE_OK ? 0 : 1;
}

/// Holds the database in exclusive locking mode with a write transaction
/// open (readers of a WAL file are shut out too), prints "holding" and
/// sleeps until killed.
int exclusive(const char *path) {
  sqlite3 *db = nullptr;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    llvm::errs() << "tunedb-test-helper: " << sqlite3_errmsg(db) << "\n";
    return 1;
  }
  char *msg = nullptr;
  if (sqlite3_exec(db,
                   "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; "
                   "INSERT INTO plans(text) VALUES ('held by tunedb-test-helper');",
                   nullptr, nullptr, &msg) != SQLITE_OK) {
    llvm::errs() << "tunedb-test-helper: " << msg << "\n";
    return 1;
  }
  std::printf("holding\n");
  std::fflush(stdout);
  sleep(600);
  return 3;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    return usage();
  std::string cmd = argv[1];
  if (cmd == "write" && argc == 5)
    return write(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  if (cmd == "loop" && argc == 4)
    return loop(argv[2], std::atoi(argv[3]));
  if (cmd == "hold" && argc == 3)
    return hold(argv[2]);
  if (cmd == "populate" && argc == 3)
    return populate(argv[2]);
  if (cmd == "keys")
    return keys(argv[2], std::vector<std::string>(argv + 3, argv + argc));
  if (cmd == "set-best" && argc == 7)
    return setBest(argv[2], argv[3], argv[4], argv[5], argv[6]);
  if (cmd == "sql" && argc == 4)
    return sql(argv[2], argv[3]);
  if (cmd == "exclusive" && argc == 3)
    return exclusive(argv[2]);
  return usage();
}
