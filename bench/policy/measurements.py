"""What bench/policy's scripts read from tuning databases: the program each
session tuned (bench/data/programs.tsv) and the measurements, in the order
they were recorded (protocol, first-round)."""
import os
import sqlite3
import sys


def read_program_map(path):
    """{(database file name, session): program name} from programs.tsv."""
    out = {}
    if not path or not os.path.exists(path):
        return out
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        if len(f) >= 3:
            out[(f[0], f[1])] = os.path.splitext(os.path.basename(f[2]))[0]
    return out


def columns(conn, view):
    return {r[1] for r in conn.execute("pragma table_info(%s)" % view)}


def read_measurements(db, tool):
    """Rows of the database's measurements_view, in recording order:
    (session, kernel_key, plan, gpu, outcome, judge, speedup, speedup_lo,
    baseline_ms, strategy, recorded_at). An older schema is skipped with a
    remark on stderr naming `tool`."""
    conn = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    have = columns(conn, "measurements_view")
    need = {"id", "session", "kernel_key", "plan", "gpu", "outcome", "judge",
            "speedup", "speedup_lo", "baseline_ms", "strategy"}
    if not need <= have:
        sys.stderr.write("%s: %s: no %s in measurements_view (an older schema; "
                         "cudal1-train DB --export NEW.db migrates it), skipped\n"
                         % (tool, db, ", ".join(sorted(need - have))))
        conn.close()
        return []
    # When each row was recorded orders the runs of several databases (the
    # order of the files given does not: a glob sorts s10 before s9).
    recorded = "recorded_at" if "recorded_at" in have else "''"
    rows = conn.execute(
        "select session, kernel_key, plan, gpu, outcome, judge, speedup, "
        "speedup_lo, baseline_ms, strategy, %s from measurements_view order by id"
        % recorded).fetchall()
    conn.close()
    return rows
