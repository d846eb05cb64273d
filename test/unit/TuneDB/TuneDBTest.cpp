// The tuning database: round trips, migrations, concurrent writer processes,
// a writer killed mid-transaction, damaged files and the fail-open lookup.
#include "cudal1/TuneDB/TuneDB.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <utility>

extern char **environ;

using namespace cudal1;

namespace {

//===----------------------------------------------------------------------===//
// Helpers: a scratch directory, raw SQLite access, child processes
//===----------------------------------------------------------------------===//

class TuneDBTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> d;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tunedb-test", d));
    dir = std::string(d);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string file(const std::string &name) const { return dir + "/" + name; }
  std::string dir;
};

/// The value of the first column of the first row, as text; "ERROR: ..."
/// when the query fails. Straight SQLite, as sqlite3 users see the file.
std::string query(const std::string &path, const std::string &sql) {
  sqlite3 *db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    out = std::string("ERROR: ") + sqlite3_errmsg(db);
    sqlite3_close(db);
    return out;
  }
  sqlite3_stmt *s = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
  if (rc == SQLITE_OK)
    rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) {
    const unsigned char *t = sqlite3_column_text(s, 0);
    out = t ? reinterpret_cast<const char *>(t) : "NULL";
  } else if (rc != SQLITE_DONE) {
    out = std::string("ERROR: ") + sqlite3_errmsg(db);
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

int64_t count(const std::string &path, const std::string &table, const std::string &where = "") {
  std::string v =
      query(path, "SELECT count(*) FROM " + table + (where.empty() ? "" : " WHERE " + where));
  return std::strtoll(v.c_str(), nullptr, 10);
}

/// Tables, columns, indexes and foreign keys: what must agree between a
/// migrated database and a fresh one (their CREATE texts may differ).
std::string fingerprint(const std::string &path) {
  sqlite3 *db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::string out;
  const char *sql =
      "SELECT m.type || ' ' || m.name || ' ' || group_concat(x.d, ', ') FROM sqlite_master m "
      "JOIN (SELECT m2.name AS t, p.cid || ':' || p.name || ':' || p.type || ':' || p.'notnull' "
      "      || ':' || ifnull(p.dflt_value, '') || ':' || p.pk AS d "
      "      FROM sqlite_master m2 JOIN pragma_table_info(m2.name) p "
      "      WHERE m2.type IN ('table', 'view') "
      "      UNION ALL SELECT m3.name, 'index ' || i.name || ' ' || i.'unique' "
      "      FROM sqlite_master m3 JOIN pragma_index_list(m3.name) i WHERE m3.type = 'table' "
      "      UNION ALL SELECT m4.name, 'fk ' || f.'from' || '->' || f.'table' || '.' || f.'to' "
      "      FROM sqlite_master m4 JOIN pragma_foreign_key_list(m4.name) f "
      "      WHERE m4.type = 'table') x ON x.t = m.name "
      "GROUP BY m.name ORDER BY m.name";
  sqlite3_stmt *s = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK)
    out = std::string("ERROR: ") + sqlite3_errmsg(db);
  while (s && sqlite3_step(s) == SQLITE_ROW)
    out += std::string(reinterpret_cast<const char *>(sqlite3_column_text(s, 0))) + "\n";
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

void execSql(const std::string &path, const std::string &sql) {
  sqlite3 *db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr),
            SQLITE_OK);
  char *msg = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
  std::string err = msg ? msg : "";
  sqlite3_free(msg);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << err;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A child running tunedb-test-helper with stdout on a pipe; killed if a
/// failed assertion leaves it running.
struct Child {
  pid_t pid = -1;
  FILE *out = nullptr;

  Child() = default;
  Child(Child &&o) noexcept : pid(std::exchange(o.pid, -1)), out(std::exchange(o.out, nullptr)) {}
  Child &operator=(Child &&) = delete;
  ~Child() {
    if (pid > 0)
      kill9();
  }

  static Child spawn(const std::vector<std::string> &args) {
    std::vector<char *> argv;
    std::string exe = TUNEDB_HELPER;
    argv.push_back(exe.data());
    for (const std::string &a : args)
      argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    int fds[2];
    Child c;
    if (pipe(fds) != 0)
      return c;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    if (posix_spawn(&c.pid, exe.c_str(), &fa, nullptr, argv.data(), environ) != 0)
      c.pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    c.out = fdopen(fds[0], "r");
    return c;
  }
  /// The next line of its stdout, "" at the end.
  std::string line() {
    char buf[256];
    return fgets(buf, sizeof buf, out) ? std::string(buf) : std::string();
  }
  /// Exit status as from waitpid.
  int wait() {
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    if (out)
      fclose(out);
    out = nullptr;
    return status;
  }
  int kill9() {
    ::kill(pid, SIGKILL);
    return wait();
  }
};

MeasurementRow sample(const std::string &key, const std::string &plan, double speedup) {
  MeasurementRow m;
  m.kernelKey = key;
  m.kernelName = "transpose";
  m.plan = plan;
  m.gpu = {"NVIDIA H200", "sm_90"};
  m.shape = "grid=64x64x1 block=32x8x1";
  m.measured.outcome = Outcome::Ok;
  m.measured.timed = true;
  m.measured.speedup = speedup;
  m.measured.lo = speedup - 0.05;
  m.measured.hi = speedup + 0.05;
  m.measured.faster = m.measured.lo > 1.0;
  m.measured.timeMs = 1.0 / speedup;
  m.measured.baselineMs = 1.0;
  m.driverVersion = "580.65.06";
  m.cudaVersion = "13.0";
  m.smClockMHz = 1980;
  m.memClockMHz = 3201;
  m.session = "s1";
  m.measuredAt = "2026-12-02T15:04:05Z";
  return m;
}

TuneDBOptions readOnly(unsigned busyMs = 200) {
  TuneDBOptions o;
  o.mode = TuneDBMode::ReadOnly;
  o.busyTimeoutMs = busyMs;
  return o;
}

#define ASSERT_OK(x)                                                                               \
  do {                                                                                             \
    if (llvm::Error err_ = (x))                                                                    \
      FAIL() << llvm::toString(std::move(err_));                                                   \
  } while (0)

