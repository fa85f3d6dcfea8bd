#!/usr/bin/env python3
"""auto's model against what was measured: where its choice is not the fastest.

    build/pg_auto_replay bench/shapes/set.txt > replay.csv
    scripts/auto-replay.py replay.csv bench/results/shape-set/h200-candidates-set.csv [...]

replay.csv is pg_auto_replay's output (bench/auto_replay.c: every candidate's
predicted speed under the rules of src/tuning.c as built, and the one auto
would run); each further file a `pipegemm bench --format csv` run on the GPU
those rules are for, with rows of the candidates beside cuBLAS. For every
shape with two or more candidates measured it prints the model's choice and
its measured x cuBLAS, the fastest measured candidate and its x cuBLAS, and
the share the choice loses; then the geometric means of the two over those
shapes and how many choices lose more than 2 %. A candidate with no measured
row at a shape is left out of that shape's comparison (and said so); a shape
in several runs is taken from the first that has it. Where a
measured run's own `auto` row ran another entry than the replay's choice,
the rules it ran under differ from these: that is said too.
Needs only python3's standard library."""
import csv
import math
import sys


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        print("usage: auto-replay.py REPLAY.csv MEASURED.csv...", file=sys.stderr)
        return 2
    replay = {}  # a shape in several shape files: its first rows
    for r in rows_of(argv[1]):
        rows = replay.setdefault(r["shape"], [])
        if all(c["candidate"] != r["candidate"] for c in rows):
            rows.append(r)
    measured, auto_ran, source = {}, {}, {}  # a shape in several runs: the first run's rows
    for path in argv[2:]:
        for r in rows_of(path):
            if source.setdefault(r["shape"], path) != path:
                continue
            x = r.get("x_cublas", "")
            if not x or r["variant"] == "cublas":
                continue
            if r["variant"] == "auto":
                auto_ran[r["shape"]] = r.get("runs", "")
                continue
            measured.setdefault(r["shape"], {})[r["variant"]] = float(x)
    print("| shape | model's choice | × cuBLAS | fastest measured | × cuBLAS | lost | unmeasured candidates |")
    print("| --- | --- | ---: | --- | ---: | ---: | --- |")
    chosen_logs, best_logs, losing, differ, same = [], [], 0, [], 0
    for shape, candidates in replay.items():
        speeds = measured.get(shape, {})
        running = [c for c in candidates if c["status"] == "PG_OK"]
        pick = next((c["candidate"] for c in candidates if c["chosen"] == "1"), None)
        known = {c["candidate"]: speeds[c["candidate"]] for c in running if c["candidate"] in speeds}
        if pick is None or pick not in known or len(known) < 2:
            continue
        if shape in auto_ran and auto_ran[shape] != pick:
            differ.append(f"{shape}: the measured auto ran {auto_ran[shape]}, the replay picks {pick}")
        same += auto_ran.get(shape) == pick
        best = max(known, key=known.get)
        lost = 1.0 - known[pick] / known[best]
        losing += lost > 0.02
        chosen_logs.append(math.log(known[pick]))
        best_logs.append(math.log(known[best]))
        missing = ", ".join(c["candidate"] for c in running if c["candidate"] not in speeds)
        print(f"| {shape} | `{pick}` | {known[pick]:.3f} | `{best}` | {known[best]:.3f} | "
              f"{100 * lost:.1f} % | {missing or '-'} |")
    if not chosen_logs:
        print("no shape with the model's choice and another candidate measured", file=sys.stderr)
        return 1
    n = len(chosen_logs)
    print()
    print(f"{n} shapes: the model's choices {math.exp(sum(chosen_logs) / n):.3f} x cuBLAS as a "
          f"geometric mean, the fastest measured {math.exp(sum(best_logs) / n):.3f}; "
          f"{losing} choices lose more than 2 %.")
    print(f"The measured auto ran the replay's choice at {same} of these {n} shapes "
          f"({sum(s in auto_ran for s in replay if s in measured) - same} others not compared "
          f"or run otherwise).")
    for line in differ:
        print("note: " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
