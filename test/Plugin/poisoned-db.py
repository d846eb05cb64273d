#!/usr/bin/env python3
"""The poisoned-database table (issue 19 item 4).

Builds one tuning database per poisoning, compiles a small .cu through the
plugin with -Werror against each and checks three things:

  * the compile succeeds (exit 0): the plugin's warnings are printed to
    stderr, not through clang's diagnostics, so -Werror cannot turn them
    into errors -- the promise is that a database never breaks a build;
  * the object is byte-identical to the expected one: the plain compile's
    wherever nothing legal applies, the tuned compile's (from the healthy
    database) where the poisoning must not matter (a writer holding the
    lock, a database the user cannot write);
  * stderr holds exactly the documented warnings (a regular expression per
    case, matched by the single cudal1 warning line; no other line), never
    the last resort's "internal error" and never clang's crash banner;
    and no -wal/-shm file is left beside the database.

Writes the table as Markdown (input, expected behaviour, seen behaviour).
Run by test/Plugin/poisoned-db.test; regenerate the committed copy with

  PATH=build/bin:$PATH python3 test/Plugin/poisoned-db.py \\
      --plugin build/lib/libCudaL1Plugin.so \\
      --source test/cudal1-opt/Inputs/host-plan.cu --out docs/results/poisoned-db.md
"""
import argparse
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

NOBODY = 65534


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