/// The error text of an Expected that must have failed.
template <typename T> std::string errorOf(llvm::Expected<T> e) {
  if (e)
    return "(no error)";
  return llvm::toString(e.takeError());
}

//===----------------------------------------------------------------------===//
// Round trip
//===----------------------------------------------------------------------===//

TEST_F(TuneDBTest, MeasurementsRoundTrip) {
  llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
  ASSERT_TRUE(bool(db)) << errorOf(std::move(db));
  EXPECT_EQ(db->schemaVersion(), tuneDBSchemaVersion());

  MeasurementRow fast =
      sample("_Z9transposePfPKf#a1b2", "coalesce; launch-config(block=32x8)", 1.8);
  MeasurementRow crash = sample("_Z9transposePfPKf#a1b2", "unroll(loop=0, factor=4)", 1.0);
  crash.measured.outcome = Outcome::Crash;
  crash.measured.timed = false;
  crash.measured.speedup = crash.measured.lo = crash.measured.hi = crash.measured.timeMs = 0;
  crash.smClockMHz = std::nullopt;
  crash.measuredAt = "2026-12-02T15:04:06.250Z";
  MeasurementRow original = sample("_Z9transposePfPKf#a1b2", "", 1.0);
  llvm::Expected<std::vector<int64_t>> ids = db->recordMeasurements({fast, crash, original});
  ASSERT_TRUE(bool(ids)) << errorOf(std::move(ids));
  ASSERT_EQ(ids->size(), 3u);

  std::vector<MeasurementRow> back;
  ASSERT_OK(db->forEachMeasurement([&](const MeasurementRow &m) {
    back.push_back(m);
    return llvm::Error::success();
  }));
  ASSERT_EQ(back.size(), 3u);
  const MeasurementRow *in[] = {&fast, &crash, &original};
  for (int i = 0; i < 3; ++i) {
    const MeasurementRow &a = *in[i], &b = back[i];
    EXPECT_EQ(b.id, (*ids)[i]);
    EXPECT_EQ(b.kernelKey, a.kernelKey);
    EXPECT_EQ(b.kernelName, a.kernelName);
    EXPECT_EQ(b.plan, a.plan);
    EXPECT_EQ(b.gpu.name, a.gpu.name);
    EXPECT_EQ(b.gpu.arch, a.gpu.arch);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.measured.outcome, a.measured.outcome);
    EXPECT_EQ(b.measured.judge, a.measured.judge);
    EXPECT_EQ(b.measured.timed, a.measured.timed);
    EXPECT_EQ(b.measured.faster, a.measured.faster);
    EXPECT_EQ(b.measured.speedup, a.measured.speedup);
    EXPECT_EQ(b.measured.lo, a.measured.lo);
    EXPECT_EQ(b.measured.hi, a.measured.hi);
    EXPECT_EQ(b.measured.timeMs, a.measured.timeMs);
    EXPECT_EQ(b.measured.baselineMs, a.measured.baselineMs);
    EXPECT_EQ(b.driverVersion, a.driverVersion);
    EXPECT_EQ(b.cudaVersion, a.cudaVersion);
    EXPECT_EQ(b.smClockMHz, a.smClockMHz);
    EXPECT_EQ(b.memClockMHz, a.memClockMHz);
    EXPECT_EQ(b.session, a.session);
    EXPECT_EQ(b.measuredAt, a.measuredAt);
  }
  // Rows are shared: one kernel, three plans (the original is ""), one GPU.
  llvm::Expected<TuneDBStats> st = db->stats();
  ASSERT_TRUE(bool(st));
  EXPECT_EQ(st->kernels, 1);
  EXPECT_EQ(st->plans, 3);
  EXPECT_EQ(st->variants, 3);
  EXPECT_EQ(st->measurements, 3);
  ASSERT_EQ(st->measurementsByOutcome.size(), 2u);
  EXPECT_EQ(st->measurementsByOutcome[0], (std::pair<std::string, int64_t>{"ok", 2}));
  EXPECT_EQ(st->measurementsByOutcome[1], (std::pair<std::string, int64_t>{"crash", 1}));

  // An empty measuredAt is now, in the same UTC form.
  MeasurementRow now = fast;
  now.measuredAt.clear();
  llvm::Expected<int64_t> id = db->recordMeasurement(now);
  ASSERT_TRUE(bool(id));
  std::string at =
      query(file("t.db"), "SELECT measured_at FROM measurements WHERE id = " + std::to_string(*id));
  EXPECT_EQ(at.size(), 20u) << at;
  EXPECT_EQ(at.back(), 'Z');

  // What sqlite3 users see.
  EXPECT_EQ(query(file("t.db"), "SELECT plan FROM measurements_view WHERE outcome = 'crash'"),
            "unroll(loop=0, factor=4)");
  EXPECT_EQ(query(file("t.db"), "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(query(file("t.db"), "PRAGMA application_id"), std::to_string(kTuneDBApplicationId));
}

TEST_F(TuneDBTest, BestPlanKeys) {
  llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
  ASSERT_TRUE(bool(db)) << errorOf(std::move(db));
  MeasurementRow h200 = sample("k#1", "coalesce", 1.8);
  MeasurementRow h100 = sample("k#1", "launch-config(block=128)", 1.5);
  h100.gpu = {"NVIDIA H100 80GB HBM3", "sm_90"};
  llvm::Expected<std::vector<int64_t>> ids = db->recordMeasurements({h200, h100});
  ASSERT_TRUE(bool(ids));

  auto choose = [&](const MeasurementRow &m, const std::string &shape, double lo,
                    std::optional<int64_t> id) {
    BestChoice c;
    c.kernelKey = m.kernelKey;
    c.gpu = m.gpu;
    c.shape = shape;
    c.plan = m.plan;
    c.speedup = lo + 0.1;
    c.speedupLo = lo;
    c.speedupHi = lo + 0.2;
    c.measurementId = id;
    return c;
  };
  ASSERT_OK(db->setBest(choose(h200, kAnyShape.str(), 1.7, (*ids)[0])));
  ASSERT_OK(db->setBest(choose(h100, kAnyShape.str(), 1.4, (*ids)[1])));
  ASSERT_OK(db->setBest(choose(h200, "grid=8x8x1 block=32x8x1", 1.2, std::nullopt)));

  auto find = [&](const std::string &key, const std::string &arch, const std::string &name,
                  const std::string &shape) -> std::optional<BestChoice> {
    llvm::Expected<std::optional<BestChoice>> r = db->bestPlan({key, arch, name, shape});
    EXPECT_TRUE(bool(r)) << errorOf(std::move(r));
    return r ? *r : std::nullopt;
  };
  // Exact model; a shape without its own choice falls back to "*".
  std::optional<BestChoice> b = find("k#1", "sm_90", "NVIDIA H100 80GB HBM3", "grid=1x1x1");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->plan, "launch-config(block=128)");
  EXPECT_EQ(b->shape, "*");
  EXPECT_EQ(b->measurementId, (*ids)[1]);
  EXPECT_EQ(b->speedupLo, 1.4);
  // Architecture only: the model with the higher lower bound.
  b = find("k#1", "sm_90", "", "*");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->gpu.name, "NVIDIA H200");
  EXPECT_EQ(b->plan, "coalesce");
  // The exact shape wins over "*".
  b = find("k#1", "sm_90", "NVIDIA H200", "grid=8x8x1 block=32x8x1");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->shape, "grid=8x8x1 block=32x8x1");
  // Results hold only where they were measured.
  EXPECT_FALSE(find("k#1", "sm_80", "", "*"));
  EXPECT_FALSE(find("k#1", "sm_90", "NVIDIA A100-SXM4-80GB", "*"));
  EXPECT_FALSE(find("k#2", "sm_90", "", "*"));

  // Setting again replaces; the empty plan (keep the original) is a choice too.
  BestChoice keep = choose(h200, kAnyShape.str(), 0.98, std::nullopt);
  keep.plan = "";
  ASSERT_OK(db->setBest(keep));
  b = find("k#1", "sm_90", "NVIDIA H200", "*");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->plan, "");
  EXPECT_EQ(count(file("t.db"), "best"), 3);

  // A justifying measurement of another plan is the caller's bug.
  BestChoice wrong = choose(h200, kAnyShape.str(), 1.7, (*ids)[1]);
  std::string err = llvm::toString(db->setBest(wrong));
  EXPECT_NE(err.find("is of another kernel, plan or GPU"), std::string::npos) << err;
  wrong.measurementId = 999;
  err = llvm::toString(db->setBest(wrong));
  EXPECT_NE(err.find("no measurement 999"), std::string::npos) << err;
}

