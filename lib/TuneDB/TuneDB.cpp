// The tuning database on the sqlite3 C API: prepared statements, WAL, every
// write one BEGIN IMMEDIATE transaction retried while another process holds
// the lock (docs/TuneDB.md says why each setting is what it is).
#include "cudal1/TuneDB/TuneDB.h"
#include "cudal1/Rewrite/Plan.h"

#include "llvm/Support/JSON.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <sqlite3.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <random>
#include <set>
#include <thread>

using namespace llvm;

namespace cudal1 {

namespace {

/// An SQLite failure: the extended result code kept so that the write loop
/// can tell "locked, try again" from real errors.
class SqliteError : public ErrorInfo<SqliteError> {
public:
  static char ID;
  SqliteError(int code, std::string message, std::string detail = "")
      : code(code), message(std::move(message)), detail(std::move(detail)) {}
  void log(raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override { return inconvertibleErrorCode(); }
  int code;
  std::string message;
  std::string detail; ///< SQLite's own words, without the context
};
char SqliteError::ID;

bool isBusy(int code) {
  int primary = code & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

/// Plans are one line of a few steps; anything longer or with control
/// characters is not a plan (DESIGN.md: the database holds no source).
constexpr size_t kMaxPlanBytes = 16 * 1024;
constexpr size_t kMaxKeyBytes = 4096;

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool hasControlChars(StringRef s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f)
      return true;
  return false;
}

/// 2026-12-02T15:04:05Z, optionally with fractional seconds.
bool isUtcTimestamp(StringRef s) {
  static const char pattern[] = "dddd-dd-ddTdd:dd:dd";
  if (s.size() < 20 || s.back() != 'Z')
    return false;
  for (size_t i = 0; i + 1 < sizeof pattern; ++i)
    if (pattern[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pattern[i])
      return false;
  StringRef rest = s.drop_front(19).drop_back();
  if (rest.empty())
    return true;
  return rest.size() > 1 && rest[0] == '.' &&
         rest.drop_front().find_first_not_of("0123456789") == StringRef::npos;
}

Error invalid(const Twine &what) { return createStringError(inconvertibleErrorCode(), what); }

Error checkLine(StringRef field, StringRef value, bool mayBeEmpty = false) {
  if (value.empty() && !mayBeEmpty)
    return invalid(field + " is empty");
  if (value.size() > kMaxKeyBytes)
    return invalid(field + " is longer than " + Twine(kMaxKeyBytes) + " bytes");
  if (hasControlChars(value))
    return invalid(field + " holds control characters");
  return Error::success();
}

Error checkPlanText(StringRef plan) {
  if (plan.size() > kMaxPlanBytes)
    return invalid("the plan is " + Twine(plan.size()) + " bytes, more than a plan (" +
                   Twine(kMaxPlanBytes) + "); the database stores plans, never source");
  if (hasControlChars(plan))
    return invalid("the plan holds control characters; the database stores one-line "
                   "plans, never source");
  return Error::success();
}

/// What may be a best choice: a plan of at most kMaxPlanSteps steps.
Error checkChosenPlan(StringRef plan) {
  if (Error e = checkPlanText(plan))
    return e;
  if (unsigned n = countPlanSteps(plan); n > kMaxPlanSteps)
    return invalid("the plan has " + Twine(n) + " steps, more than a best choice may have (" +
                   Twine(kMaxPlanSteps) + ")");
  return Error::success();
}

Error checkFinite(StringRef field, const std::optional<double> &v) {
  if (v && !std::isfinite(*v))
    return invalid(field + " is not a finite number");
  return Error::success();
}

/// The timing columns of a measurement: the speedup and its interval only
/// when timed, a time only when known. Untimed rows of older files may carry
/// a baseline time alone (bench/data's imported campaigns), so each column
/// stands on its own.
struct StoredTiming {
  std::optional<double> speedup, lo, hi, timeMs, baselineMs;
};

StoredTiming storedTiming(const Measurement &m) {
  StoredTiming t;
  if (m.timed) {
    t.speedup = m.speedup;
    t.lo = m.lo;
    t.hi = m.hi;
  }
  if (m.timeMs != 0)
    t.timeMs = m.timeMs;
  if (m.baselineMs != 0)
    t.baselineMs = m.baselineMs;
  return t;
}

Error validate(const MeasurementRow &m) {
  if (Error e = checkLine("the kernel key", m.kernelKey))
    return e;
  if (Error e = checkLine("the kernel name", m.kernelName, /*mayBeEmpty=*/true))
    return e;
  if (Error e = checkPlanText(m.plan))
    return e;
  if (Error e = checkLine("the GPU name", m.gpu.name))
    return e;
  if (Error e = checkLine("the GPU architecture", m.gpu.arch))
    return e;
  if (Error e = checkLine("the launch shape", m.shape))
    return e;
  StoredTiming t = storedTiming(m.measured);
  using Number = std::pair<const char *, const std::optional<double> *>;
  for (const Number &n :
       {Number{"the speedup", &t.speedup}, Number{"the speedup's lower bound", &t.lo},
        Number{"the speedup's upper bound", &t.hi}, Number{"the time", &t.timeMs},
        Number{"the baseline time", &t.baselineMs}})
    if (Error e = checkFinite(n.first, *n.second))
      return e;
  using Text = std::pair<const char *, const std::string *>;
  for (const Text &t : {Text{"the driver version", &m.driverVersion},
                        Text{"the CUDA version", &m.cudaVersion}, Text{"the session", &m.session}})
    if (Error e = checkLine(t.first, *t.second, /*mayBeEmpty=*/true))
      return e;
  if (!m.measuredAt.empty() && !isUtcTimestamp(m.measuredAt))
    return invalid("measuredAt '" + m.measuredAt + "' is not a UTC time like 2026-12-02T15:04:05Z");
  return Error::success();
}

} // namespace

//===----------------------------------------------------------------------===//
// The connection and its statements
//===----------------------------------------------------------------------===//

struct TuneDB::Impl {
  using Clock = std::chrono::steady_clock;
  std::string path;
  sqlite3 *db = nullptr;
  TuneDBMode mode = TuneDBMode::ReadWrite;
  unsigned busyTimeoutMs = 0;
  unsigned queryTimeoutMs = 0;
  /// When the running operation's SQL must stop (Clock::time_point::max()
  /// while none runs); checked by the progress handler.
  Clock::time_point deadline = Clock::time_point::max();
  int version = 0;
  DenseMap<const char *, sqlite3_stmt *> statements;
  /// What the migrations run by this connection had to say.
  std::vector<std::string> remarks;

