// The schema of the tuning database, version by version. Append a step for
// every change; never edit a shipped one (test/unit/TuneDB/Inputs holds the
// frozen schema of each version, and a test migrates it to this one).
#include "cudal1/TuneDB/Schema.h"

#include <iterator>

namespace cudal1 {

namespace {
// Timestamps are UTC text so that sqlite3 shows them and they sort.
#define CUDAL1_NOW "(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))"

const Migration kMigrations[] = {
    {0, "kernels, plans, GPUs, variants, measurements, best choices",
     R"sql(
CREATE TABLE kernels (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL DEFAULT '',
  first_seen TEXT NOT NULL DEFAULT )sql" CUDAL1_NOW R"sql(
);
CREATE TABLE plans (
  id INTEGER PRIMARY KEY,
  text TEXT NOT NULL UNIQUE
);
CREATE TABLE gpus (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  arch TEXT NOT NULL,
  UNIQUE (name, arch)
);
CREATE TABLE variants (
  id INTEGER PRIMARY KEY,
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  plan_id INTEGER NOT NULL REFERENCES plans(id),
  UNIQUE (kernel_id, plan_id)
);
CREATE INDEX variants_by_plan ON variants(plan_id);
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  variant_id INTEGER NOT NULL REFERENCES variants(id),
  gpu_id INTEGER NOT NULL REFERENCES gpus(id),
  shape TEXT NOT NULL,
  outcome TEXT NOT NULL,
  speedup REAL,
  speedup_lo REAL,
  speedup_hi REAL,
  time_ms REAL,
  baseline_ms REAL,
  driver_version TEXT NOT NULL DEFAULT '',
  cuda_version TEXT NOT NULL DEFAULT '',
  sm_clock_mhz INTEGER,
  mem_clock_mhz INTEGER,
  session TEXT NOT NULL DEFAULT '',
  measured_at TEXT NOT NULL,
  recorded_at TEXT NOT NULL DEFAULT )sql" CUDAL1_NOW R"sql(
);
CREATE INDEX measurements_by_variant ON measurements(variant_id);
CREATE INDEX measurements_by_gpu ON measurements(gpu_id);
CREATE TABLE best (
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  gpu_id INTEGER NOT NULL REFERENCES gpus(id),
  shape TEXT NOT NULL,
  plan_id INTEGER NOT NULL REFERENCES plans(id),
  measurement_id INTEGER REFERENCES measurements(id),
  speedup REAL,
  speedup_lo REAL,
  speedup_hi REAL,
  chosen_at TEXT NOT NULL,
  PRIMARY KEY (kernel_id, gpu_id, shape)
) WITHOUT ROWID;
CREATE INDEX best_by_gpu ON best(gpu_id);
CREATE INDEX best_by_plan ON best(plan_id);
CREATE INDEX best_by_measurement ON best(measurement_id);
-- For people with sqlite3: the tables joined back into readable rows.
CREATE VIEW measurements_view AS
  SELECT m.id, k.key AS kernel_key, k.name AS kernel_name, p.text AS plan,
         g.name AS gpu, g.arch, m.shape, m.outcome, m.speedup, m.speedup_lo,
         m.speedup_hi, m.time_ms, m.baseline_ms, m.driver_version,
         m.cuda_version, m.sm_clock_mhz, m.mem_clock_mhz, m.session,
         m.measured_at, m.recorded_at
  FROM measurements m JOIN variants v ON v.id = m.variant_id
  JOIN kernels k ON k.id = v.kernel_id JOIN plans p ON p.id = v.plan_id
  JOIN gpus g ON g.id = m.gpu_id;
CREATE VIEW best_view AS
  SELECT k.key AS kernel_key, k.name AS kernel_name, g.name AS gpu, g.arch,
         b.shape, p.text AS plan, b.speedup, b.speedup_lo, b.speedup_hi,
         b.measurement_id, b.chosen_at
  FROM best b JOIN kernels k ON k.id = b.kernel_id
  JOIN gpus g ON g.id = b.gpu_id JOIN plans p ON p.id = b.plan_id;
)sql"},
    {1, "which judge and strategy gave a measurement; kernel features",
     R"sql(
ALTER TABLE measurements ADD COLUMN judge TEXT NOT NULL DEFAULT 'program';
ALTER TABLE measurements ADD COLUMN strategy TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN proposal_probability REAL;
CREATE TABLE kernel_features (
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  feature_version INTEGER NOT NULL,
  features TEXT NOT NULL,
  recorded_at TEXT NOT NULL DEFAULT )sql" CUDAL1_NOW R"sql(,
  PRIMARY KEY (kernel_id, feature_version)
) WITHOUT ROWID;
DROP VIEW measurements_view;
CREATE VIEW measurements_view AS
  SELECT m.id, k.key AS kernel_key, k.name AS kernel_name, p.text AS plan,
         g.name AS gpu, g.arch, m.shape, m.outcome, m.judge, m.speedup,
         m.speedup_lo, m.speedup_hi, m.time_ms, m.baseline_ms, m.driver_version,
         m.cuda_version, m.sm_clock_mhz, m.mem_clock_mhz, m.session,
         m.strategy, m.proposal_probability, m.measured_at, m.recorded_at
  FROM measurements m JOIN variants v ON v.id = m.variant_id
  JOIN kernels k ON k.id = v.kernel_id JOIN plans p ON p.id = v.plan_id
  JOIN gpus g ON g.id = m.gpu_id;
)sql"},
    {2, "plan texts in the canonical printer's form",
     "-- The plans table is rewritten by the canonical-plans step.", kMigrationCanonicalPlans},
};
#undef CUDAL1_NOW
} // namespace

llvm::ArrayRef<Migration> tuneDBMigrations() { return kMigrations; }

int tuneDBSchemaVersion() { return int(std::size(kMigrations)); }

llvm::ArrayRef<const char *> tuneDBTables() {
  static const char *const tables[] = {"kernels",      "plans", "gpus",           "variants",
                                       "measurements", "best",  "kernel_features"};
  return tables;
}

} // namespace cudal1