TEST_F(TuneDBTest, RefusesWhatIsNotAMeasurement) {
  llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
  ASSERT_TRUE(bool(db));
  auto errorFor = [&](auto change) {
    MeasurementRow m = sample("k#1", "coalesce", 1.5);
    change(m);
    return errorOf(db->recordMeasurement(m));
  };
  EXPECT_NE(errorFor([](MeasurementRow &m) { m.kernelKey = ""; }).find("the kernel key is empty"),
            std::string::npos);
  EXPECT_NE(
      errorFor([](MeasurementRow &m) { m.plan = "__global__ void k() {\n}"; }).find("never source"),
      std::string::npos);
  EXPECT_NE(
      errorFor([](MeasurementRow &m) { m.plan = std::string(20000, 'a'); }).find("never source"),
      std::string::npos);
  EXPECT_NE(
      errorFor([](MeasurementRow &m) { m.measured.speedup = std::nan(""); }).find("not a finite"),
      std::string::npos);
  EXPECT_NE(errorFor([](MeasurementRow &m) { m.measuredAt = "yesterday"; }).find("not a UTC time"),
            std::string::npos);
  EXPECT_NE(errorFor([](MeasurementRow &m) { m.gpu.arch = ""; }).find("architecture is empty"),
            std::string::npos);
  // A batch with one bad measurement writes none of them.
  MeasurementRow bad = sample("k#2", "coalesce", 1.5);
  bad.shape = "";
  EXPECT_FALSE(bool(db->recordMeasurements({sample("k#2", "coalesce", 1.5), bad})));
  EXPECT_EQ(count(file("t.db"), "measurements"), 0);
}

TEST_F(TuneDBTest, UnknownOutcomesAndJudgesAreErrorsWhenRead) {
  // The writer takes only enums; a file written otherwise (by hand, by a
  // newer cudal1 with an outcome this one lacks) says which row is unknown.
  {
    llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
    ASSERT_TRUE(bool(db));
    ASSERT_TRUE(bool(db->recordMeasurement(sample("k#1", "coalesce", 1.5))));
  }
  auto readBack = [&] {
    llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
    if (!db)
      return llvm::toString(db.takeError());
    llvm::Error e =
        db->forEachMeasurement([](const MeasurementRow &) { return llvm::Error::success(); });
    std::string each = e ? llvm::toString(std::move(e)) : "(no error)";
    return each + " | " + errorOf(db->exemplars("k#1", {"NVIDIA H200", "sm_90"}));
  };
  execSql(file("t.db"), "UPDATE measurements SET outcome = 'fine'");
  std::string err = readBack();
  EXPECT_NE(err.find("measurement 1 has the outcome 'fine', which this cudal1 does not know |"),
            std::string::npos)
      << err;
  EXPECT_NE(err.rfind("the outcome 'fine'"), err.find("the outcome 'fine'")) << err;
  execSql(file("t.db"), "UPDATE measurements SET outcome = 'ok', judge = 'oracle'");
  err = readBack();
  EXPECT_NE(err.find("measurement 1 has the judge 'oracle'"), std::string::npos) << err;
  execSql(file("t.db"), "UPDATE measurements SET judge = 'replay-fallback'");
  llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
  ASSERT_TRUE(bool(db));
  llvm::Expected<std::vector<MeasurementRow>> ex = db->exemplars("k#1", {"NVIDIA H200", "sm_90"});
  ASSERT_TRUE(bool(ex)) << errorOf(std::move(ex));
  ASSERT_EQ(ex->size(), 1u);
  EXPECT_EQ((*ex)[0].measured.outcome, Outcome::Ok);
  EXPECT_EQ((*ex)[0].measured.judge, Judge::ReplayFallback);
  EXPECT_TRUE((*ex)[0].measured.faster);
}

//===----------------------------------------------------------------------===//
// Opening: read-only, foreign and newer files
//===----------------------------------------------------------------------===//

