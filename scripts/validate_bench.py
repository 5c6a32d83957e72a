#!/usr/bin/env python3
"""make bench: `madmax validate` at scale, time and peak memory side by side.

Builds two CSVs in a temporary folder from the shipped measured runs (nothing is stored in the
repository): 100,000 rows cycling through every shipped training run, each with its own id and
source (so the per-source summary has 100,000 lines), and 10,000 rows of one run alternating
two micro-batch sizes (25,000,000 same-work pairs for the floor). Prints the wall time and the
peak resident memory of each run.

Usage: scripts/validate_bench.py [MADMAX_BIN]
"""
import csv
import io
import os
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/madmax"
DATA = "src/presets/data/validation"


def rows(name):
    with open(os.path.join(DATA, name), newline="", encoding="utf-8") as f:
        r = list(csv.reader(f))
    return r[0], [dict(zip(r[0], x)) for x in r[1:]]


def write(path, header, dicts):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for d in dicts:
        w.writerow([d.get(k, "") for k in header])
    with open(path, "w", encoding="utf-8") as f:
        f.write(out.getvalue())
    return len(out.getvalue())


def run(label, path, size):
    t0 = time.monotonic()
    p = subprocess.Popen([BIN, "validate", path], stdout=subprocess.DEVNULL)
    # wait4 gives this child's own peak resident memory (KB on Linux).
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    print(f"validate {label} ({size / 1e6:.0f} MB): {wall:.2f} s, peak memory {usage.ru_maxrss / 1024:.0f} MB, "
          f"exit {os.waitstatus_to_exitcode(status)} (target: 100,000 rows under 5 s and 500 MB)")


def main():
    header, all_rows = rows("added.csv")
    all_rows = rows("training.csv")[1] + all_rows
    with tempfile.TemporaryDirectory() as tmp:
        alt = os.path.join(tmp, "alternating.csv")
        first = all_rows[0]
        size = write(alt, header, [
            {**first, "id": f"a{i}", "microbatch": "8" if i % 2 == 0 else "4", "measured": str(3.0 + (i % 7) / 10)}
            for i in range(10_000)
        ])
        run("10,000 rows of one run in two micro-batch sizes", alt, size)
        big = os.path.join(tmp, "rows.csv")
        size = write(big, header, [
            {**all_rows[i % len(all_rows)], "id": f"r{i}", "source": f"source {i}"} for i in range(100_000)
        ])
        run("100,000 rows, each its own source", big, size)


main()
