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
committed traces in bench/results/timelines/ this way.

Needs Python 3 and matplotlib (scripts/drawing.py finds it: python3's own,
else the copy `make deps` fetches into .deps/python); reading a trace
(load(), which scripts/trace-phases.py uses) needs the standard library
only. Exit codes: 0 ok, 1 a trace has nothing to draw or a picture could
not be written, 2 bad usage, 3 matplotlib is missing.
"""

import argparse
import collections
import glob
import gzip
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ left beside the scripts
import drawing  # scripts/drawing.py: matplotlib, this machine's or .deps/python's

ME = os.path.basename(sys.argv[0])
WIDTH = 1100
ROW_PIXELS = 26
LABEL_SIZES = (8, 7, 6)  # points, largest first
# One colour per stage (ring slot), the same in every picture.
STAGE_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                "#e377c2", "#17becf"]
WAIT_COLOR = "#b0b0b0"
SLOT_WAIT_COLOR = "#dcdcdc"
EPILOGUE_COLOR = "#202020"
THREAD_NAME = re.compile(r"^block (\d+) (block|consumers|producers|copies into stage (\d+))$")


class TimelineError(Exception):
    pass


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


Box = collections.namedtuple("Box", "begin end y half color label")


def boxes_of(spans, origin, base, stages, producer):
    """One box per span, on its row of the band that starts at row base;
    compute and copies carry their K tile as a label."""
    boxes = []
    main = base + stages
    for role, event in spans:
        begin = event["ts"] - origin
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
        label = f"k{event['args']['k_tile']}" if event["cat"] in ("compute", "copy") else None
        boxes.append(Box(begin, begin + event["dur"], y, half, color, label))
    return boxes


def fit_labels(fig, ax, labels):
    """Each box's K tile in the largest of LABEL_SIZES that fits inside the
    box; none where even the smallest would spill over its neighbours."""
    fig.canvas.draw()  # the layout, which places the axes
    renderer = fig.canvas.get_renderer()
    for box, text in labels:
        left, right = (ax.transData.transform((x, box.y))[0] for x in (box.begin, box.end))
        for size in LABEL_SIZES:
            text.set_fontsize(size)
            if text.get_window_extent(renderer).width <= right - left - 2:
                break
        else:
            text.set_visible(False)


def draw(trace, png, blocks_wanted, k_count, first, title, plt):
    blocks = blocks_of(trace)
    if not blocks:
        raise TimelineError("no spans in the trace")
    stages = stages_of(trace, blocks)
    k_tiles = k_tiles_of(trace, blocks)
    k_count = max(1, min(k_count, k_tiles))
    if first is None:
        first = max(0, k_tiles // 2 - k_count // 2)
    first = max(0, min(first, k_tiles - k_count))
    boxes, rows = [], []
    base = 0
    right = 0.0
    for block in blocks[:blocks_wanted]:
        spans = window_spans(block, first, k_count)
        if not spans:
            continue
        origin = min(e["ts"] for _, e in spans)
        right = max(right, max(e["ts"] + e["dur"] - origin for _, e in spans))
        boxes += boxes_of(spans, origin, base, stages, block.producer)
        for i, row in enumerate(rows_of(stages, block.producer)):
            rows.append((base + i, f"block {block.number}: {row}"))
        base += len(rows_of(stages, block.producer)) + 1
    if not boxes:
        raise TimelineError(f"no spans of K tiles {first}..{first + k_count - 1}")
    other = trace.get("otherData", {})
    if title is None:
        title = (f"{other.get('variant', '?')}, {stages} stage{'s' if stages != 1 else ''}, "
                 f"{other.get('shape', '?')}" +
                 (f", {other['gpu']}" if other.get("gpu") else "") +
                 f": K tiles {first}-{first + k_count - 1}")
    picture(plt, png, title, boxes, rows, base, right, stages)


def picture(plt, png, title, boxes, rows, height, right, stages):
    """The boxes on their rows (height of them, gaps included) from 0 to
    right µs, the labels that fit, and a key of the colours."""
    fig, ax = drawing.figure(plt, WIDTH, max(260, 120 + height * ROW_PIXELS))
    ax.barh([b.y for b in boxes], [b.end - b.begin for b in boxes],
            height=[2 * b.half for b in boxes], left=[b.begin for b in boxes],
            color=[b.color for b in boxes], edgecolor="#404040", linewidth=0.6, zorder=2)
    labels = [(b, ax.text((b.begin + b.end) / 2, b.y, b.label, ha="center", va="center",
                          zorder=3, in_layout=False)) for b in boxes if b.label]
    ax.set_title(title)
    ax.set_xlabel("µs since the block's first copy in the window")
    ax.set_xlim(0, right * 1.02)
    ax.set_ylim(height - 0.5, -0.7)
    ax.set_yticks([y for y, _ in rows])
    ax.set_yticklabels([name for _, name in rows])
    ax.grid(axis="x", color="#e8e8e8")
    ax.set_axisbelow(True)
    key(ax, stages)
    fit_labels(fig, ax, labels)
    try:
        drawing.save(plt, fig, png)
    except (OSError, ValueError) as err:
        raise TimelineError(f"cannot write {png}: {err}") from err


def key(ax, stages):
    """The colours' key, outside the plot on its right."""
    from matplotlib.patches import Patch  # matplotlib is loaded by now (drawing.pyplot)
    colors = [(f"stage {s}", STAGE_COLORS[s % len(STAGE_COLORS)]) for s in range(stages)]
    colors += [("data wait", WAIT_COLOR), ("slot wait", SLOT_WAIT_COLOR),
               ("epilogue", EPILOGUE_COLOR)]
    ax.legend(handles=[Patch(facecolor=color, edgecolor="#404040", label=label)
                       for label, color in colors],
              loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0, frameon=False)


def draw_dir(directory, out, args, plt):
    paths = sorted(glob.glob(os.path.join(directory, "*-trace-*.json")) +
                   glob.glob(os.path.join(directory, "*-trace-*.json.gz")))
    if not paths:
        raise TimelineError(f"no *-trace-*.json(.gz) in {directory}")
    for path in paths:
        name = re.sub(r"\.json(\.gz)?$", ".png", os.path.basename(path))
        png = os.path.join(out, name.replace("-trace-", "-timeline-", 1))
        draw(load(path), png, args.blocks, args.k_tiles, args.first, None, plt)
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
    try:
        plt = drawing.pyplot()
    except drawing.Missing as err:
        print(f"{ME}: {err}", file=sys.stderr)
        return 3
    try:
        if args.dir:
            draw_dir(args.dir, args.out or args.dir, args, plt)
        else:
            draw(load(args.trace), args.png, args.blocks, args.k_tiles, args.first, args.title,
                 plt)
            print(f"{ME}: wrote {args.png}")
    except TimelineError as err:
        print(f"{ME}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