TEST_F(TuneDBTest, ReadOnlyOpen) {
  std::string err = errorOf(TuneDB::open(file("missing.db"), readOnly()));
  EXPECT_NE(err.find("no tuning database at"), std::string::npos) << err;
  EXPECT_FALSE(llvm::sys::fs::exists(file("missing.db")));

  {
    std::ofstream(file("empty.db"));
  }
  err = errorOf(TuneDB::open(file("empty.db"), readOnly()));
  EXPECT_NE(err.find("is empty"), std::string::npos) << err;

  {
    llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
    ASSERT_TRUE(bool(db));
    ASSERT_TRUE(bool(db->recordMeasurement(sample("k#1", "coalesce", 1.5))));
  }
  std::string before = readFile(file("t.db"));
  {
    llvm::Expected<TuneDB> ro = TuneDB::open(file("t.db"), readOnly());
    ASSERT_TRUE(bool(ro)) << errorOf(std::move(ro));
    err = errorOf(ro->recordMeasurement(sample("k#1", "coalesce", 1.5)));
    EXPECT_NE(err.find("read-only"), std::string::npos) << err;
  }
  // A reader leaves nothing beside the database (a build's lookups must not
  // litter a checked-in or downloaded database with -wal and -shm files)
  // and changes none of its bytes.
  EXPECT_FALSE(llvm::sys::fs::exists(file("t.db-wal")));
  EXPECT_FALSE(llvm::sys::fs::exists(file("t.db-shm")));
  EXPECT_EQ(readFile(file("t.db")), before);
  EXPECT_EQ(count(file("t.db"), "measurements"), 1);

  // A read-write open creates missing directories.
  EXPECT_TRUE(bool(TuneDB::open(file("a/b/c.db"))));
}

TEST_F(TuneDBTest, RefusesForeignAndNewerFiles) {
  execSql(file("other.db"), "CREATE TABLE notes(x); INSERT INTO notes VALUES (1);");
  std::string before = readFile(file("other.db"));
  std::string err = errorOf(TuneDB::open(file("other.db")));
  EXPECT_NE(err.find("is not a cudal1 tuning database (an SQLite file of another program)"),
            std::string::npos)
      << err;
  EXPECT_EQ(readFile(file("other.db")), before); // untouched

  execSql(file("app.db"), "PRAGMA application_id = 42;");
  err = errorOf(TuneDB::open(file("app.db")));
  EXPECT_NE(err.find("application_id 42"), std::string::npos) << err;

  ASSERT_TRUE(bool(TuneDB::open(file("new.db"))));
  execSql(file("new.db"), "PRAGMA user_version = 99;");
  err = errorOf(TuneDB::open(file("new.db")));
  EXPECT_NE(err.find("schema version 99, newer than this cudal1's"), std::string::npos) << err;
  err = errorOf(TuneDB::open(file("new.db"), readOnly()));
  EXPECT_NE(err.find("schema version 99"), std::string::npos) << err;
}

//===----------------------------------------------------------------------===//
// Migrations
//===----------------------------------------------------------------------===//

/// A database made by the frozen schema file of `version` (as an older
/// cudal1 made it), with one measurement.
void makeFrozen(const std::string &path, int version) {
  std::string sql =
      readFile(std::string(TUNEDB_INPUTS) + "/schema-v" + std::to_string(version) + ".sql");
  ASSERT_FALSE(sql.empty());
  execSql(path, sql);
  execSql(path,
          "INSERT INTO kernels(key, name) VALUES ('k#1', 'k');"
          "INSERT INTO plans(text) VALUES ('coalesce');"
          "INSERT INTO gpus(name, arch) VALUES ('NVIDIA H200', 'sm_90');"
          "INSERT INTO variants(kernel_id, plan_id) VALUES (1, 1);"
          "INSERT INTO measurements(variant_id, gpu_id, shape, outcome, speedup, measured_at) "
          "VALUES (1, 1, '*', 'ok', 1.5, '2026-01-01T00:00:00Z');");
}

TEST_F(TuneDBTest, PlanTextsMigrateToTheCanonicalForm) {
  // A schema-2 file as older cudal1s wrote it: the old planText form
  // (`@k: a; @k: b`) beside the canonical text of the same plan, other
  // spacing, a text that is no plan, and the original.
  std::string path = file("old.db");
  execSql(path, readFile(std::string(TUNEDB_INPUTS) + "/schema-v2.sql"));
  execSql(path,
          "INSERT INTO kernels(key, name) VALUES ('k#1', 'k'), ('k#2', 'k2');"
          "INSERT INTO plans(text) VALUES ('@k: coalesce; @k: restrict'),"
          " ('@k: coalesce; restrict'), ('coalesce ;restrict'), ('not a plan (('), ('');"
          "INSERT INTO gpus(name, arch) VALUES ('NVIDIA H200', 'sm_90');"
          "INSERT INTO variants(kernel_id, plan_id) VALUES (1, 1), (1, 2), (2, 1), (1, 3), (1, 4),"
          " (1, 5);"
          "INSERT INTO measurements(variant_id, gpu_id, shape, outcome, speedup, measured_at) "
          "VALUES (1, 1, '*', 'ok', 1.5, '2026-01-01T00:00:00Z'),"
          " (2, 1, '*', 'ok', 1.4, '2026-01-01T00:00:01Z'),"
          " (3, 1, '*', 'wrong', NULL, '2026-01-01T00:00:02Z'),"
          " (4, 1, '*', 'ok', 1.1, '2026-01-01T00:00:03Z'),"
          " (5, 1, '*', 'crash', NULL, '2026-01-01T00:00:04Z'),"
          " (6, 1, '*', 'ok', 1.0, '2026-01-01T00:00:05Z');"
          "INSERT INTO best(kernel_id, gpu_id, shape, plan_id, measurement_id, speedup_lo, "
          "chosen_at) VALUES (1, 1, '*', 1, 1, 1.4, '2026-01-01T00:00:06Z');");
  llvm::Expected<TuneDB> db = TuneDB::open(path);
  ASSERT_TRUE(bool(db)) << errorOf(std::move(db));
  EXPECT_EQ(db->schemaVersion(), tuneDBSchemaVersion());
  // One remark per migration run (2 -> 3 and any later ones), the plan
  // texts' first.
  std::vector<std::string> remarks = db->migrationRemarks();
  ASSERT_EQ(remarks.size(), size_t(tuneDBSchemaVersion() - 2));
  EXPECT_EQ(remarks[0], "tuning database '" + path +
                            "' migrated from schema version 2 to 3 (plan texts in the canonical "
                            "printer's form): 2 plan text(s) rewritten in the canonical form (1 "
                            "merged into an equal plan); 1 plan text(s) do not parse and were "
                            "left as they are (the first: 'not a plan ((')");
  EXPECT_EQ(query(path, "SELECT group_concat(text, '|') FROM (SELECT text FROM plans ORDER BY "
                        "text)"),
            "|@k: coalesce; restrict|coalesce; restrict|not a plan ((");
  // Nothing measured is lost: k's two spellings are one variant now.
  EXPECT_EQ(count(path, "measurements"), 6);
  EXPECT_EQ(count(path, "variants"), 5);
  EXPECT_EQ(query(path, "SELECT count(*) FROM measurements_view WHERE kernel_key = 'k#1' AND "
                        "plan = '@k: coalesce; restrict'"),
            "2");
  EXPECT_EQ(query(path, "SELECT plan FROM measurements_view WHERE kernel_key = 'k#2'"),
            "@k: coalesce; restrict");
  EXPECT_EQ(query(path, "SELECT plan FROM best_view"), "@k: coalesce; restrict");
  EXPECT_EQ(query(path, "PRAGMA foreign_key_check"), "");
  // Opening again migrates nothing.
  db = TuneDB::open(path);
  ASSERT_TRUE(bool(db));
  EXPECT_TRUE(db->migrationRemarks().empty());
}

