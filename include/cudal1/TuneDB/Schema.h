// The tuning database's schema as an ordered list of migrations
// (docs/TuneDB.md, "Schema"). The schema version stored in the file
// (PRAGMA user_version) is the number of migrations applied to it.
#ifndef CUDAL1_TUNEDB_SCHEMA_H
#define CUDAL1_TUNEDB_SCHEMA_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace cudal1 {

/// One step from schema version `from` to `from + 1`: SQL run inside the
/// write transaction that also bumps user_version, so a step either happens
/// whole or not at all. Steps only ever get appended to the list; a shipped
/// step is never edited (a database in the field may already have run it).
struct Migration {
  int from;
  const char *summary;
  const char *sql;
  /// A step SQL cannot do, run after `sql` in the same transaction; one of
  /// the kMigration* names below, or null.
  const char *code = nullptr;
};

/// Rewrites every stored plan text to the canonical printer's form
/// (printPlan): the old `@k: a; @k: b` and other spellings of one plan
/// become one row, their variants and best choices merged into it. A text
/// that does not parse is left as it is and counted in a remark.
constexpr const char *kMigrationCanonicalPlans = "canonical-plans";

/// The migrations of this build, in order; the last one gives
/// tuneDBSchemaVersion().
llvm::ArrayRef<Migration> tuneDBMigrations();
int tuneDBSchemaVersion();

/// The tables this build's queries read. Opening checks that each is a
/// table (not a view or a virtual table) before any query touches it: a
/// view in a crafted file runs arbitrary SQL on every read. A migration
/// that adds a table appends its name here.
llvm::ArrayRef<const char *> tuneDBTables();

/// PRAGMA application_id of a cudal1 tuning database ("CDL1"), so that
/// another program's SQLite file is refused rather than written to.
constexpr int32_t kTuneDBApplicationId = 0x43444c31;

} // namespace cudal1

#endif
