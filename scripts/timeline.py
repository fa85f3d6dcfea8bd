#!/usr/bin/env python3
"""Draws the pipeline that `pipegemm trace` recorded: a few K tiles of a few
blocks, the copies into each stage against the compute, stage by colour.

    scripts/timeline.py TRACE.json[.gz] OUT.png [--blocks N] [--k-tiles N]
                        [--first K] [--title T]
    scripts/timeline.py --dir DIR [--out DIR]

The first form draws one trace file (the JSON that `pipegemm trace --out`
writes, or it gzipped). Each block gets a band of rows: one per stage with
the copies into that stage (from issued to data ready), the block's own row
(or its consumers') with data waits in grey, compute on each K tile in its
stage's colour and the epilogue in black, and, where the kernel has
producer warps, their row with the waits for a free slot. Each band starts
at its own block's first copy of the window, so blocks that ran at
different times line up. The window is --k-tiles K tiles (default 6) from
--first (default: the middle of K) of the first output tile, in --blocks
blocks (default 3), the earliest to start.

The second form draws every DIR/*-trace-*.json and *-trace-*.json.gz into
OUT/*-timeline-*.png (OUT defaults to DIR): `make timeline` draws the
committed traces in bench/results/ this way.

Needs Python 3 (standard library only) and gnuplot 5 (Debian/Ubuntu:
apt-get install gnuplot-nox). Exit codes: 0 ok, 1 a trace has nothing to
draw or gnuplot failed, 2 bad usage, 3 gnuplot is not installed.
"""

import argparse
import collections
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

ME = os.path.basename(sys.argv[0])
WIDTH = 1100
ROW_PIXELS = 26
# One colour per stage (ring slot), the same in every picture.
STAGE_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                "#e377c2", "#17becf"]
WAIT_COLOR = "#b0b0b0"
SLOT_WAIT_COLOR = "#dcdcdc"
EPILOGUE_COLOR = "#202020"
THREAD_NAME = re.compile(r"^block (\d+) (block|consumers|producers|copies into stage (\d+))$")


class TimelineError(Exception):
    pass


def gp_string(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def gnuplot_terminal(height):
    probe = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True,
                           text=True, check=False)
    if "pngcairo" in probe.stdout + probe.stderr:
        return f'pngcairo size {WIDTH},{height} font "sans,10" noenhanced'
    return f"png size {WIDTH},{height} noenhanced"


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            trace = json.load(handle)
    except (OSError, ValueError) as err:
        raise TimelineError(f"cannot read {path}: {err}") from err
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise TimelineError(f"{path}: no traceEvents: is this what pipegemm trace wrote?")
    return trace


Block = collections.namedtuple("Block", "number spans producer start")


def blocks_of(trace):
    """The spans of each block, by block number, from the thread names."""
    lanes = {}
    for event in trace["traceEvents"]:
        if event.get("ph") == "M" and event.get("name") == "thread_name":
            match = THREAD_NAME.match(event["args"]["name"])
            if match:
                lanes[event["tid"]] = (int(match.group(1)), match.group(2))
    spans = collections.defaultdict(list)
    for event in trace["traceEvents"]:
        if event.get("ph") == "X" and event.get("tid") in lanes:
            block, role = lanes[event["tid"]]
            spans[block].append((role, event))
    blocks = []
    for number, items in spans.items():
        producer = any(role == "producers" for role, _ in items)
        start = min(event["ts"] for _, event in items)
        blocks.append(Block(number, items, producer, start))
    return sorted(blocks, key=lambda b: (b.start, b.number))


def stages_of(trace, blocks):
    stages = trace.get("otherData", {}).get("stages")
    if stages and stages.isdigit():
        return int(stages)
    return 1 + max((e["args"]["stage"] for b in blocks for _, e in b.spans), default=0)


def k_tiles_of(trace, blocks):
    k_tiles = trace.get("otherData", {}).get("k_tiles")
    if k_tiles and k_tiles.isdigit():
        return int(k_tiles)
    return 1 + max((e["args"]["k_tile"] for b in blocks for _, e in b.spans), default=0)