TEST_F(TuneDBTest, FrozenSchemasMigrateToTheCurrentOne) {
  // Every shipped version, migrated, has exactly the fresh schema: a schema
  // edit without a migration (or a migration that differs) fails here.
  {
    llvm::Expected<TuneDB> created = TuneDB::open(file("fresh.db"));
    ASSERT_TRUE(bool(created)) << errorOf(std::move(created));
    EXPECT_TRUE(created->migrationRemarks().empty()); // a new file is no news
  }
  std::string fresh = fingerprint(file("fresh.db"));
  ASSERT_NE(fresh.find("table measurements"), std::string::npos) << fresh;
  for (int v = 1; v <= tuneDBSchemaVersion(); ++v) {
    std::string path = file("v" + std::to_string(v) + ".db");
    makeFrozen(path, v);
    llvm::Expected<TuneDB> db = TuneDB::open(path);
    ASSERT_TRUE(bool(db)) << errorOf(std::move(db));
    EXPECT_EQ(db->schemaVersion(), tuneDBSchemaVersion());
    // One remark per migration run, each naming its versions.
    std::vector<std::string> remarks = db->migrationRemarks();
    ASSERT_EQ(remarks.size(), size_t(tuneDBSchemaVersion() - v));
    for (size_t i = 0; i < remarks.size(); ++i)
      EXPECT_NE(remarks[i].find("migrated from schema version " + std::to_string(v + i) + " to " +
                                std::to_string(v + i + 1) + " ("),
                std::string::npos)
          << remarks[i];
    EXPECT_EQ(fingerprint(path), fresh) << "schema-v" << v << ".sql";
    EXPECT_EQ(count(path, "measurements_view", "plan = 'coalesce'"), 1);
    EXPECT_EQ(query(path, "PRAGMA integrity_check"), "ok");
  }
  // No frozen file for a version this build does not have: keep them in step.
  EXPECT_FALSE(llvm::sys::fs::exists(std::string(TUNEDB_INPUTS) + "/schema-v" +
                                     std::to_string(tuneDBSchemaVersion() + 1) + ".sql"));
}

/// The built-in steps plus an artificial next version, to test the path
/// from an older file before any real v2 exists.
std::vector<Migration> withNextVersion(const char *sql) {
  std::vector<Migration> ms(tuneDBMigrations().begin(), tuneDBMigrations().end());
  ms.push_back({tuneDBSchemaVersion(), "power per measurement", sql});
  return ms;
}

TEST_F(TuneDBTest, OlderDatabaseIsMigrated) {
  makeFrozen(file("old.db"), 1);
  std::vector<Migration> ms =
      withNextVersion("ALTER TABLE measurements ADD COLUMN power_w REAL;"
                      "UPDATE measurements SET power_w = 700 WHERE outcome = 'ok';");
  TuneDBOptions o;
  o.migrations = ms;
  {
    llvm::Expected<TuneDB> db = TuneDB::open(file("old.db"), o);
    ASSERT_TRUE(bool(db)) << errorOf(std::move(db));
    EXPECT_EQ(db->schemaVersion(), int(ms.size()));
    // The old row survived and the new column was filled; writes still work.
    EXPECT_EQ(query(file("old.db"), "SELECT power_w FROM measurements WHERE id = 1"), "700.0");
    ASSERT_TRUE(bool(db->recordMeasurement(sample("k#1", "coalesce", 1.6))));
    EXPECT_EQ(count(file("old.db"), "measurements"), 2);
  }
  EXPECT_EQ(query(file("old.db"), "PRAGMA user_version"), std::to_string(ms.size()));
  EXPECT_EQ(query(file("old.db"), "PRAGMA integrity_check"), "ok");
  // Opening again runs nothing twice.
  {
    llvm::Expected<TuneDB> again = TuneDB::open(file("old.db"), o);
    ASSERT_TRUE(bool(again)) << errorOf(std::move(again));
  }
  // This build, which knows one version less, refuses the migrated file.
  std::string err = errorOf(TuneDB::open(file("old.db")));
  EXPECT_NE(err.find("newer than this cudal1's"), std::string::npos) << err;
  // A reader of the new version refuses the old file until a writer migrates it.
  makeFrozen(file("old2.db"), 1);
  TuneDBOptions ro = readOnly();
  ro.migrations = ms;
  err = errorOf(TuneDB::open(file("old2.db"), ro));
  EXPECT_NE(err.find("older than this cudal1's"), std::string::npos) << err;
}

