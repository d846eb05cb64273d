# A campaign database of the few tables `dataset drop` reads, with one
# measurement of each kind it must tell apart (test/Data/dataset-drop.test).
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
db.executescript("""
CREATE TABLE plans (id INTEGER PRIMARY KEY, text TEXT);
CREATE TABLE variants (id INTEGER PRIMARY KEY, plan_id INTEGER);
CREATE TABLE measurements (id INTEGER PRIMARY KEY, variant_id INTEGER, judge TEXT,
                           measured_at TEXT);
INSERT INTO plans VALUES (1, '@k: tile-shared(tile=16, rb=2)'), (2, '@k: tile-shared(tile=16, rb=1)'),
                         (3, '@k: restrict; vectorize(width=16)');
INSERT INTO variants VALUES (1, 1), (2, 2), (3, 3);
INSERT INTO measurements VALUES
  (1, 1, 'replay-double-reference', '2026-12-06T20:00:00Z'),
  (2, 1, 'program', '2026-12-06T20:00:00Z'),
  (3, 1, 'replay-double-reference', '2026-12-06T21:00:00Z'),
  (4, 2, 'replay-double-reference', '2026-12-06T20:00:00Z'),
  (5, 3, 'replay-fallback', '2026-12-05T10:00:00Z');
""")
db.commit()