def window_spans(block, first, count):
    """The block's spans of K tiles first..first+count-1 of its first
    output tile, and the epilogue if the window reaches it."""
    chosen = []
    for role, event in block.spans:
        args = event["args"]
        in_window = args["tile"] == 0 and first <= args["k_tile"] < first + count
        if event["cat"] == "epilogue":
            in_window = args["tile"] == 0 and chosen_reaches_end(block, first, count)
        if in_window:
            chosen.append((role, event))
    return chosen


def chosen_reaches_end(block, first, count):
    last = max((e["args"]["k_tile"] for _, e in block.spans
                if e["cat"] == "compute" and e["args"]["tile"] == 0), default=-1)
    return first + count > last


def rows_of(stages, producer):
    """Row names of one block's band, top to bottom."""
    rows = [f"copies into stage {s}" for s in range(stages)]
    rows.append("compute (consumers)" if producer else "compute (block)")
    if producer:
        rows.append("producers")
    return rows


def box_lines(spans, origin, base, stages, producer):
    """gnuplot boxxyerror rows: x y xlow xhigh ylow yhigh colour, and a
    label line for each compute span."""
    boxes, labels = [], []
    main = base + stages
    for role, event in spans:
        begin = event["ts"] - origin
        end = begin + event["dur"]
        stage = event["args"]["stage"]
        color = STAGE_COLORS[stage % len(STAGE_COLORS)]
        half = 0.38
        if event["cat"] == "copy":
            y = base + stage
        elif event["cat"] == "slot wait" and producer:
            y, color, half = main + 1, SLOT_WAIT_COLOR, 0.3
        elif event["cat"] == "slot wait":
            y, color, half = main, SLOT_WAIT_COLOR, 0.3
        elif event["cat"] == "wait":
            y, color, half = main, WAIT_COLOR, 0.25
        elif event["cat"] == "epilogue":
            y, color = main, EPILOGUE_COLOR
        else:
            y = main
        boxes.append(f"{(begin + end) / 2:.4f} {y} {begin:.4f} {end:.4f} {y - half:.2f} "
                     f"{y + half:.2f} {int(color[1:], 16)}")
        if event["cat"] in ("compute", "copy"):
            labels.append(f"{(begin + end) / 2:.4f} {y} \"k{event['args']['k_tile']}\"")
    return boxes, labels