TEST_F(TuneDBTest, FailedMigrationChangesNothing) {
  makeFrozen(file("old.db"), 1);
  std::vector<Migration> ms = withNextVersion(
      "ALTER TABLE measurements ADD COLUMN power_w REAL; SELECT no_such_function();");
  TuneDBOptions o;
  o.migrations = ms;
  std::string err = errorOf(TuneDB::open(file("old.db"), o));
  std::string step = "migrating from schema version " + std::to_string(tuneDBSchemaVersion()) +
                     " to " + std::to_string(tuneDBSchemaVersion() + 1) +
                     " (power per measurement)";
  EXPECT_NE(err.find(step), std::string::npos) << err;
  EXPECT_NE(err.find("no_such_function"), std::string::npos) << err;
  EXPECT_EQ(query(file("old.db"), "PRAGMA user_version"), "1");
  EXPECT_EQ(query(file("old.db"), "SELECT count(*) FROM pragma_table_info('measurements') "
                                  "WHERE name = 'power_w'"),
            "0");
  EXPECT_EQ(count(file("old.db"), "measurements"), 1);
  EXPECT_TRUE(bool(TuneDB::open(file("old.db"))));
}

//===----------------------------------------------------------------------===//
// Processes: concurrent writers, kill -9, a held lock
//===----------------------------------------------------------------------===//

