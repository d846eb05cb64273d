# Writes a stand-in tuning database for test/Bench/protocol.test: a table
# named measurements_view with the columns bench/policy/protocol reads, and
# the runs spelled out below (program P1: two kernels, three strategies;
# P2: one kernel, heuristic and policy; an old-schema file without the view;
# with a third argument, an older run of P2 by the heuristic in a file whose
# name sorts after the first's: its rows were recorded before them).
import sqlite3, sys
out = sys.argv[1]
c = sqlite3.connect(out)
c.execute("create table measurements_view (id integer primary key, session text, kernel_key text, "
          "kernel_name text, plan text, gpu text, outcome text, judge text, speedup real, "
          "speedup_lo real, baseline_ms real, strategy text, recorded_at text)")
R = "replay-double-reference"
rows = [
    # P1 by the heuristic: k1 (2 ms) 1.5x then 3x; k2 (1 ms) a wrong 5x, then 1.005x not surely faster.
    ("s1", "k1", "a", "p1", "ok", R, 1.5, 1.4, 2.0, "heuristic"),
    ("s1", "k2", "b", "q1", "wrong", R, 5.0, 4.0, 1.0, "heuristic"),
    ("s1", "k1", "a", "p2", "ok", R, 3.0, 2.9, 2.0, "heuristic"),
    ("s1", "k2", "b", "q2", "ok", R, 1.005, 0.99, 1.0, "heuristic"),
    # a finalist measured again as a whole program: not a proposal
    ("s1", "k1", "a", "p2", "ok", "program", 1.2, 1.1, 9.0, "heuristic"),
    ("s1", "program:P1", "(reproducibility check)", "p2", "ok", "program", 1.2, 1.1, 9.0, ""),
    # P1 by the policy: 3x on k1 first, 2x on k2 first.
    ("s2", "k1", "a", "p2", "ok", R, 3.0, 2.9, 2.0, "policy"),
    ("s2", "k2", "b", "q3", "ok", R, 2.0, 1.9, 1.0, "policy"),
    # P1 by random: nothing faster.
    ("s3", "k1", "a", "p4", "ok", R, 0.5, 0.4, 2.0, "random"),
    ("s3", "k2", "b", "q4", "crash", R, None, None, 1.0, "random"),
    # P2 by the heuristic (2x at its second plan) and the policy (1.5x at once).
    ("s4", "k3", "c", "r1", "ok", R, 1.0, 0.98, 4.0, "heuristic"),
    ("s4", "k3", "c", "r2", "ok", R, 2.0, 1.95, 4.0, "heuristic"),
    ("s5", "k3", "c", "r3", "ok", R, 1.5, 1.45, 4.0, "policy"),
    # Another GPU's measurement: left out.
    ("s6", "k3", "c", "r9", "ok", R, 50.0, 49.0, 4.0, "heuristic"),
]
for i, r in enumerate(rows):
    s, key, name, plan, outcome, judge, sp, lo, base, strat = r
    gpu = "Other GPU" if s == "s6" else "NVIDIA H200"
    c.execute("insert into measurements_view values (?,?,?,?,?,?,?,?,?,?,?,?,?)",
              (i + 1, s, key, name, plan, gpu, outcome, judge, sp, lo, base, strat,
               "2026-12-07T10:00:00Z"))
c.commit()
if len(sys.argv) > 3:
    z = sqlite3.connect(sys.argv[3])
    z.execute("create table measurements_view (id integer primary key, session text, "
              "kernel_key text, kernel_name text, plan text, gpu text, outcome text, judge text, "
              "speedup real, speedup_lo real, baseline_ms real, strategy text, recorded_at text)")
    z.execute("insert into measurements_view values (1, 's7', 'k3', 'c', 'r7', 'NVIDIA H200', "
              "'ok', ?, 1.25, 1.2, 4.0, 'heuristic', '2026-12-01T10:00:00Z')", (R,))
    z.commit()
old = sqlite3.connect(sys.argv[2])
old.execute("create table measurements_view (id integer primary key, session text)")
old.commit()