def draw(trace, png, blocks_wanted, k_count, first, title):
    blocks = blocks_of(trace)
    if not blocks:
        raise TimelineError("no spans in the trace")
    stages = stages_of(trace, blocks)
    k_tiles = k_tiles_of(trace, blocks)
    k_count = max(1, min(k_count, k_tiles))
    if first is None:
        first = max(0, k_tiles // 2 - k_count // 2)
    first = max(0, min(first, k_tiles - k_count))
    boxes, labels, ytics = [], [], []
    base = 0
    right = 0.0
    for block in blocks[:blocks_wanted]:
        spans = window_spans(block, first, k_count)
        if not spans:
            continue
        origin = min(e["ts"] for _, e in spans)
        right = max(right, max(e["ts"] + e["dur"] - origin for _, e in spans))
        b, l = box_lines(spans, origin, base, stages, block.producer)
        boxes += b
        labels += l
        for i, row in enumerate(rows_of(stages, block.producer)):
            ytics.append(f'"block {block.number}: {row}" {base + i}')
        base += len(rows_of(stages, block.producer)) + 1
    if not boxes:
        raise TimelineError(f"no spans of K tiles {first}..{first + k_count - 1}")
    other = trace.get("otherData", {})
    if title is None:
        title = (f"{other.get('variant', '?')}, {stages} stage{'s' if stages != 1 else ''}, "
                 f"{other.get('shape', '?')}" +
                 (f", {other['gpu']}" if other.get("gpu") else "") +
                 f": K tiles {first}-{first + k_count - 1}")
    key = [f'NaN with boxes fs solid lc rgb "{STAGE_COLORS[s % len(STAGE_COLORS)]}" '
           f'title "stage {s}"' for s in range(stages)]
    key += [f'NaN with boxes fs solid lc rgb "{WAIT_COLOR}" title "data wait"',
            f'NaN with boxes fs solid lc rgb "{SLOT_WAIT_COLOR}" title "slot wait"',
            f'NaN with boxes fs solid lc rgb "{EPILOGUE_COLOR}" title "epilogue"']
    script = "\n".join([
        "$boxes << EOD", *boxes, "EOD",
        "$labels << EOD", *labels, "EOD",
        f"set title {gp_string(title)}",
        'set xlabel "µs since the block\'s first copy in the window"',
        f"set xrange [0:{right * 1.02:.4f}]",
        f"set yrange [{base - 0.5}:-0.7]",
        "set ytics (" + ", ".join(ytics) + ") nomirror",
        'set grid xtics lc rgb "#e8e8e8"',
        "set style fill solid 0.9 border lc rgb \"#404040\"",
        "set key outside right top",
        "plot $boxes using 1:2:3:4:5:6:7 with boxxyerror lc rgb variable notitle, \\",
        "     $labels using 1:2:3 with labels font \",8\" notitle, \\",
        "     " + ", \\\n     ".join(key),
    ])
    height = max(260, 120 + base * ROW_PIXELS)
    full = f"set terminal {gnuplot_terminal(height)}\nset output {gp_string(png)}\n{script}\n"
    if os.path.exists(png):
        os.remove(png)
    done = subprocess.run(["gnuplot"], input=full, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not os.path.exists(png):
        raise TimelineError(f"gnuplot failed to draw {png}: {done.stderr.strip()}")


def draw_dir(directory, out, args):
    paths = sorted(glob.glob(os.path.join(directory, "*-trace-*.json")) +
                   glob.glob(os.path.join(directory, "*-trace-*.json.gz")))
    if not paths:
        raise TimelineError(f"no *-trace-*.json(.gz) in {directory}")
    for path in paths:
        name = re.sub(r"\.json(\.gz)?$", ".png", os.path.basename(path))
        png = os.path.join(out, name.replace("-trace-", "-timeline-", 1))
        draw(load(path), png, args.blocks, args.k_tiles, args.first, None)
        print(f"{ME}: wrote {png}")


def main(argv):
    parser = argparse.ArgumentParser(prog=ME, description="Draws a pipegemm trace.")
    parser.add_argument("trace", nargs="?", help="a trace JSON file (.json or .json.gz)")
    parser.add_argument("png", nargs="?", help="the PNG to write")
    parser.add_argument("--dir", help="draw every *-trace-*.json(.gz) of this directory")
    parser.add_argument("--out", help="with --dir: where the PNGs go (default: --dir)")
    parser.add_argument("--blocks", type=int, default=3, help="blocks to draw (default 3)")
    parser.add_argument("--k-tiles", type=int, default=6, help="K tiles to draw (default 6)")
    parser.add_argument("--first", type=int, help="the first K tile (default: mid K)")
    parser.add_argument("--title", help="the picture's title")
    args = parser.parse_args(argv)
    if bool(args.dir) == bool(args.trace) or (args.trace and not args.png) or \
            (args.dir and args.png) or args.blocks < 1 or args.k_tiles < 1:
        parser.print_usage(sys.stderr)
        return 2
    if not shutil.which("gnuplot"):
        print(f"{ME}: gnuplot is not installed, so there is no picture; install it "
              "(Debian/Ubuntu: apt-get install gnuplot-nox) and run again", file=sys.stderr)
        return 3
    try:
        if args.dir:
            draw_dir(args.dir, args.out or args.dir, args)
        else:
            draw(load(args.trace), args.png, args.blocks, args.k_tiles, args.first, args.title)
            print(f"{ME}: wrote {args.png}")
    except TimelineError as err:
        print(f"{ME}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