  static int onProgress(void *self) {
    return Clock::now() > static_cast<Impl *>(self)->deadline ? 1 : 0;
  }
  /// (Re)starts the deadline of the running operation.
  void restartDeadline() {
    if (queryTimeoutMs)
      deadline = Clock::now() + std::chrono::milliseconds(queryTimeoutMs);
  }
  /// The deadline of one public operation; nested ones share the outer one.
  class Deadline {
  public:
    explicit Deadline(Impl &impl) : impl(impl), outer(impl.deadline == Clock::time_point::max()) {
      if (outer)
        impl.restartDeadline();
    }
    ~Deadline() {
      if (outer)
        impl.deadline = Clock::time_point::max();
    }

  private:
    Impl &impl;
    bool outer;
  };

  ~Impl() {
    for (auto &s : statements)
      sqlite3_finalize(s.second);
    // _v2: a statement still alive elsewhere cannot keep the handle open.
    if (db)
      sqlite3_close_v2(db);
  }

  Error fail(int rc, const Twine &what) const {
    std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if ((rc & 0xff) == SQLITE_INTERRUPT)
      detail = "took longer than " + std::to_string(queryTimeoutMs) +
               " ms (the query deadline; a crafted or huge database?)";
    return make_error<SqliteError>(
        rc, ("tuning database '" + path + "': " + what + ": " + detail).str(), detail);
  }

  /// A statement prepared once per connection and kept: the plugin's lookup
  /// and the driver's writes run the same few statements many times.
  Expected<sqlite3_stmt *> statement(const char *sql) {
    auto it = statements.find(sql);
    if (it != statements.end())
      return it->second;
    sqlite3_stmt *s = nullptr;
    int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
    if (rc != SQLITE_OK)
      return fail(rc, "preparing a query");
    statements[sql] = s;
    return s;
  }

  Error exec(const char *sql, const Twine &what) {
    char *msg = nullptr;
    int rc = sqlite3_exec(db, sql, nullptr, nullptr, &msg);
    sqlite3_free(msg);
    if (rc != SQLITE_OK)
      return fail(rc, what);
    return Error::success();
  }

  Expected<int64_t> pragmaInt(const char *sql) {
    sqlite3_stmt *s = nullptr;
    int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    if (rc == SQLITE_OK)
      rc = sqlite3_step(s);
    int64_t v = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW)
      return fail(rc, Twine("reading ") + sql);
    return v;
  }

