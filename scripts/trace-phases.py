#!/usr/bin/env python3
"""Where a K tile's time goes, from `pipegemm trace` JSON files: per file,
over the traced blocks' compute tracks, the medians per K tile of

  wait      the wait for the tile's data (the wait span: the thread that
            records waits on its own copies or the stage's barrier)
  to work   from that wait's end to the tile's compute (a block-wide
            barrier, the next copy's issue)
  compute   the compute span
  after     from the compute's end to the next tile's wait (release,
            refills, the loop)
  tile      from one tile's compute start to the next's

and the median time from a copy's issue to its data being ready (the
copy span). K tiles are taken from the middle half of K, away from
prologue and epilogue.

    scripts/trace-phases.py bench/results/timelines/h200-trace-*.json.gz
"""
import collections
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ left beside the scripts
import timeline  # scripts/timeline.py: reads a trace, plain or gzipped


def median(values):
    return statistics.median(values) if values else float("nan")


def phases(events):
    spans = collections.defaultdict(dict)  # (pid, tid) -> {(cat, tile, k): event}
    copies = []
    for e in events:
        if e.get("ph") != "X":
            continue
        args = e.get("args", {})
        key = (e["cat"], args.get("tile", 0), args.get("k_tile", -1))
        if e["cat"] == "copy":
            copies.append(e["dur"])
            continue
        spans[(e["pid"], e["tid"])][key] = e
    rows = collections.defaultdict(list)
    for track in spans.values():
        computes = sorted((v for (c, _, _), v in track.items() if c == "compute"),
                          key=lambda e: e["ts"])
        if len(computes) < 8:
            continue
        ks = [e["args"]["k_tile"] for e in computes]
        lo, hi = ks[len(ks) // 4], ks[3 * len(ks) // 4]
        for here, nxt in zip(computes, computes[1:]):
            a = here["args"]
            if not lo <= a["k_tile"] <= hi or nxt["args"].get("tile") != a.get("tile"):
                continue
            wait = track.get(("wait", a.get("tile", 0), a["k_tile"]))
            nxt_wait = track.get(("wait", a.get("tile", 0), nxt["args"]["k_tile"]))
            rows["compute"].append(here["dur"])
            rows["tile"].append(nxt["ts"] - here["ts"])
            if wait:
                rows["wait"].append(wait["dur"])
                rows["to work"].append(here["ts"] - (wait["ts"] + wait["dur"]))
            if nxt_wait:
                rows["after"].append(nxt_wait["ts"] - (here["ts"] + here["dur"]))
    return {name: median(v) * 1e3 for name, v in rows.items()}, median(copies) * 1e3


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    cols = ["wait", "to work", "compute", "after", "tile"]
    print("trace".ljust(40) + "".join(f"{c:>10s}" for c in cols) + f"{'copy':>10s}   (ns, medians)")
    for path in argv[1:]:
        try:
            events = timeline.load(path)["traceEvents"]
        except timeline.TimelineError as err:
            print(f"trace-phases.py: {err}", file=sys.stderr)
            return 1
        rows, copy = phases(events)
        print(path.split("/")[-1].ljust(40) +
              "".join(f"{rows.get(c, float('nan')):10.0f}" for c in cols) + f"{copy:10.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