TEST_F(TuneDBTest, SixteenConcurrentWriterProcesses) {
  // All start on a file that does not exist yet: creation and the first
  // migration race too.
  constexpr int kWriters = 16, kEach = 40;
  std::vector<Child> children;
  for (int w = 0; w < kWriters; ++w)
    children.push_back(
        Child::spawn({"write", file("t.db"), std::to_string(w), std::to_string(kEach)}));
  for (Child &c : children) {
    ASSERT_GT(c.pid, 0);
    int status = c.wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  EXPECT_EQ(count(file("t.db"), "measurements"), kWriters * kEach);
  for (int w = 0; w < kWriters; ++w)
    EXPECT_EQ(count(file("t.db"), "measurements", "session = 'writer-" + std::to_string(w) + "'"),
              kEach);
  // Shared rows were created once, not once per writer.
  EXPECT_EQ(count(file("t.db"), "kernels"), 4);
  EXPECT_EQ(count(file("t.db"), "plans"), 8);
  EXPECT_EQ(count(file("t.db"), "gpus"), 1);
  EXPECT_EQ(query(file("t.db"), "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(query(file("t.db"), "PRAGMA foreign_key_check"), "");
}

TEST_F(TuneDBTest, WriterKilledAtRandomKeepsEveryCommit) {
  constexpr int kBatch = 200;
  std::mt19937 rng(7);
  int lastCommitted = -1;
  for (int round = 0; round < 4; ++round) {
    Child c = Child::spawn({"loop", file("t.db"), std::to_string(kBatch)});
    ASSERT_GT(c.pid, 0);
    // Let it commit a few batches, then kill it without warning, most
    // likely inside a transaction (it spends nearly all its time in one).
    int seen = 0;
    for (std::string l; seen < 2 + int(rng() % 3) && !(l = c.line()).empty(); ++seen)
      ;
    ASSERT_GT(seen, 0) << "the writer committed nothing";
    usleep(rng() % 3000);
    int status = c.kill9();
    ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;

    llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
    ASSERT_TRUE(bool(db)) << errorOf(std::move(db));
    EXPECT_EQ(query(file("t.db"), "PRAGMA integrity_check"), "ok");
    // Each batch is all there or not at all; reported commits are there.
    std::map<std::string, int64_t> perSession;
    ASSERT_OK(db->forEachMeasurement([&](const MeasurementRow &m) {
      ++perSession[m.session];
      return llvm::Error::success();
    }));
    int thisRound = 0;
    for (auto &[session, n] : perSession) {
      EXPECT_EQ(n, kBatch) << session << " is partial";
      thisRound += llvm::StringRef(session).starts_with("loop-");
    }
    EXPECT_GE(thisRound, seen);
    lastCommitted = int(perSession.size());
    // The next round's writer appends from loop-0 again: clear the sessions.
    execSql(file("t.db"),
            "UPDATE measurements SET session = 'round" + std::to_string(round) + "-' || session");
  }
  EXPECT_GT(lastCommitted, 0);
}

TEST_F(TuneDBTest, WriterKilledInsideATransactionWithSpilledPages) {
  {
    llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
    ASSERT_TRUE(bool(db));
    ASSERT_TRUE(bool(db->recordMeasurement(sample("k#1", "coalesce", 1.5))));
  }
  Child c = Child::spawn({"hold", file("t.db")});
  ASSERT_GT(c.pid, 0);
  ASSERT_EQ(c.line(), "holding\n");
  // The uncommitted pages went to the WAL: the kill hits a real transaction.
  uint64_t walSize = 0;
  llvm::sys::fs::file_size(file("t.db-wal"), walSize);
  EXPECT_GT(walSize, 100000u);
  ASSERT_TRUE(WIFSIGNALED(c.kill9()));

  llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
  ASSERT_TRUE(bool(db)) << errorOf(std::move(db));
  EXPECT_EQ(query(file("t.db"), "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(count(file("t.db"), "plans", "text LIKE 'held-%'"), 0);
  EXPECT_EQ(count(file("t.db"), "measurements"), 1);
  EXPECT_TRUE(bool(db->recordMeasurement(sample("k#1", "coalesce", 1.5))));
}

TEST_F(TuneDBTest, LookupWhileAnotherProcessHoldsTheWriteLock) {
  {
    llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
    ASSERT_TRUE(bool(db));
    BestChoice c;
    c.kernelKey = "k#1";
    c.gpu = {"NVIDIA H200", "sm_90"};
    c.shape = "*";
    c.plan = "coalesce";
    ASSERT_OK(db->setBest(c));
  }
  Child c = Child::spawn({"hold", file("t.db")});
  ASSERT_GT(c.pid, 0);
  ASSERT_EQ(c.line(), "holding\n");

  // The reader does not wait for the writer (WAL).
  auto start = std::chrono::steady_clock::now();
  PlanLookup lookup(file("t.db"));
  std::optional<BestChoice> b = lookup.find({"k#1", "sm_90", "", "*"});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->plan, "coalesce");
  EXPECT_TRUE(lookup.takeWarnings().empty());
  EXPECT_LT(seconds, 0.15);

  // A writer gives up after its busy timeout with a clear error.
  TuneDBOptions o;
  o.busyTimeoutMs = 100;
  llvm::Expected<TuneDB> w = TuneDB::open(file("t.db"), o);
  ASSERT_TRUE(bool(w)) << errorOf(std::move(w));
  std::string err = errorOf(w->recordMeasurement(sample("k#1", "coalesce", 1.5)));
  EXPECT_NE(err.find("locked"), std::string::npos) << err;
  c.kill9();
}

//===----------------------------------------------------------------------===//
// Damaged files and the fail-open lookup
//===----------------------------------------------------------------------===//

TEST_F(TuneDBTest, GarbageFileIsRefusedAndLookupsFailOpen) {
  std::string garbage(65536, '\0');
  std::mt19937 rng(1);
  for (char &ch : garbage)
    ch = char(rng());
  {
    std::ofstream(file("bad.db"), std::ios::binary) << garbage;
  }

  std::string err = errorOf(TuneDB::open(file("bad.db")));
  EXPECT_NE(err.find("'" + file("bad.db") + "' is not a cudal1 tuning database"), std::string::npos)
      << err;
  EXPECT_NE(err.find("not a database"), std::string::npos) << err;
  EXPECT_EQ(readFile(file("bad.db")), garbage); // a writer did not "repair" it

  PlanLookup lookup(file("bad.db"));
  EXPECT_FALSE(lookup.find({"k#1", "sm_90", "", "*"}));
  EXPECT_FALSE(lookup.find({"k#2", "sm_90", "", "*"}));
  std::vector<std::string> w = lookup.takeWarnings();
  ASSERT_EQ(w.size(), 1u); // once, not per lookup
  EXPECT_NE(w[0].find("not a cudal1 tuning database"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("compiling the original code"), std::string::npos) << w[0];

  PlanLookup missing(file("none.db"));
  EXPECT_FALSE(missing.find({"k#1", "sm_90", "", "*"}));
  w = missing.takeWarnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("no tuning database at"), std::string::npos) << w[0];
}

TEST_F(TuneDBTest, DamagedPagesFailOpen) {
  {
    llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
    ASSERT_TRUE(bool(db));
    std::vector<MeasurementRow> ms;
    for (int i = 0; i < 300; ++i)
      ms.push_back(sample("k#" + std::to_string(i), "unroll(loop=0, factor=4)", 1.5));
    ASSERT_TRUE(bool(db->recordMeasurements(ms)));
    BestChoice c;
    c.kernelKey = "k#7";
    c.gpu = {"NVIDIA H200", "sm_90"};
    c.shape = "*";
    c.plan = "unroll(loop=0, factor=4)";
    ASSERT_OK(db->setBest(c));
  } // closed: the WAL is checkpointed into the file and removed
  ASSERT_FALSE(llvm::sys::fs::exists(file("t.db-wal")));
  std::string bytes = readFile(file("t.db"));
  ASSERT_GT(bytes.size(), 16384u);
  // Keep page 1 (header and schema); overwrite every other page.
  std::mt19937 rng(2);
  for (size_t i = 4096; i < bytes.size(); ++i)
    bytes[i] = char(rng());
  {
    std::ofstream(file("t.db"), std::ios::binary | std::ios::trunc) << bytes;
  }

  PlanLookup lookup(file("t.db"));
  EXPECT_FALSE(lookup.find({"k#7", "sm_90", "", "*"}));
  std::vector<std::string> w = lookup.takeWarnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("malformed"), std::string::npos) << w[0];

  // A truncated file: the same, never a crash.
  bytes.resize(bytes.size() / 3);
  {
    std::ofstream(file("t.db"), std::ios::binary | std::ios::trunc) << bytes;
  }
  PlanLookup truncated(file("t.db"));
  EXPECT_FALSE(truncated.find({"k#7", "sm_90", "", "*"}));
  EXPECT_FALSE(truncated.takeWarnings().empty());
}

//===----------------------------------------------------------------------===//
// Crafted files: objects that are not tables, slow SQL, locks
//===----------------------------------------------------------------------===//

/// A database whose `gpus` is a view over an unbounded recursive query:
/// before the table check, opening it and --db-stats never returned.
TEST_F(TuneDBTest, ViewInPlaceOfATableIsRefusedAtOnce) {
  {
    ASSERT_TRUE(bool(TuneDB::open(file("t.db"))));
  }
  execSql(file("t.db"), "PRAGMA foreign_keys = OFF; DROP TABLE gpus; "
                        "CREATE VIEW gpus(id, name, arch) AS WITH RECURSIVE n(i) AS "
                        "(SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i, 'x', 'sm_90' FROM n");
  for (bool ro : {true, false}) {
    auto start = std::chrono::steady_clock::now();
    std::string err = errorOf(TuneDB::open(file("t.db"), ro ? readOnly() : TuneDBOptions()));
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_NE(err.find("is not a cudal1 tuning database ('gpus' is a view, not a table)"),
              std::string::npos)
        << err;
    EXPECT_LT(seconds, 1.0);
  }
  PlanLookup lookup(file("t.db"));
  EXPECT_TRUE(lookup.tunedKernels("sm_90").empty());
  std::vector<std::string> w = lookup.takeWarnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("'gpus' is a view"), std::string::npos) << w[0];
}

TEST_F(TuneDBTest, MissingTableIsRefused) {
  {
    ASSERT_TRUE(bool(TuneDB::open(file("t.db"))));
  }
  execSql(file("t.db"), "PRAGMA foreign_keys = OFF; DROP VIEW best_view; DROP TABLE best");
  std::string err = errorOf(TuneDB::open(file("t.db"), readOnly()));
  EXPECT_NE(err.find("not a cudal1 tuning database (no table 'best')"), std::string::npos) << err;
}

/// SQL that runs forever inside a table's trigger (what a check of object
/// types cannot see) is stopped by the query deadline.
TEST_F(TuneDBTest, QueryDeadlineStopsEndlessSql) {
  {
    ASSERT_TRUE(bool(TuneDB::open(file("t.db"))));
  }
  execSql(file("t.db"), "CREATE TRIGGER forever AFTER INSERT ON plans BEGIN "
                        "SELECT count(*) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                        "SELECT i + 1 FROM n) SELECT i FROM n); END");
  TuneDBOptions o;
  o.queryTimeoutMs = 300;
  llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"), o);
  ASSERT_TRUE(bool(db)) << errorOf(std::move(db));
  auto start = std::chrono::steady_clock::now();
  std::string err = errorOf(db->recordMeasurement(sample("k#1", "coalesce", 1.5)));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(err.find("took longer than 300 ms"), std::string::npos) << err;
  EXPECT_LT(seconds, 2.0);
  // The connection is usable afterwards, and nothing was half written.
  EXPECT_EQ(count(file("t.db"), "measurements"), 0);
  llvm::Expected<std::vector<TuneDB::TunedKernel>> ks = db->tunedKernels("sm_90");
  EXPECT_TRUE(bool(ks)) << errorOf(std::move(ks));
}

/// A writer in exclusive locking mode shuts WAL readers out: the lookup
/// says the file is locked, not that it is no tuning database.
TEST_F(TuneDBTest, ExclusiveLockIsReportedAsALock) {
  {
    llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
    ASSERT_TRUE(bool(db));
    ASSERT_TRUE(bool(db->recordMeasurement(sample("k#1", "coalesce", 1.5))));
  }
  Child c = Child::spawn({"exclusive", file("t.db")});
  ASSERT_GT(c.pid, 0);
  ASSERT_EQ(c.line(), "holding\n");
  PlanLookup lookup(file("t.db"));
  EXPECT_TRUE(lookup.tunedKernels("sm_90").empty());
  std::vector<std::string> w = lookup.takeWarnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("is locked by another process"), std::string::npos) << w[0];
  EXPECT_EQ(w[0].find("not a cudal1 tuning database"), std::string::npos) << w[0];
  c.kill9();
}