  Error withWrite(function_ref<Error()> body);
  Error checkTables();
  Error migrate(ArrayRef<Migration> migrations);
  /// The kMigrationCanonicalPlans step; inside migrate's transaction.
  /// `outcome` receives what it did, for the migration's remark.
  Error canonicalizePlans(std::string &outcome);
  Expected<int64_t> rowId(const char *insert, const char *select,
                          function_ref<void(sqlite3_stmt *)> bind);
  Expected<int64_t> kernelId(StringRef key, StringRef name);
  Expected<int64_t> planId(StringRef text);
  Expected<int64_t> gpuId(const GpuKey &gpu);
  Expected<int64_t> variantId(int64_t kernel, int64_t plan);
  Expected<int64_t> insertMeasurement(const MeasurementRow &m);
  /// A row's outcome, judge and timing columns as its Measurement; an
  /// outcome or judge this build does not know is an error naming the row.
  Error readMeasured(MeasurementRow &m, const std::string &outcome, const std::string &judge,
                     const StoredTiming &t);
};

namespace {

/// Binds by position; resets the statement when the scope ends so that it
/// holds no read lock between uses.
class Bound {
public:
  Bound(sqlite3_stmt *s) : s(s) {}
  ~Bound() {
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
  }
  Bound &text(int i, StringRef v) {
    sqlite3_bind_text(s, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Bound &int64(int i, int64_t v) {
    sqlite3_bind_int64(s, i, v);
    return *this;
  }
  Bound &real(int i, const std::optional<double> &v) {
    v ? sqlite3_bind_double(s, i, *v) : sqlite3_bind_null(s, i);
    return *this;
  }
  Bound &integer(int i, const std::optional<int> &v) {
    v ? sqlite3_bind_int(s, i, *v) : sqlite3_bind_null(s, i);
    return *this;
  }
  Bound &int64(int i, const std::optional<int64_t> &v) {
    v ? sqlite3_bind_int64(s, i, *v) : sqlite3_bind_null(s, i);
    return *this;
  }
  int step() { return sqlite3_step(s); }

private:
  sqlite3_stmt *s;
};

std::string columnText(sqlite3_stmt *s, int i) {
  const unsigned char *t = sqlite3_column_text(s, i);
  return t ? std::string(reinterpret_cast<const char *>(t), size_t(sqlite3_column_bytes(s, i)))
           : std::string();
}
std::optional<double> columnReal(sqlite3_stmt *s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL)
    return std::nullopt;
  return sqlite3_column_double(s, i);
}
std::optional<int> columnInt(sqlite3_stmt *s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL)
    return std::nullopt;
  return sqlite3_column_int(s, i);
}
std::optional<int64_t> columnInt64(sqlite3_stmt *s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL)
    return std::nullopt;
  return sqlite3_column_int64(s, i);
}

} // namespace

Error TuneDB::Impl::withWrite(function_ref<Error()> body) {
  if (mode == TuneDBMode::ReadOnly)
    return invalid("tuning database '" + path + "' is open read-only");
  // busy_timeout already waits inside BEGIN IMMEDIATE; this loop covers
  // the BUSY answers SQLite gives without waiting (a COMMIT that cannot
  // checkpoint, recovery of a killed writer's WAL) and bounds the total.
  auto start = std::chrono::steady_clock::now();
  // The deadline restarts once the lock is held; the caller's comes back.
  Clock::time_point callerDeadline = deadline;
  auto restoreDeadline = make_scope_exit([&] { deadline = callerDeadline; });
  std::minstd_rand jitter(unsigned(std::hash<std::thread::id>()(std::this_thread::get_id())) ^
                          unsigned(getpid()));
  for (unsigned attempt = 0;; ++attempt) {
    // Waiting for the lock does not count against the query deadline.
    deadline = Clock::time_point::max();
    Error e = exec("BEGIN IMMEDIATE", "starting a write transaction");
    if (!e) {
      restartDeadline();
      e = body();
      if (!e)
        e = exec("COMMIT", "committing");
    }
    if (!e)
      return Error::success();
    if (!sqlite3_get_autocommit(db))
      consumeError(exec("ROLLBACK", "rolling back"));
    bool busy = false;
    e = handleErrors(std::move(e), [&](std::unique_ptr<SqliteError> se) -> Error {
      if (isBusy(se->code)) {
        busy = true;
        return Error::success();
      }
      return Error(std::move(se));
    });
    if (!busy)
      return e;
    auto waited = std::chrono::steady_clock::now() - start;
    if (waited > std::chrono::milliseconds(busyTimeoutMs))
      return make_error<SqliteError>(SQLITE_BUSY, ("tuning database '" + path +
                                                   "': still locked by another process after " +
                                                   Twine(busyTimeoutMs) + " ms")
                                                      .str());
    unsigned ms = 1 + jitter() % (1u << std::min(attempt, 5u));
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
}

Error TuneDB::Impl::migrate(ArrayRef<Migration> migrations) {
  int target = int(migrations.size());
  return withWrite([&]() -> Error {
    remarks.clear(); // a retry starts over
    // Another process may have migrated since this one looked.
    Expected<int64_t> v = pragmaInt("PRAGMA user_version");
    if (!v)
      return v.takeError();
    version = int(*v);
    if (version > target)
      return invalid("tuning database '" + path + "' has schema version " + Twine(version) +
                     ", newer than this cudal1's (" + Twine(target) + "); use a newer cudal1");
    for (int from = version; from < target; ++from) {
      const Migration &m = migrations[from];
      if (m.from != from)
        return invalid("migration list out of order at version " + Twine(from));
      if (Error e = exec(m.sql, "migrating from schema version " + Twine(from) + " to " +
                                    Twine(from + 1) + " (" + m.summary + ")"))
        return e;
      std::string outcome;
      if (m.code && StringRef(m.code) == kMigrationCanonicalPlans) {
        if (Error e = canonicalizePlans(outcome))
          return e;
      } else if (m.code) {
        return invalid("migration " + Twine(from) + " names an unknown step '" + m.code + "'");
      }
      // One line per migration of a file that existed (creating one is no
      // news): what changed, and what the step did.
      if (version > 0)
        remarks.push_back("tuning database '" + path + "' migrated from schema version " +
                          std::to_string(from) + " to " + std::to_string(from + 1) + " (" +
                          m.summary + ")" + (outcome.empty() ? "" : ": " + outcome));
    }
    if (version == target)
      return Error::success();
    std::string pragmas = "PRAGMA application_id = " + std::to_string(kTuneDBApplicationId) +
                          "; PRAGMA user_version = " + std::to_string(target);
    if (Error e = exec(pragmas.c_str(), "recording the schema version"))
      return e;
    version = target;
    return Error::success();
  });
}

Error TuneDB::Impl::canonicalizePlans(std::string &outcome) {
  // One statement at a time, all in the caller's write transaction: a
  // failure leaves the file at its old version with its old texts.
  auto run = [&](const char *sql, std::initializer_list<int64_t> ints,
                 const std::string &text = "") -> Expected<std::vector<int64_t>> {
    sqlite3_stmt *st = nullptr;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, nullptr);
    if (rc != SQLITE_OK)
      return fail(rc, "migrating plan texts");
    auto finalize = make_scope_exit([&] { sqlite3_finalize(st); });
    int i = 1;
    for (int64_t v : ints)
      sqlite3_bind_int64(st, i++, v);
    if (!text.empty())
      sqlite3_bind_text(st, i, text.data(), int(text.size()), SQLITE_TRANSIENT);
    std::vector<int64_t> out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
      out.push_back(sqlite3_column_int64(st, 0));
    if (rc != SQLITE_DONE)
      return fail(rc, "migrating plan texts");
    return out;
  };
  std::vector<std::pair<int64_t, std::string>> plans;
  {
    sqlite3_stmt *st = nullptr;
    int rc = sqlite3_prepare_v2(db, "SELECT id, text FROM plans ORDER BY id", -1, &st, nullptr);
    if (rc != SQLITE_OK)
      return fail(rc, "migrating plan texts");
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
      plans.push_back({sqlite3_column_int64(st, 0), columnText(st, 1)});
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
      return fail(rc, "migrating plan texts");
  }
  unsigned unparsed = 0, rewritten = 0, merged = 0;
  std::string firstUnparsed;
  for (const auto &[id, text] : plans) {
    if (text.empty())
      continue; // the original
    Expected<Plan> plan = parsePlan(text);
    if (!plan) {
      consumeError(plan.takeError());
      if (!unparsed++)
        firstUnparsed = text;
      continue;
    }
    std::string canonical = printPlan(*plan);
    if (canonical == text)
      continue;
    Expected<std::vector<int64_t>> same =
        run("SELECT id FROM plans WHERE text = ?1", {}, canonical);
    if (!same)
      return same.takeError();
    if (same->empty()) {
      if (Expected<std::vector<int64_t>> r =
              run("UPDATE plans SET text = ?2 WHERE id = ?1", {id}, canonical);
          !r)
        return r.takeError();
      ++rewritten;
      continue;
    }
    // Another spelling of a plan already stored: its variants (and their
    // measurements) and best choices move to that row.
    int64_t into = same->front();
    Expected<std::vector<int64_t>> variants =
        run("SELECT id FROM variants WHERE plan_id = ?1", {id});
    if (!variants)
      return variants.takeError();
    for (int64_t v : *variants) {
      Expected<std::vector<int64_t>> twin =
          run("SELECT w.id FROM variants v JOIN variants w ON w.kernel_id = v.kernel_id "
              "AND w.plan_id = ?2 WHERE v.id = ?1",
              {v, into});
      if (!twin)
        return twin.takeError();
      Expected<std::vector<int64_t>> r =
          twin->empty() ? run("UPDATE variants SET plan_id = ?2 WHERE id = ?1", {v, into})
                        : run("UPDATE measurements SET variant_id = ?2 WHERE variant_id = ?1",
                              {v, twin->front()});
      if (!r)
        return r.takeError();
      if (!twin->empty())
        if (Expected<std::vector<int64_t>> d = run("DELETE FROM variants WHERE id = ?1", {v}); !d)
          return d.takeError();
    }
    if (Expected<std::vector<int64_t>> r =
            run("UPDATE best SET plan_id = ?2 WHERE plan_id = ?1", {id, into});
        !r)
      return r.takeError();
    if (Expected<std::vector<int64_t>> r = run("DELETE FROM plans WHERE id = ?1", {id}); !r)
      return r.takeError();
    ++merged;
  }
  std::vector<std::string> did;
  if (rewritten || merged)
    did.push_back(std::to_string(rewritten + merged) +
                  " plan text(s) rewritten in the canonical form (" + std::to_string(merged) +
                  " merged into an equal plan)");
  if (unparsed)
    did.push_back(std::to_string(unparsed) +
                  " plan text(s) do not parse and were left as they are (the first: '" +
                  firstUnparsed + "')");
  outcome =
      did.empty() ? "every plan text was in the canonical form already" : llvm::join(did, "; ");
  return Error::success();
}

Error TuneDB::Impl::checkTables() {
  // Every object the queries read must be a plain table: the file may be
  // crafted, and a view of the same name (over an unbounded recursive
  // query, say) would run its SQL on every lookup.
  sqlite3_stmt *s = nullptr;
  int rc = sqlite3_prepare_v2(db, "SELECT type, sql FROM sqlite_master WHERE name = ?1", -1, &s,
                              nullptr);
  if (rc != SQLITE_OK)
    return fail(rc, "reading the schema");
  auto finalize = make_scope_exit([&] { sqlite3_finalize(s); });
  for (const char *table : tuneDBTables()) {
    sqlite3_reset(s);
    sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
    rc = sqlite3_step(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
      return fail(rc, "reading the schema");
    std::string type = rc == SQLITE_ROW ? columnText(s, 0) : "";
    std::string sql = rc == SQLITE_ROW ? columnText(s, 1) : "";
    if (type.empty())
      return invalid("tuning database '" + path + "' is not a cudal1 tuning database (no table '" +
                     table + "')");
    if (type != "table" || StringRef(sql).take_front(14).equals_insensitive("create virtual"))
      return invalid("tuning database '" + path + "' is not a cudal1 tuning database ('" + table +
                     "' is a " + (type == "table" ? std::string("virtual table") : type) +
                     ", not a table)");
  }
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Opening
//===----------------------------------------------------------------------===//

TuneDB::TuneDB(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
TuneDB::TuneDB(TuneDB &&) noexcept = default;
TuneDB &TuneDB::operator=(TuneDB &&) noexcept = default;
TuneDB::~TuneDB() = default;

std::vector<std::string> TuneDB::migrationRemarks() const { return impl->remarks; }

int TuneDB::schemaVersion() const { return impl->version; }
StringRef TuneDB::path() const { return impl->path; }

Expected<TuneDB> TuneDB::open(StringRef path, const TuneDBOptions &options) {
  auto impl = std::make_unique<Impl>();
  impl->path = path.str();
  impl->mode = options.mode;
  impl->busyTimeoutMs = options.busyTimeoutMs;
  ArrayRef<Migration> migrations =
      options.migrations.empty() ? tuneDBMigrations() : options.migrations;
  int target = int(migrations.size());
  bool readOnly = options.mode == TuneDBMode::ReadOnly;
  auto prefix = [&] { return ("tuning database '" + path + "'").str(); };

  // 1. The file. Read-only never creates one (SQLite would not either, but
  //    this says so plainly); read-write creates the directory too.
  if (path.empty())
    return invalid("no tuning database path given");
  if (sys::fs::is_directory(path))
    return invalid(prefix() + " is a directory");
  if (readOnly && !sys::fs::exists(path))
    return invalid("no tuning database at '" + path + "'");
  if (!readOnly) {
    StringRef dir = sys::path::parent_path(path);
    if (!dir.empty())
      if (std::error_code ec = sys::fs::create_directories(dir))
        return invalid(prefix() + ": cannot create its directory: " + ec.message());
  }
  // A reader opens a writable file for writing all the same (and never
  // writes: query_only below): only such a connection, the last to close,
  // removes the -wal and -shm files that reading a WAL database creates, so
  // a build that only looked up plans leaves nothing beside the database.
  // A reader that cannot write the file (another user's database, a
  // read-only directory) would leave those files behind, owned by it, and
  // the owner's next write would fail on them; while no writer has a WAL
  // open it reads the file as immutable (no locks, no -wal, no -shm),
  // otherwise it shares the writer's -wal and -shm.
  bool canWrite = !sys::fs::access(path, sys::fs::AccessMode::Write);
  bool immutable = false;
  if (readOnly && !canWrite) {
    SmallString<256> wal(path);
    wal += "-wal";
    immutable = !sys::fs::exists(wal);
  }
  int flags = !readOnly  ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
              : canWrite ? SQLITE_OPEN_READWRITE
                         : SQLITE_OPEN_READONLY;
  std::string name = impl->path;
  if (immutable) {
    // A URI: characters that URIs reserve are escaped.
    SmallString<256> abs(path);
    sys::fs::make_absolute(abs);
    name = "file:";
    for (char c : abs) {
      if (c == '%' || c == '?' || c == '#')
        name += "%" + utohexstr((unsigned char)c, false, 2);
      else
        name += c;
    }
    name += "?immutable=1";
    flags |= SQLITE_OPEN_URI;
  }
  int rc = sqlite3_open_v2(name.c_str(), &impl->db, flags, nullptr);
  if (rc != SQLITE_OK) {
    int primary = rc & 0xff;
    if (primary == SQLITE_CANTOPEN || primary == SQLITE_PERM || primary == SQLITE_READONLY)
      return invalid(prefix() + " cannot be read (" + sqlite3_errstr(rc) + ")");
    return impl->fail(rc, "opening");
  }
  impl->queryTimeoutMs = options.queryTimeoutMs;
  Impl::Deadline deadline(*impl);
  sqlite3_progress_handler(impl->db, 1000, &Impl::onProgress, impl.get());

  // 2. Connection settings. A database is data from elsewhere (a CI
  //    artefact): defensive mode and untrusted schema keep its SQL (views,
  //    triggers) from calling functions with side effects.
  sqlite3_extended_result_codes(impl->db, 1);
  sqlite3_busy_timeout(impl->db, int(options.busyTimeoutMs));
  sqlite3_db_config(impl->db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(impl->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  if (Error e = impl->exec("PRAGMA foreign_keys = ON; PRAGMA cell_size_check = ON",
                           "configuring the connection"))
    return std::move(e);
  if (readOnly)
    if (Error e = impl->exec("PRAGMA query_only = ON", "configuring the connection"))
      return std::move(e);

  // 3. Is it ours, and of a version this build knows? The first read of
  //    the header is where a garbage file shows up ("file is not a database").
  //    One read transaction: another process may be creating the schema,
  //    and the three answers must come from the same state of the file.
  if (Error e = impl->exec("BEGIN", "starting a read transaction"))
    return std::move(e);
  auto endRead = make_scope_exit([&] {
    if (!sqlite3_get_autocommit(impl->db))
      consumeError(impl->exec("COMMIT", "ending a read transaction"));
  });
  Expected<int64_t> appId = impl->pragmaInt("PRAGMA application_id");
  if (!appId)
    return handleErrors(appId.takeError(), [&](const SqliteError &se) -> Error {
      // Only a file SQLite cannot read as a database is "not one": a lock,
      // missing permissions or an I/O error say so instead.
      switch (se.code & 0xff) {
      case SQLITE_NOTADB:
      case SQLITE_FORMAT:
        return invalid(prefix() + " is not a cudal1 tuning database (" + se.detail + ")");
      case SQLITE_CORRUPT:
        return invalid(prefix() + " is damaged (" + se.detail + ")");
      case SQLITE_BUSY:
      case SQLITE_LOCKED:
        return invalid(prefix() + " is locked by another process (" + se.detail + ")");
      case SQLITE_READONLY:
      case SQLITE_CANTOPEN:
      case SQLITE_PERM:
      case SQLITE_AUTH:
      case SQLITE_IOERR:
        return invalid(prefix() + " cannot be read (" + se.detail + ")");
      default:
        return invalid(prefix() + ": " + se.detail);
      }
    });
  Expected<int64_t> version = impl->pragmaInt("PRAGMA user_version");
  if (!version)
    return version.takeError();
  Expected<int64_t> objects = impl->pragmaInt("SELECT count(*) FROM sqlite_master");
  if (!objects)
    return objects.takeError();
  impl->version = int(*version);
  endRead.release();
  if (Error e = impl->exec("COMMIT", "ending a read transaction"))
    return std::move(e);
  if (*appId != 0 && *appId != kTuneDBApplicationId)
    return invalid(prefix() + " is not a cudal1 tuning database (application_id " + Twine(*appId) +
                   ")");
  if (*appId == 0 && (*version != 0 || *objects != 0))
    return invalid(prefix() + " is not a cudal1 tuning database (an SQLite file of " +
                   "another program)");
  if (impl->version > target)
    return invalid(prefix() + " has schema version " + Twine(impl->version) +
                   ", newer than this cudal1's (" + Twine(target) + "); use a newer cudal1");
  if (readOnly) {
    if (impl->version == 0)
      return invalid(prefix() + " is empty (nothing was recorded in it yet)");
    if (impl->version < target)
      return invalid(prefix() + " has schema version " + Twine(impl->version) +
                     ", older than this cudal1's (" + Twine(target) +
                     "); open it for writing once to migrate it");
    if (Error e = impl->checkTables())
      return std::move(e);
    return TuneDB(std::move(impl));
  }

  // 4. WAL: readers never wait for the writer, and a killed writer leaves
  //    only uncommitted frames behind. Switching needs a moment alone with
  //    the file, so it waits like a write does.
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    sqlite3_stmt *s = nullptr;
    rc = sqlite3_prepare_v2(impl->db, "PRAGMA journal_mode = WAL", -1, &s, nullptr);
    if (rc == SQLITE_OK)
      rc = sqlite3_step(s);
    std::string mode = rc == SQLITE_ROW ? columnText(s, 0) : "";
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW) {
      if (mode != "wal")
        return invalid(prefix() + ": cannot use write-ahead logging (journal mode '" + mode +
                       "'; a network file system?)");
      break;
    }
    if (!isBusy(rc) ||
        std::chrono::steady_clock::now() - start > std::chrono::milliseconds(options.busyTimeoutMs))
      return impl->fail(rc, "switching to write-ahead logging");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // NORMAL: a commit is atomic and survives a killed process; only a power
  // loss may forget the last commits (never corrupting the file).
  if (Error e = impl->exec("PRAGMA synchronous = NORMAL", "configuring the connection"))
    return std::move(e);

  // 5. Migrations, in one transaction with the version bump.
  if (impl->version < target)
    if (Error e = impl->migrate(migrations))
      return std::move(e);
  // A test's own migration list describes another schema.
  if (options.migrations.empty())
    if (Error e = impl->checkTables())
      return std::move(e);
  return TuneDB(std::move(impl));
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

Expected<int64_t> TuneDB::Impl::rowId(const char *insert, const char *select,
                                      function_ref<void(sqlite3_stmt *)> bind) {
  Expected<sqlite3_stmt *> ins = statement(insert);
  if (!ins)
    return ins.takeError();
  {
    Bound b(*ins);
    bind(*ins);
    int rc = b.step();
    if (rc != SQLITE_DONE)
      return fail(rc, "writing");
  }
  Expected<sqlite3_stmt *> sel = statement(select);
  if (!sel)
    return sel.takeError();
  Bound b(*sel);
  bind(*sel);
  int rc = b.step();
  if (rc != SQLITE_ROW)
    return fail(rc == SQLITE_DONE ? SQLITE_INTERNAL : rc, "reading back a row");
  return sqlite3_column_int64(*sel, 0);
}

Expected<int64_t> TuneDB::Impl::kernelId(StringRef key, StringRef name) {
  return rowId("INSERT INTO kernels(key, name) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE "
               "SET name = excluded.name WHERE excluded.name <> '' AND kernels.name = ''",
               "SELECT id FROM kernels WHERE key = ?1", [&](sqlite3_stmt *s) {
                 sqlite3_bind_text(s, 1, key.data(), int(key.size()), SQLITE_TRANSIENT);
                 sqlite3_bind_text(s, 2, name.data(), int(name.size()), SQLITE_TRANSIENT);
               });
}

Expected<int64_t> TuneDB::Impl::planId(StringRef text) {
  return rowId("INSERT OR IGNORE INTO plans(text) VALUES (?1)",
               "SELECT id FROM plans WHERE text = ?1", [&](sqlite3_stmt *s) {
                 sqlite3_bind_text(s, 1, text.data(), int(text.size()), SQLITE_TRANSIENT);
               });
}

Expected<int64_t> TuneDB::Impl::gpuId(const GpuKey &gpu) {
  return rowId("INSERT OR IGNORE INTO gpus(name, arch) VALUES (?1, ?2)",
               "SELECT id FROM gpus WHERE name = ?1 AND arch = ?2", [&](sqlite3_stmt *s) {
                 sqlite3_bind_text(s, 1, gpu.name.data(), int(gpu.name.size()), SQLITE_TRANSIENT);
                 sqlite3_bind_text(s, 2, gpu.arch.data(), int(gpu.arch.size()), SQLITE_TRANSIENT);
               });
}

Expected<int64_t> TuneDB::Impl::variantId(int64_t kernel, int64_t plan) {
  return rowId("INSERT OR IGNORE INTO variants(kernel_id, plan_id) VALUES (?1, ?2)",
               "SELECT id FROM variants WHERE kernel_id = ?1 AND plan_id = ?2",
               [&](sqlite3_stmt *s) {
                 sqlite3_bind_int64(s, 1, kernel);
                 sqlite3_bind_int64(s, 2, plan);
               });
}

Expected<int64_t> TuneDB::Impl::insertMeasurement(const MeasurementRow &m) {
  Expected<int64_t> kernel = kernelId(m.kernelKey, m.kernelName);
  if (!kernel)
    return kernel.takeError();
  Expected<int64_t> plan = planId(m.plan);
  if (!plan)
    return plan.takeError();
  Expected<int64_t> variant = variantId(*kernel, *plan);
  if (!variant)
    return variant.takeError();
  Expected<int64_t> gpu = gpuId(m.gpu);
  if (!gpu)
    return gpu.takeError();
  Expected<sqlite3_stmt *> s = statement(
      "INSERT INTO measurements(variant_id, gpu_id, shape, outcome, speedup, speedup_lo, "
      "speedup_hi, time_ms, baseline_ms, driver_version, cuda_version, sm_clock_mhz, "
      "mem_clock_mhz, session, measured_at, judge, strategy, proposal_probability) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
      "?18)");
  if (!s)
    return s.takeError();
  Bound b(*s);
  StoredTiming t = storedTiming(m.measured);
  b.int64(1, *variant).int64(2, *gpu).text(3, m.shape).text(4, outcomeName(m.measured.outcome));
  b.real(5, t.speedup).real(6, t.lo).real(7, t.hi);
  b.real(8, t.timeMs).real(9, t.baselineMs);
  b.text(10, m.driverVersion).text(11, m.cudaVersion);
  b.integer(12, m.smClockMHz).integer(13, m.memClockMHz);
  std::string when = m.measuredAt.empty() ? nowUtc() : m.measuredAt;
  b.text(14, m.session).text(15, when);
  b.text(16, judgeName(m.measured.judge)).text(17, m.strategy);
  b.real(18, m.proposalProbability);
  int rc = b.step();
  if (rc != SQLITE_DONE)
    return fail(rc, "recording a measurement");
  return int64_t(sqlite3_last_insert_rowid(db));
}

Error TuneDB::Impl::readMeasured(MeasurementRow &m, const std::string &outcome,
                                 const std::string &judge, const StoredTiming &t) {
  Measurement &r = m.measured;
  if (!parseOutcome(outcome, r.outcome))
    return invalid("tuning database '" + path + "': measurement " + Twine(m.id) +
                   " has the outcome '" + outcome + "', which this cudal1 does not know");
  // Files from before the judge column read 'program' (its default).
  if (!parseJudge(judge.empty() ? "program" : judge, r.judge))
    return invalid("tuning database '" + path + "': measurement " + Twine(m.id) +
                   " has the judge '" + judge + "', which this cudal1 does not know");
  r.timed = t.speedup.has_value();
  r.speedup = t.speedup.value_or(0);
  r.lo = t.lo.value_or(0);
  r.hi = t.hi.value_or(0);
  r.timeMs = t.timeMs.value_or(0);
  r.baselineMs = t.baselineMs.value_or(0);
  r.faster = r.outcome == Outcome::Ok && r.timed && r.lo > 1.0;
  return Error::success();
}

Expected<int64_t> TuneDB::recordMeasurement(const MeasurementRow &m) {
  Expected<std::vector<int64_t>> ids = recordMeasurements(ArrayRef<MeasurementRow>(m));
  if (!ids)
    return ids.takeError();
  return ids->front();
}

Expected<std::vector<int64_t>> TuneDB::recordMeasurements(ArrayRef<MeasurementRow> ms) {
  for (size_t i = 0; i < ms.size(); ++i)
    if (Error e = validate(ms[i]))
      return createStringError(
          inconvertibleErrorCode(), "tuning database '%s': measurement %zu of kernel '%s': %s",
          impl->path.c_str(), i, ms[i].kernelKey.c_str(), toString(std::move(e)).c_str());
  std::vector<int64_t> ids;
  Impl::Deadline deadline(*impl);
  Error e = impl->withWrite([&]() -> Error {
    ids.clear(); // a retry starts over
    for (const MeasurementRow &m : ms) {
      Expected<int64_t> id = impl->insertMeasurement(m);
      if (!id)
        return id.takeError();
      ids.push_back(*id);
    }
    return Error::success();
  });
  if (e)
    return std::move(e);
  return ids;
}

Error TuneDB::setBest(const BestChoice &c) {
  Error e = checkLine("the kernel key", c.kernelKey);
  if (!e)
    e = checkLine("the GPU name", c.gpu.name);
  if (!e)
    e = checkLine("the GPU architecture", c.gpu.arch);
  if (!e)
    e = checkLine("the launch shape", c.shape);
  if (!e)
    e = checkChosenPlan(c.plan);
  for (const std::optional<double> *v : {&c.speedup, &c.speedupLo, &c.speedupHi})
    if (!e)
      e = checkFinite("the speedup", *v);
  if (!e && !c.chosenAt.empty() && !isUtcTimestamp(c.chosenAt))
    e = invalid("chosenAt '" + c.chosenAt + "' is not a UTC time like 2026-12-02T15:04:05Z");
  if (e)
    return invalid("tuning database '" + impl->path + "': best choice for kernel '" + c.kernelKey +
                   "': " + toString(std::move(e)));

  Impl::Deadline deadline(*impl);
  return impl->withWrite([&]() -> Error {
    Expected<int64_t> kernel = impl->kernelId(c.kernelKey, "");
    if (!kernel)
      return kernel.takeError();
    Expected<int64_t> plan = impl->planId(c.plan);
    if (!plan)
      return plan.takeError();
    Expected<int64_t> gpu = impl->gpuId(c.gpu);
    if (!gpu)
      return gpu.takeError();
    if (Expected<int64_t> v = impl->variantId(*kernel, *plan); !v)
      return v.takeError();
    // The justifying measurement must be of this very choice: a mismatch
    // is a bug in the caller that would later be hard to see in the data.
    if (c.measurementId) {
      Expected<sqlite3_stmt *> s =
          impl->statement("SELECT v.kernel_id, v.plan_id, m.gpu_id FROM measurements m "
                          "JOIN variants v ON v.id = m.variant_id WHERE m.id = ?1");
      if (!s)
        return s.takeError();
      Bound b(*s);
      b.int64(1, *c.measurementId);
      int rc = b.step();
      if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return impl->fail(rc, "reading a measurement");
      if (rc == SQLITE_DONE)
        return invalid("tuning database '" + impl->path + "': best choice for kernel '" +
                       c.kernelKey + "': no measurement " + Twine(*c.measurementId));
      if (sqlite3_column_int64(*s, 0) != *kernel || sqlite3_column_int64(*s, 1) != *plan ||
          sqlite3_column_int64(*s, 2) != *gpu)
        return invalid("tuning database '" + impl->path + "': best choice for kernel '" +
                       c.kernelKey + "': measurement " + Twine(*c.measurementId) +
                       " is of another kernel, plan or GPU");
    }
    Expected<sqlite3_stmt *> s = impl->statement(
        "INSERT INTO best(kernel_id, gpu_id, shape, plan_id, measurement_id, speedup, "
        "speedup_lo, speedup_hi, chosen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
        "ON CONFLICT(kernel_id, gpu_id, shape) DO UPDATE SET plan_id = excluded.plan_id, "
        "measurement_id = excluded.measurement_id, speedup = excluded.speedup, "
        "speedup_lo = excluded.speedup_lo, speedup_hi = excluded.speedup_hi, "
        "chosen_at = excluded.chosen_at");
    if (!s)
      return s.takeError();
    Bound b(*s);
    b.int64(1, *kernel).int64(2, *gpu).text(3, c.shape).int64(4, *plan);
    b.int64(5, c.measurementId);
    b.real(6, c.speedup).real(7, c.speedupLo).real(8, c.speedupHi);
    std::string when = c.chosenAt.empty() ? nowUtc() : c.chosenAt;
    b.text(9, when);
    int rc = b.step();
    if (rc != SQLITE_DONE)
      return impl->fail(rc, "setting a best choice");
    return Error::success();
  });
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

Expected<std::optional<BestChoice>> TuneDB::bestPlan(const BestQuery &q) {
  // Exact shape before the any-shape choice; among models of one
  // architecture, the highest lower bound, then the latest choice
  // (chooseBest orders the same way).
  Impl::Deadline deadline(*impl);
  Expected<sqlite3_stmt *> s = impl->statement(
      "SELECT k.key, g.name, g.arch, b.shape, p.text, b.speedup, b.speedup_lo, b.speedup_hi, "
      "b.measurement_id, b.chosen_at FROM kernels k JOIN best b ON b.kernel_id = k.id "
      "JOIN gpus g ON g.id = b.gpu_id JOIN plans p ON p.id = b.plan_id "
      "WHERE k.key = ?1 AND g.arch = ?2 AND (?3 = '' OR g.name = ?3) "
      "AND (b.shape = ?4 OR b.shape = '*') "
      "ORDER BY b.shape = ?4 DESC, b.speedup_lo IS NULL, b.speedup_lo DESC, b.chosen_at DESC, "
      "g.name LIMIT 1");
  if (!s)
    return s.takeError();
  Bound b(*s);
  b.text(1, q.kernelKey).text(2, q.gpuArch).text(3, q.gpuName).text(4, q.shape);
  int rc = b.step();
  if (rc == SQLITE_DONE)
    return std::nullopt;
  if (rc != SQLITE_ROW)
    return impl->fail(rc, "looking up the best plan of kernel '" + q.kernelKey + "'");
  BestChoice c;
  c.kernelKey = columnText(*s, 0);
  c.gpu = {columnText(*s, 1), columnText(*s, 2)};
  c.shape = columnText(*s, 3);
  c.plan = columnText(*s, 4);
  c.speedup = columnReal(*s, 5);
  c.speedupLo = columnReal(*s, 6);
  c.speedupHi = columnReal(*s, 7);
  c.measurementId = columnInt64(*s, 8);
  c.chosenAt = columnText(*s, 9);
  // The file may come from anywhere; what is not a plan is not returned.
  if (Error e = checkChosenPlan(c.plan))
    return invalid("tuning database '" + impl->path + "': best plan of kernel '" + q.kernelKey +
                   "': " + toString(std::move(e)));
  return c;
}

Expected<std::vector<TuneDB::TunedKernel>> TuneDB::tunedKernels(StringRef gpuArch) {
  Impl::Deadline deadline(*impl);
  Expected<sqlite3_stmt *> s = impl->statement(
      "SELECT k.key, k.name, g.arch, g.name, b.shape, p.text, b.speedup, b.speedup_lo, "
      "b.speedup_hi, b.chosen_at FROM kernels k "
      "JOIN best b ON b.kernel_id = k.id JOIN gpus g ON g.id = b.gpu_id "
      "JOIN plans p ON p.id = b.plan_id WHERE ?1 = '' OR g.arch = ?1 "
      "ORDER BY k.key, g.arch, g.name, b.shape");
  if (!s)
    return s.takeError();
  Bound b(*s);
  b.text(1, gpuArch.str());
  std::vector<TunedKernel> out;
  int rc;
  while ((rc = b.step()) == SQLITE_ROW) {
    TunedKernel k;
    k.key = columnText(*s, 0);
    k.name = columnText(*s, 1);
    k.arch = columnText(*s, 2);
    k.gpu = columnText(*s, 3);
    k.shape = columnText(*s, 4);
    k.plan = columnText(*s, 5);
    k.speedup = columnReal(*s, 6);
    k.speedupLo = columnReal(*s, 7);
    k.speedupHi = columnReal(*s, 8);
    k.chosenAt = columnText(*s, 9);
    // The file may come from anywhere; what is not a plan is not returned.
    if (Error e = checkChosenPlan(k.plan)) {
      k.refused = toString(std::move(e));
      k.plan.clear();
    }
    out.push_back(std::move(k));
  }
  if (rc != SQLITE_DONE)
    return impl->fail(rc, "listing tuned kernels");
  return out;
}

Error TuneDB::forEachMeasurement(function_ref<Error(const MeasurementRow &)> fn) {
  // Prepared afresh: `fn` may use this TuneDB's cached statements.
  const char *sql =
      "SELECT m.id, k.key, k.name, p.text, g.name, g.arch, m.shape, m.outcome, m.speedup, "
      "m.speedup_lo, m.speedup_hi, m.time_ms, m.baseline_ms, m.driver_version, "
      "m.cuda_version, m.sm_clock_mhz, m.mem_clock_mhz, m.session, m.measured_at, "
      "m.judge, m.strategy, m.proposal_probability "
      "FROM measurements m JOIN variants v ON v.id = m.variant_id "
      "JOIN kernels k ON k.id = v.kernel_id JOIN plans p ON p.id = v.plan_id "
      "JOIN gpus g ON g.id = m.gpu_id ORDER BY m.id";
  sqlite3_stmt *s = nullptr;
  int rc = sqlite3_prepare_v2(impl->db, sql, -1, &s, nullptr);
  if (rc != SQLITE_OK)
    return impl->fail(rc, "reading measurements");
  auto finalize = make_scope_exit([&] { sqlite3_finalize(s); });
  // Each row has its own deadline: `fn` may take its time.
  Impl::Deadline deadline(*impl);
  for (;;) {
    impl->restartDeadline();
    if ((rc = sqlite3_step(s)) != SQLITE_ROW)
      break;
    MeasurementRow m;
    m.id = sqlite3_column_int64(s, 0);
    m.kernelKey = columnText(s, 1);
    m.kernelName = columnText(s, 2);
    m.plan = columnText(s, 3);
    m.gpu = {columnText(s, 4), columnText(s, 5)};
    m.shape = columnText(s, 6);
    if (Error e = impl->readMeasured(m, columnText(s, 7), columnText(s, 19),
                                     {columnReal(s, 8), columnReal(s, 9), columnReal(s, 10),
                                      columnReal(s, 11), columnReal(s, 12)}))
      return e;
    m.driverVersion = columnText(s, 13);
    m.cudaVersion = columnText(s, 14);
    m.smClockMHz = columnInt(s, 15);
    m.memClockMHz = columnInt(s, 16);
    m.session = columnText(s, 17);
    m.measuredAt = columnText(s, 18);
    m.strategy = columnText(s, 20);
    m.proposalProbability = columnReal(s, 21);
    if (Error e = fn(m))
      return e;
  }
  if (rc != SQLITE_DONE)
    return impl->fail(rc, "reading measurements");
  return Error::success();
}

Expected<std::vector<MeasurementRow>> TuneDB::exemplars(StringRef kernelKey, const GpuKey &gpu) {
  Impl::Deadline deadline(*impl);
  Expected<sqlite3_stmt *> s = impl->statement(
      "SELECT m.id, p.text, g.name, g.arch, m.shape, m.outcome, m.speedup, m.speedup_lo, "
      "m.speedup_hi, m.time_ms, m.baseline_ms, m.session, m.measured_at, m.judge, "
      "m.strategy, m.proposal_probability, k.name "
      "FROM measurements m JOIN variants v ON v.id = m.variant_id "
      "JOIN kernels k ON k.id = v.kernel_id JOIN plans p ON p.id = v.plan_id "
      "JOIN gpus g ON g.id = m.gpu_id "
      "WHERE k.key = ?1 AND g.arch = ?2 AND (?3 = '' OR g.name = ?3) ORDER BY m.id");
  if (!s)
    return s.takeError();
  Bound b(*s);
  b.text(1, kernelKey.str()).text(2, gpu.arch).text(3, gpu.name);
  std::vector<MeasurementRow> out;
  int rc;
  while ((rc = b.step()) == SQLITE_ROW) {
    MeasurementRow m;
    m.id = sqlite3_column_int64(*s, 0);
    m.kernelKey = kernelKey.str();
    m.plan = columnText(*s, 1);
    m.gpu = {columnText(*s, 2), columnText(*s, 3)};
    m.shape = columnText(*s, 4);
    if (Error e = impl->readMeasured(m, columnText(*s, 5), columnText(*s, 13),
                                     {columnReal(*s, 6), columnReal(*s, 7), columnReal(*s, 8),
                                      columnReal(*s, 9), columnReal(*s, 10)}))
      return std::move(e);
    m.session = columnText(*s, 11);
    m.measuredAt = columnText(*s, 12);
    m.strategy = columnText(*s, 14);
    m.proposalProbability = columnReal(*s, 15);
    m.kernelName = columnText(*s, 16);
    out.push_back(std::move(m));
  }
  if (rc != SQLITE_DONE)
    return impl->fail(rc, "reading exemplars");
  return out;
}

namespace {
// Features travel as one JSON object per kernel and version: the feature
// list grows with the analysis without a schema change.
std::string featuresJson(const KernelFeatures &f) {
  json::Object o;
  for (const auto &[name, value] : f.features)
    o[name] = value;
  std::string out;
  raw_string_ostream os(out);
  os << json::Value(std::move(o));
  return out;
}
} // namespace

Error TuneDB::recordFeatures(const KernelFeatures &f) {
  return impl->withWrite([&]() -> Error {
    Expected<int64_t> kernel = impl->kernelId(f.kernelKey, f.kernelName);
    if (!kernel)
      return kernel.takeError();
    Expected<sqlite3_stmt *> s = impl->statement(
        "INSERT INTO kernel_features(kernel_id, feature_version, features) VALUES (?1, ?2, ?3) "
        "ON CONFLICT(kernel_id, feature_version) DO UPDATE SET features = excluded.features, "
        "recorded_at = excluded.recorded_at");
    if (!s)
      return s.takeError();
    Bound b(*s);
    b.int64(1, *kernel).int64(2, f.featureVersion).text(3, featuresJson(f));
    int rc = b.step();
    if (rc != SQLITE_DONE)
      return impl->fail(rc, "recording kernel features");
    return Error::success();
  });
}

Expected<std::optional<KernelFeatures>> TuneDB::features(StringRef kernelKey, int featureVersion) {
  Impl::Deadline deadline(*impl);
  Expected<sqlite3_stmt *> s = impl->statement(
      "SELECT k.name, f.features FROM kernel_features f JOIN kernels k ON k.id = f.kernel_id "
      "WHERE k.key = ?1 AND f.feature_version = ?2");
  if (!s)
    return s.takeError();
  Bound b(*s);
  b.text(1, kernelKey.str()).int64(2, featureVersion);
  int rc = b.step();
  if (rc == SQLITE_DONE)
    return std::nullopt;
  if (rc != SQLITE_ROW)
    return impl->fail(rc, "reading kernel features");
  KernelFeatures f;
  f.kernelKey = kernelKey.str();
  f.kernelName = columnText(*s, 0);
  f.featureVersion = featureVersion;
  Expected<json::Value> v = json::parse(columnText(*s, 1));
  if (!v)
    return v.takeError();
  if (const json::Object *o = v->getAsObject())
    for (const auto &kv : *o)
      if (std::optional<double> d = kv.second.getAsNumber())
        f.features.push_back({kv.first.str(), *d});
  // Stored as an object: back in a stable order.
  std::sort(f.features.begin(), f.features.end());
  return std::optional<KernelFeatures>(std::move(f));
}

Expected<TuneDBStats> TuneDB::stats() {
  // One read transaction, so that the counts agree with each other.
  Impl::Deadline deadline(*impl);
  if (Error e = impl->exec("BEGIN", "starting a read transaction"))
    return std::move(e);
  auto end = make_scope_exit([&] { consumeError(impl->exec("COMMIT", "ending a read")); });
  TuneDBStats st;
  st.schemaVersion = impl->version;
  struct Count {
    const char *sql;
    int64_t *into;
  } counts[] = {{"SELECT count(*) FROM kernels", &st.kernels},
                {"SELECT count(*) FROM plans", &st.plans},
                {"SELECT count(*) FROM variants", &st.variants},
                {"SELECT count(*) FROM measurements", &st.measurements},
                {"SELECT count(*) FROM best", &st.best},
                {"SELECT count(*) FROM best b JOIN plans p ON p.id = b.plan_id "
                 "WHERE p.text = ''",
                 &st.bestOriginal}};
  for (Count &c : counts) {
    Expected<int64_t> n = impl->pragmaInt(c.sql);
    if (!n)
      return n.takeError();
    *c.into = *n;
  }
  auto rows = [&](const char *sql, function_ref<void(sqlite3_stmt *)> row) -> Error {
    sqlite3_stmt *s = nullptr;
    int rc = sqlite3_prepare_v2(impl->db, sql, -1, &s, nullptr);
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
      rc = sqlite3_step(s);
      if (rc == SQLITE_ROW)
        row(s);
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? Error::success() : impl->fail(rc, "summarising");
  };
  if (Error e =
          rows("SELECT outcome, count(*) FROM measurements GROUP BY outcome "
               "ORDER BY count(*) DESC, outcome",
               [&](sqlite3_stmt *s) {
                 st.measurementsByOutcome.push_back({columnText(s, 0), sqlite3_column_int64(s, 1)});
               }))
    return std::move(e);
  // The judge column came with a migration: an older file has none.
  if (Error e =
          rows("SELECT judge, count(*) FROM measurements GROUP BY judge "
               "ORDER BY count(*) DESC, judge",
               [&](sqlite3_stmt *s) {
                 st.measurementsByJudge.push_back({columnText(s, 0), sqlite3_column_int64(s, 1)});
               }))
    llvm::consumeError(std::move(e));
  if (Error e = rows("SELECT g.name, g.arch, "
                     "(SELECT count(*) FROM measurements m WHERE m.gpu_id = g.id), "
                     "(SELECT count(*) FROM best b WHERE b.gpu_id = g.id) "
                     "FROM gpus g ORDER BY g.name, g.arch",
                     [&](sqlite3_stmt *s) {
                       st.perGpu.push_back({{columnText(s, 0), columnText(s, 1)},
                                            sqlite3_column_int64(s, 2),
                                            sqlite3_column_int64(s, 3)});
                     }))
    return std::move(e);
  return st;
}

} // namespace cudal1
