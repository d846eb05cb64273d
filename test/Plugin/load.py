#!/usr/bin/env python3
"""The plugin under load (issue 19 item 5).

JOBS plugin compiles run at once (as `make -jJOBS` would) against one tuning
database while two writers record into it the way tuning runs do:

  * `tunedb-test-helper loop DB 20`: the library's own writes (TuneDB,
    WAL, BEGIN IMMEDIATE), one transaction of 20 measurements after the
    other, as fast as it can;
  * a Python sqlite3 writer that holds each write transaction open for
    --hold-ms (BEGIN IMMEDIATE, inserts, a sleep, COMMIT), as a tuner that
    records a slow round would.

Half of the files have tuned kernels (kernels.cu of
test/Plugin/Inputs/cmake-project, `@scale: restrict` and
`@sum: warp-reduce`), half none (other.cu); the derivation cache (`cache=`,
which cudal1_enable always sets) is filled by the reference compiles, so
what is measured is the database under load, not the derivation
(docs/results/plugin-overhead.md has that). On a machine with fewer cores
than JOBS the compiles are CPU-bound: every round of JOBS plugin compiles is
compared with a round of JOBS plain compiles of the same files run the same
way, side by side (rounds alternate, the writers run through both).

Checks, each a FAIL line in the table when it does not hold:
  * every compile exits 0 with nothing on stderr (no "database is locked",
    no warning of any kind) and gives the reference object: the tuned one
    for kernels.cu (the plans were applied under load), the plain one for
    other.cu;
  * no plugin compile takes more than 2x the median plain time of its file;
  * the writers saw no error (a locked database would be one) and
    committed at least one transaction during the rounds;
  * `PRAGMA integrity_check` is "ok" afterwards.

Run by test/Plugin/load.test in a small configuration; the committed table
(docs/results/plugin-load.md) comes from

  PATH=build/bin:$PATH python3 test/Plugin/load.py \\
      --plugin build/lib/libCudaL1Plugin.so --jobs 16 --rounds 3 \\
      --out docs/results/plugin-load.md
"""
import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.join(HERE, "Inputs", "cmake-project")
FLAGS = ["-x", "cuda", "--cuda-gpu-arch=sm_90", "-Iinclude", "-DDEMO_BLOCK=256"]
PLANS = {"scale": "@scale: restrict", "sum": "@sum: warp-reduce"}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


class Holder(threading.Thread):
    """A writer that holds each write transaction open for hold_ms."""

    def __init__(self, db, hold_ms):
        super().__init__(daemon=True)
        self.db, self.hold = db, hold_ms / 1000.0
        self.stop = threading.Event()
        self.transactions = 0
        self.errors = []

    def run(self):
        c = sqlite3.connect(self.db, timeout=30, isolation_level=None)
        k = 0
        while not self.stop.is_set():
            try:
                c.execute("BEGIN IMMEDIATE")
                for i in range(50):
                    c.execute("INSERT INTO plans(text) VALUES (?)",
                              ("load-%d-%d: unroll(loop=0, factor=%d)" % (k, i, 2 + i % 3),))
                time.sleep(self.hold)
                c.execute("COMMIT")
                self.transactions += 1
            except sqlite3.Error as e:
                self.errors.append(str(e))
                try:
                    c.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            k += 1
            time.sleep(0.01)
        c.close()