//===----------------------------------------------------------------------===//
// Bounded plans
//===----------------------------------------------------------------------===//

TEST(PlanSteps, CountsStepsWithoutParsing) {
  EXPECT_EQ(countPlanSteps(""), 0u);
  EXPECT_EQ(countPlanSteps("coalesce"), 1u);
  EXPECT_EQ(countPlanSteps("@k: a; b(x=1; y=2); @#2: c"), 3u);
  EXPECT_EQ(countPlanSteps(" ; a;; b ; "), 2u);
}

TEST_F(TuneDBTest, BestChoicesHaveAtMostSixteenSteps) {
  llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
  ASSERT_TRUE(bool(db));
  std::string plan = "@k: restrict";
  for (unsigned i = 1; i < kMaxPlanSteps; ++i)
    plan += "; @k: restrict";
  BestChoice c;
  c.kernelKey = "k#1";
  c.gpu = {"NVIDIA H200", "sm_90"};
  c.shape = "*";
  c.plan = plan; // 16 steps: fine
  ASSERT_OK(db->setBest(c));
  c.plan = plan + "; @k: restrict";
  llvm::Error e = db->setBest(c);
  ASSERT_TRUE(bool(e));
  std::string err = llvm::toString(std::move(e));
  EXPECT_NE(err.find("the plan has 17 steps, more than a best choice may have (16)"),
            std::string::npos)
      << err;

  // Written past the library, such a row is not returned as a plan.
  execSql(file("t.db"), "INSERT INTO plans(text) VALUES ('" + c.plan +
                            "'); UPDATE best SET plan_id = (SELECT max(id) FROM plans)");
  llvm::Expected<std::vector<TuneDB::TunedKernel>> ks = db->tunedKernels("sm_90");
  ASSERT_TRUE(bool(ks));
  ASSERT_EQ(ks->size(), 1u);
  EXPECT_EQ((*ks)[0].plan, "");
  EXPECT_NE((*ks)[0].refused.find("17 steps"), std::string::npos) << (*ks)[0].refused;
  EXPECT_NE(errorOf(db->bestPlan({"k#1", "sm_90", "", "*"})).find("17 steps"), std::string::npos);
}

/// chooseBest (the plugin's choice without the database open) and
/// bestPlan's query agree.
TEST_F(TuneDBTest, ChooseBestAgreesWithBestPlan) {
  llvm::Expected<TuneDB> db = TuneDB::open(file("t.db"));
  ASSERT_TRUE(bool(db));
  struct Row {
    const char *gpu, *arch, *shape, *plan;
    std::optional<double> lo;
    const char *at;
  } rows[] = {
      {"NVIDIA H200", "sm_90", "*", "a", 1.2, "2026-12-02T10:00:00Z"},
      {"NVIDIA H100", "sm_90", "*", "b", 1.3, "2026-12-01T10:00:00Z"},
      {"NVIDIA H20", "sm_90", "*", "c", std::nullopt, "2026-12-03T10:00:00Z"},
      {"NVIDIA H200", "sm_90", "grid=1", "d", 1.0, "2026-12-02T10:00:00Z"},
      {"NVIDIA A100", "sm_80", "*", "e", 2.0, "2026-12-02T10:00:00Z"},
      {"NVIDIA H800", "sm_90", "*", "f", 1.3, "2026-12-02T10:00:00Z"},
  };
  for (const Row &r : rows) {
    BestChoice c;
    c.kernelKey = "k#1";
    c.gpu = {r.gpu, r.arch};
    c.shape = r.shape;
    c.plan = r.plan;
    c.speedupLo = r.lo;
    c.chosenAt = r.at;
    ASSERT_OK(db->setBest(c));
  }
  llvm::Expected<std::vector<TuneDB::TunedKernel>> ks = db->tunedKernels("");
  ASSERT_TRUE(bool(ks));
  for (const char *gpu : {"", "NVIDIA H200", "NVIDIA H100", "NVIDIA H20", "NVIDIA B200"})
    for (const char *arch : {"sm_90", "sm_80"})
      for (const char *shape : {"*", "grid=1", "grid=2"}) {
        BestQuery q{"k#1", arch, gpu, shape};
        llvm::Expected<std::optional<BestChoice>> b = db->bestPlan(q);
        ASSERT_TRUE(bool(b));
        const TuneDB::TunedKernel *k = chooseBest(*ks, q);
        ASSERT_EQ(b->has_value(), k != nullptr) << gpu << " " << arch << " " << shape;
        if (k)
          EXPECT_EQ((*b)->plan, k->plan) << gpu << " " << arch << " " << shape;
      }
}

} // namespace