class Table:
    def __init__(self, args):
        self.args = args
        self.work = args.work or tempfile.mkdtemp(prefix="poisoned-db-")
        os.makedirs(self.work, exist_ok=True)
        # The project root of the host-code key, and a source directory
        # every user can read and write objects into.
        self.src = os.path.join(self.work, "src")
        os.makedirs(os.path.join(self.src, ".git"), exist_ok=True)
        os.chmod(self.src, 0o777)
        self.tmp = os.path.join(self.work, "tmp")
        os.makedirs(self.tmp, exist_ok=True)
        os.chmod(self.tmp, 0o1777)
        self.cu = os.path.join(self.src, "k.cu")
        shutil.copy(args.source, self.cu)
        os.chmod(self.cu, 0o644)
        out = run(["tunedb-test-helper", "keys", self.cu, "-x", "cuda"], check=True).stdout
        self.keys = {}
        for line in out.splitlines():
            w = line.split()
            if w[0] == "host":
                self.keys["(host)"] = w[1]
            else:
                self.keys[w[1]] = w[2]
        self.rows = []
        self.failures = 0
        self.dropPrivileges = os.geteuid() == 0 and shutil.which("setpriv")

    # --- databases ------------------------------------------------------
    def dbdir(self, name, mode=0o755):
        d = os.path.join(self.work, name)
        os.makedirs(d, exist_ok=True)
        os.chmod(d, mode)
        return d

    def good(self, path, plan="@sum: warp-reduce", kernel="sum"):
        key = self.keys[kernel]
        run(["tunedb-test-helper", "set-best", path, key, kernel, "sm_90", plan], check=True)
        return path

    def poisonPlan(self, path, text, kernel="sum"):
        """A healthy database whose best choice for `kernel` has been
        rewritten past the library's checks."""
        self.good(path, "@sum: restrict" if kernel == "sum" else "@scale: restrict", kernel)
        c = sqlite3.connect(path)
        c.execute("INSERT OR IGNORE INTO plans(text) VALUES (?)", (text,))
        c.execute("UPDATE best SET plan_id = (SELECT id FROM plans WHERE text = ?) "
                  "WHERE kernel_id = (SELECT id FROM kernels WHERE key = ?)",
                  (text, self.keys[kernel]))
        c.commit()
        c.close()
        return path

    # --- compiles -------------------------------------------------------
    def compile(self, out, db, asNobody=False, extra=()):
        cmd = ["cudal1-clang++", "-x", "cuda", "--cuda-gpu-arch=sm_90", "-Werror", "-c",
               self.cu, "-o", out]
        if db is not None:
            cmd += ["-fplugin=" + self.args.plugin, "-fplugin-arg-cudal1-db=" + db,
                    "-fplugin-arg-cudal1-arch=sm_90"]
        cmd += list(extra)
        if asNobody:
            cmd = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups",
                   "env", "HOME=" + self.tmp, "TMPDIR=" + self.tmp,
                   "PATH=" + os.environ["PATH"]] + cmd
        start = time.monotonic()
        p = run(cmd, timeout=120)
        return p, time.monotonic() - start

    def references(self):
        self.plain = os.path.join(self.src, "plain.o")
        p, self.plainSeconds = self.compile(self.plain, None)
        assert p.returncode == 0, p.stderr
        gd = self.dbdir("good")
        self.goodDb = self.good(os.path.join(gd, "tune.db"))
        self.tuned = os.path.join(self.src, "tuned.o")
        p, _ = self.compile(self.tuned, self.goodDb)
        assert p.returncode == 0, p.stderr
        assert open(self.tuned, "rb").read() != open(self.plain, "rb").read(), \
            "the healthy database's plan changed nothing"

    # --- one case -------------------------------------------------------
    def case(self, name, inputText, expectedText, db, warning, obj="plain", asNobody=False,
             extra=(), setup=None):
        if asNobody and not self.dropPrivileges:
            self.rows.append((name, inputText, expectedText, "skipped (needs root and setpriv "
                              "to compile as another user)"))
            return
        before = set(os.listdir(os.path.dirname(db))) if db and os.path.dirname(db) else set()
        holder = setup() if setup else None
        try:
            out = os.path.join(self.src, re.sub(r"[^a-z0-9]+", "-", name.lower()) + ".o")
            p, seconds = self.compile(out, db, asNobody, extra)
        finally:
            if holder:
                holder.kill()
                holder.wait()
        problems = []
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        cudal1 = [l for l in lines if "cudal1:" in l]
        if p.returncode != 0:
            problems.append("exit %d" % p.returncode)
        if any("PLEASE submit" in l or "internal error" in l for l in lines):
            problems.append("the last resort or a crash handled it")
        if warning is None:
            if lines:
                problems.append("unexpected output")
        elif len(lines) != 1 or not re.search(warning, lines[0]):
            problems.append("warnings differ from the documented one")
        ref = {"plain": self.plain, "tuned": self.tuned}[obj]
        if p.returncode == 0 and open(out, "rb").read() != open(ref, "rb").read():
            problems.append("object differs from the %s compile" % obj)
        # A holder's own -wal and -shm stay when it is killed.
        if db and os.path.dirname(db) and not setup:
            after = set(os.listdir(os.path.dirname(db)))
            left = sorted(f for f in after - before if f.endswith(("-wal", "-shm")))
            if left:
                problems.append("left " + ", ".join(left))
        said = cudal1[0].split("warning: cudal1: ", 1)[-1] if cudal1 else "no warning"
        if len(said) > 160:
            said = said[:157] + "..."
        seen = ("ok: " if not problems else "**FAIL** (" + "; ".join(problems) + "): ") + \
            "exit %d, %s object, %s (%.1f s)" % (
                p.returncode, "same" if not problems or "object" not in " ".join(problems)
                else "other", "`" + said + "`" if cudal1 else said, seconds)
        if problems:
            self.failures += 1
            sys.stderr.write("FAIL %s: %s\n%s\n" % (name, "; ".join(problems), p.stderr))
        self.rows.append((name, inputText, expectedText, seen))

    def write(self, path):
        with open(path, "w") as f:
            f.write("# Poisoned tuning databases\n\n")
            f.write("Each row: a database built to break the plugin, a compile of `%s` through\n"
                    "it with `-Werror`, what must happen and what did (issue 19 item 4).\n"
                    "\"plain\" and \"tuned\" objects are the compile without the plugin and the\n"
                    "compile with a healthy database (`@sum: warp-reduce`); the object must\n"
                    "match byte for byte, stderr must hold exactly the one documented warning\n"
                    "(never the last resort's \"internal error\"), the exit status must be 0\n"
                    "(the plugin's warnings are not clang diagnostics, so `-Werror` cannot\n"
                    "fail the build), and no `-wal`/`-shm` may be left beside the database.\n"
                    "Plain compile: %.1f s.\n\n" % (os.path.basename(self.args.source),
                                                     self.plainSeconds))
            f.write("Generated by `test/Plugin/poisoned-db.py` (run by "
                    "`test/Plugin/poisoned-db.test`):\n\n```sh\n"
                    "PATH=build/bin:$PATH python3 test/Plugin/poisoned-db.py \\\n"
                    "    --plugin build/lib/libCudaL1Plugin.so \\\n"
                    "    --source test/cudal1-opt/Inputs/host-plan.cu "
                    "--out docs/results/poisoned-db.md\n```\n\n")
            f.write("| input | expected | seen |\n| --- | --- | --- |\n")
            for name, inp, exp, seen in self.rows:
                cell = lambda s: s.replace("|", "\\|").replace("\n", " ")
                f.write("| **%s**: %s | %s | %s |\n" % (cell(name), cell(inp), cell(exp),
                                                       cell(seen)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--work")
    args = ap.parse_args()
    t = Table(args)
    t.references()
    W = r"warning: cudal1: .*"
    ROW = W + r"the best choice of kernel 'sum' \(key k[0-9a-f]+, NVIDIA H200 sm_90\) was skipped: .*"
    NOTAPPLIED = W + r"the tuned plan of kernel 'sum' \('.*'\) was not applied: "

    # 1. Files that are not (our) databases.
    d = t.dbdir("files")
    p = os.path.join(d, "garbage.db")
    open(p, "wb").write(bytes(range(256)) * 64)
    t.case("garbage bytes", "16 KiB of bytes 0..255", "plain object, one warning", p,
           W + r"tuning database '.*' is not a cudal1 tuning database \(file is not a database\)")
    p = os.path.join(d, "truncated.db")
    src = open(t.goodDb, "rb").read()
    c = sqlite3.connect(t.goodDb)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    src = open(t.goodDb, "rb").read()
    open(p, "wb").write(src[: len(src) // 3])
    t.case("truncated file", "the healthy database cut to a third (%d of %d bytes)"
           % (len(src) // 3, len(src)), "plain object, one warning", p,
           W + r"tuning database '.*' is damaged \(database disk image is malformed\)")
    p = os.path.join(d, "empty.db")
    open(p, "wb").close()
    t.case("empty file", "0 bytes", "plain object, no warning (nothing tuned yet)", p, None)
    p = os.path.join(d, "foreign.db")
    c = sqlite3.connect(p)
    c.execute("CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT)")
    c.commit()
    c.close()
    t.case("another program's SQLite file", "a table `photos`, application_id 0",
           "plain object, one warning", p,
           W + r"not a cudal1 tuning database \(an SQLite file of another program\)")
    for version, what, warn in [(99, "newer", r"has schema version 99, newer than this cudal1's"),
                                (1, "older", r"has schema version 1, older than this cudal1's")]:
        p = os.path.join(d, "v%d.db" % version)
        shutil.copy(t.goodDb, p)
        c = sqlite3.connect(p)
        c.execute("PRAGMA user_version = %d" % version)
        c.commit()
        c.close()
        t.case("schema version %d" % version, "the healthy database, `user_version` %d (%s "
               "than this build)" % (version, what), "plain object, one warning", p, W + warn)

    # 2. Crafted schema objects.
    p = t.good(os.path.join(d, "view.db"))
    c = sqlite3.connect(p)
    c.executescript("PRAGMA foreign_keys = OFF; DROP TABLE gpus; CREATE VIEW gpus(id, name, arch) "
                    "AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
                    "SELECT i, 'NVIDIA H200', 'sm_90' FROM n;")
    c.close()
    t.case("recursive-CTE view", "valid application_id and user_version, `gpus` replaced by a "
           "view over an unbounded recursive CTE (hung the plugin and --db-stats)",
           "plain object at once, one warning", p,
           W + r"not a cudal1 tuning database \('gpus' is a view, not a table\)")

    # 3. Locks and permissions.
    p = t.good(os.path.join(t.dbdir("locked"), "tune.db"))

    def holder(mode):
        def start():
            h = subprocess.Popen(["tunedb-test-helper", mode, p], stdout=subprocess.PIPE,
                                 text=True)
            assert h.stdout.readline() == "holding\n"
            return h
        return start
    t.case("locked by a writer (BEGIN IMMEDIATE)", "another process holds an open write "
           "transaction with spilled pages", "the tuned object, no warning (WAL: readers never "
           "wait)", p, None, obj="tuned", setup=holder("hold"))
    t.case("locked by a writer (exclusive locking mode)", "`PRAGMA locking_mode=EXCLUSIVE; "
           "BEGIN EXCLUSIVE` and a write, held", "plain object, one warning saying it is locked",
           p, W + r"is locked by another process", setup=holder("exclusive"))
    rofile = t.good(os.path.join(t.dbdir("ro-file", 0o1777), "tune.db"))
    os.chmod(rofile, 0o444)
    t.case("read-only file", "owned by root, mode 444, in a world-writable directory; "
           "compiled as user nobody", "the tuned object, no warning, no -wal/-shm left "
           "(they would be nobody's and break root's next write)", rofile, None, obj="tuned",
           asNobody=True)
    rodir = t.dbdir("ro-dir")
    rodb = t.good(os.path.join(rodir, "tune.db"))
    os.chmod(rodb, 0o644)
    os.chmod(rodir, 0o555)
    t.case("read-only directory", "database in a directory mode 555; compiled as nobody",
           "the tuned object, no warning", rodb, None, obj="tuned", asNobody=True)
    unreadable = t.good(os.path.join(t.dbdir("unreadable"), "tune.db"))
    os.chmod(unreadable, 0o600)
    t.case("unreadable file", "mode 600, owned by root; compiled as nobody",
           "plain object, one warning saying it cannot be read", unreadable,
           W + r"tuning database '.*' cannot be read \(unable to open database file\)",
           asNobody=True)

    # 4. Best choices that are not plans, or not plans of their row.
    d = t.dbdir("plans")
    n = [0]

    def plan(name, text, expected, warn, obj="plain", kernel="sum"):
        n[0] += 1
        shown = text if len(text) <= 80 else text[:60] + "... (%d bytes)" % len(text)
        shown = shown.replace("\n", "\\n").replace("\t", "\\t")
        t.case(name, "best choice of `%s`: `%s`" % (kernel, shown), expected,
               t.poisonPlan(os.path.join(d, "p%d.db" % n[0]), text, kernel), warn, obj=obj)

    one = "plain object, one warning naming the row"
    plan("huge launch id", "@#99999999999: launch-config(block=128)", one + " (aborted clang "
         "with std::out_of_range before)", ROW + r"plan:1:3: error: launch id 99999999999 is "
         r"out of range")
    plan("huge loop number", "@sum: unroll(loop=99999999999, factor=4)", one,
         NOTAPPLIED + r".*")
    plan("huge sync id", "@sync#99999999999: drop-sync", one, ROW + r"@sync id 99999999999 is "
         r"out of range")
    plan("huge block", "@sum: launch-config(block=99999999999)", one, NOTAPPLIED + r".*block")
    plan("negative block", "@sum: launch-config(block=-32)", one, NOTAPPLIED + r".*block=-32")
    plan("C code", "int x = 0; system(\"rm -rf /\");", one, ROW + r"plan:1:")
    plan("comment end", "@sum: restrict */ int evil;", one, ROW + r"plan:1:")
    plan("#include", "#include \"/etc/passwd\"", one, ROW + r"plan:1:")
    plan("newline", "@sum: restrict\n#include <x>", one, ROW + r"control characters")
    plan("tab", "@sum:\trestrict", one, ROW + r"control characters")
    plan("unknown transform", "@sum: make-it-fast", one, ROW + r"plan:1:|" + NOTAPPLIED)
    plan("unicode look-alike", "@sum: r\u0435strict", one, ROW + r"plan:1:|" + NOTAPPLIED)
    plan("very long plan", "@sum: restrict" + "; @sum: restrict" * 1300, one,
         ROW + r"more than a plan")
    plan("17 steps", "; ".join(["@sum: launch-config(block=128)"] * 17), one,
         ROW + r"the plan has 17 steps, more than a best choice may have \(16\)")
    plan("528 steps", "; ".join(["@#0: launch-config(block=128)"] * 528), one + " (took 122 s "
         "for one compile before)", ROW + r"the plan has 528 steps")
    plan("host step in a kernel row", "@sum: warp-reduce; @sync#0: drop-sync", one,
         ROW + r"its step '@sync#0: drop-sync' is not a step of that kernel")
    plan("other kernel's step", "@scale: restrict", one,
         ROW + r"its step '@scale: restrict' is not a step of that kernel")
    n[0] += 1
    hp = t.good(os.path.join(d, "p%d.db" % n[0]), "@sync#0: drop-sync; @sum: restrict",
                kernel="(host)")
    t.case("kernel step in the host row", "best choice of the host code: `@sync#0: drop-sync; "
           "@sum: restrict`", one, hp, W + r"the best choice of the host code \(key "
           r"host:k.cu#[0-9a-f]+, NVIDIA H200 sm_90\) was skipped: its step '@sum: restrict' "
           r"is not a step of host code")
    n[0] += 1
    slow = t.good(os.path.join(d, "p%d.db" % n[0]),
                  "; ".join(["@sum: launch-config(block=128)"] * 16))
    t.case("slow derivation", "16 legal launch-config steps (several seconds to derive), "
           "budget=0.5", "plain object, one warning; with `cache=` paid once", slow,
           W + r"took longer than its budget of 500 ms",
           extra=["-fplugin-arg-cudal1-budget=0.5",
                  "-fplugin-arg-cudal1-cache=" + os.path.join(t.work, "cache")])

    t.write(args.out)
    print("%d cases, %d failed; table in %s" % (len(t.rows), t.failures, args.out))
    return 1 if t.failures else 0


if __name__ == "__main__":
    sys.exit(main())