class Load:
    def __init__(self, args):
        self.args = args
        self.work = args.work or tempfile.mkdtemp(prefix="plugin-load-")
        os.makedirs(self.work, exist_ok=True)
        self.src = os.path.join(self.work, "src")
        shutil.rmtree(self.src, ignore_errors=True)
        os.makedirs(os.path.join(self.src, ".git"))
        shutil.copytree(os.path.join(PROJECT, "include"), os.path.join(self.src, "include"))
        # JOBS files: even ones with tuned kernels, odd ones without.
        self.files = []
        for i in range(args.jobs):
            kind = "kernels" if i % 2 == 0 else "other"
            f = os.path.join(self.src, "%s%02d.cu" % (kind, i))
            shutil.copy(os.path.join(PROJECT, kind + ".cu"), f)
            self.files.append((f, kind))
        self.db = os.path.join(self.work, "tune.db")
        for p in [self.db, self.db + "-wal", self.db + "-shm"]:
            if os.path.exists(p):
                os.remove(p)
        self.cache = os.path.join(self.work, "cudal1-cache")
        shutil.rmtree(self.cache, ignore_errors=True)
        self.failures = []

    def fail(self, what):
        self.failures.append(what)

    def tune(self):
        out = run(["tunedb-test-helper", "keys", self.files[0][0]] + FLAGS, cwd=self.src,
                  check=True).stdout
        for line in out.splitlines():
            w = line.split()
            if w[0] == "kernel" and w[1] in PLANS:
                run(["tunedb-test-helper", "set-best", self.db, w[2], w[1], "sm_90",
                     PLANS[w[1]]], check=True)

    def command(self, f, out, plugin):
        cmd = ["cudal1-clang++"] + FLAGS + ["-c", os.path.basename(f), "-o", out]
        if plugin:
            cmd += ["-fplugin=" + self.args.plugin, "-fplugin-arg-cudal1-db=" + self.db,
                    "-fplugin-arg-cudal1-arch=sm_90",
                    "-fplugin-arg-cudal1-cache=" + self.cache]
        return cmd

    def references(self):
        """A plain and a plugin object of every file (an object names its
        source file), compiled one at a time before the writers start; the
        plugin compiles fill the derivation cache."""
        self.reference = {}
        self.alone = []
        for plugin in [False, True]:
            for f, kind in self.files:
                out = os.path.join(self.work, "ref-%s-%s.o" % (
                    "plugin" if plugin else "plain", os.path.basename(f)))
                start = time.monotonic()
                p = run(self.command(f, out, plugin), cwd=self.src, timeout=600)
                if not plugin:
                    self.alone.append(time.monotonic() - start)
                if p.returncode != 0 or p.stderr:
                    self.fail("reference compile of %s: exit %d: %s" %
                              (f, p.returncode, p.stderr.strip()))
                    continue
                with open(out, "rb") as o:
                    self.reference[(plugin, f)] = o.read()
        if self.failures:
            return
        for f, kind in self.files:
            same = self.reference[(True, f)] == self.reference[(False, f)]
            if kind == "kernels" and same:
                self.fail("the tuned plans do not change %s's object: nothing to test" % f)
            if kind == "other" and not same:
                self.fail("%s has no tuned kernel but its object changed" % f)

    def round(self, plugin, index):
        """JOBS compiles at once; each one's wall time."""
        procs = []
        for f, kind in self.files:
            out = os.path.join(self.work, "r%d-%s-%s.o" % (
                index, "plugin" if plugin else "plain", os.path.basename(f)))
            start = time.monotonic()
            p = subprocess.Popen(self.command(f, out, plugin), cwd=self.src,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            procs.append((f, kind, out, start, p))
        times = []
        for f, kind, out, start, p in procs:
            stdout, stderr = p.communicate(timeout=900)
            t = time.monotonic() - start
            times.append((f, t))
            what = "%s compile of %s (round %d)" % ("plugin" if plugin else "plain",
                                                   os.path.basename(f), index)
            if "locked" in stderr:
                self.locked += stderr.count("locked")
            if p.returncode != 0 or stderr:
                self.fail("%s: exit %d: %s" % (what, p.returncode, stderr.strip()[:300]))
                continue
            with open(out, "rb") as o:
                if o.read() != self.reference[(plugin, f)]:
                    self.fail(what + ": not the reference object")
            os.remove(out)
        return times

    def measure(self):
        self.locked = 0
        helper = subprocess.Popen(["tunedb-test-helper", "loop", self.db, "20"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(helper.stdout), daemon=True)
        reader.start()
        holder = Holder(self.db, self.args.hold_ms)
        holder.start()
        time.sleep(0.5)  # both writers under way
        self.plain, self.plugin = {}, {}
        for r in range(self.args.rounds):
            order = [False, True] if r % 2 == 0 else [True, False]
            for plugin in order:
                for f, t in self.round(plugin, r):
                    (self.plugin if plugin else self.plain).setdefault(f, []).append(t)
        holder.stop.set()
        holder.join()
        helper.terminate()
        _, helperErr = helper.communicate()
        reader.join()
        self.helperTransactions = sum(1 for l in lines if l.startswith("committed"))
        self.holderTransactions = holder.transactions
        errors = holder.errors + ([helperErr.strip()] if helperErr.strip() else [])
        for e in errors:
            self.locked += e.count("locked")
            self.fail("writer error: " + e[:300])
        if self.helperTransactions == 0 or self.holderTransactions == 0:
            self.fail("a writer committed nothing during the rounds")
        c = sqlite3.connect(self.db)
        self.integrity = c.execute("PRAGMA integrity_check").fetchone()[0]
        self.measurements = c.execute("SELECT count(*) FROM measurements").fetchone()[0]
        c.close()
        if self.integrity != "ok":
            self.fail("integrity_check: " + self.integrity)

    def table(self):
        if not hasattr(self, "plain"):
            return "| figure | value |\n| --- | --- |\n" + "".join(
                "| FAIL | %s |\n" % f.replace("|", "/").replace("\n", " ") for f in self.failures)
        plainAll = [t for ts in self.plain.values() for t in ts]
        pluginAll = [t for ts in self.plugin.values() for t in ts]
        ratios = []
        for f, ts in self.plugin.items():
            base = statistics.median(self.plain.get(f, [float("nan")]))
            ratios += [t / base for t in ts]
        maxRatio = max(ratios) if ratios else float("nan")
        if not ratios or maxRatio > 2.0:
            self.fail("a plugin compile took %.2fx its file's median plain time" % maxRatio)
        a = self.args
        rows = [
            ("parallel compiles per round", "%d (%d with tuned kernels, %d without)" %
             (a.jobs, (a.jobs + 1) // 2, a.jobs // 2)),
            ("rounds (plain and plugin alternating)", "%d + %d" % (a.rounds, a.rounds)),
            ("plugin compiles", str(len(pluginAll))),
            ("writer transactions during the rounds",
             "%d (TuneDB, 20 measurements each) + %d (held %d ms each)" %
             (self.helperTransactions, self.holderTransactions, a.hold_ms)),
            ("measurements in the database afterwards", str(self.measurements)),
            ("plain compile alone (before the rounds) wall s, median",
             "%.2f" % statistics.median(self.alone)),
            ("plain compile wall s, median [max]", "%.2f [%.2f]" %
             (statistics.median(plainAll), max(plainAll))),
            ("plugin compile wall s, median [max]", "%.2f [%.2f]" %
             (statistics.median(pluginAll), max(pluginAll))),
            ("max ratio plugin / its file's median plain", "%.2f" % maxRatio),
            ("\"database is locked\" errors or warnings", str(self.locked)),
            ("PRAGMA integrity_check", self.integrity),
            ("objects equal to the references", "yes" if not any(
                "reference object" in f for f in self.failures) else "no"),
        ]
        out = ["| figure | value |", "| --- | --- |"]
        out += ["| %s | %s |" % r for r in rows]
        for f in self.failures:
            out.append("| FAIL | %s |" % f.replace("|", "/").replace("\n", " "))
        return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hold-ms", type=int, default=200)
    ap.add_argument("--work")
    ap.add_argument("--out")
    args = ap.parse_args()
    load = Load(args)
    # A copy: a build that relinks the plugin while this runs must not
    # show up as failed compiles.
    copy = os.path.join(load.work, "libCudaL1Plugin.so")
    shutil.copy(args.plugin, copy)
    args.plugin = copy
    load.tune()
    load.references()
    if not load.failures:
        load.measure()
    text = load.table()
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    return 1 if load.failures else 0


if __name__ == "__main__":
    sys.exit(main())
