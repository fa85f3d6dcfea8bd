#!/usr/bin/env python3
"""Turns what pipegemm writes into one Markdown page with PNG plots.

    scripts/report.py [--bench X.csv]... [--sweep Y.csv]... [--profile Z.csv]...
                      [--inspect W.csv]... --out DIR [--name NAME] [--title T]
                      [--sections bars,stages,sizes,profile,inspect]
    scripts/report.py --stage-plot CSV OUT.png [TITLE]

Inputs are the CSV (or JSON) reports of `pipegemm bench`, `pipegemm profile`
and `pipegemm inspect` (`--format csv`); each option may repeat, and a file
may hold several reports one after another (`study pipelining --profile`
writes two, a size sweep one per shape). The page, DIR/NAME.md, has:

  * TFLOP/s per variant, one bar chart per shape, with the cuBLAS row and the
    FFMA peak as lines (the peak is each row's TFLOP/s over its % FFMA peak,
    so it uses the clock bench sampled). Each shape's bars come from one
    input, the --bench or --sweep file with the most variants at that shape
    (a --bench file on a tie). From a sweep it takes each variant's 2-stage
    row, or its only row when its depth is fixed.
  * The stage sweep of each --sweep file and shape.
  * The size sweep, TFLOP/s against shape per variant: the --bench rows when
    they hold more than one shape, else the bars' rows; a note says so when
    there is one shape only.
  * The Nsight Compute table of each --profile (the write-up's rows, one column per
    kernel) and a chart of its stall rows.
  * The tables of --inspect, as they come.

--sections keeps only the sections named (all five by default), so that a
page of many inputs can leave out the bars, one plot a shape.

Every variant has one colour, dash and marker in every plot
(VARIANT_STYLES, scripts/looks.py). Shapes go by size: M*N*K, then M, N, K. Plots are
DIR/NAME-*.png. --stage-plot draws one stage sweep alone (what
scripts/plot-stages.sh runs). Needs Python 3 and matplotlib, python3's own
or else the copy `make deps` fetches into .deps/python (scripts/drawing.py
finds it). The page is the same for the same inputs: no date of its own,
the inputs' dates instead.

Exit codes: 0 ok, 1 an input has nothing usable or a plot could not be
written, 2 bad usage, 3 matplotlib is missing.
"""

import argparse
import csv
import io
import json
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ left beside the scripts
import drawing  # scripts/drawing.py: matplotlib, this machine's or .deps/python's
# One look per variant in every plot, and the greys of the lines that are
# no variant (scripts/looks.py; tests/test_report.py reads them here).
from looks import (FALLBACK_DASH, FORM_LOOKS, GRID_COLOR, PEAK_COLOR, STALL_KEYS,
                   VARIANT_STYLES, line_style, tile_forms, variant_style)

ME = os.path.basename(sys.argv[0])

# The per-variant bars take this stage count from a sweep: the default of the
# cp.async family and the depth of the "CUDA Kernel Study: Pipelining"
# write-up (tma and tma_ws default deeper; a --bench file runs each at its own).
BAR_STAGES = 2
CUBLAS = "cublas"
SIZE = (1100, 620)  # pixels

# The page's sections, in page order (--sections).
SECTIONS = ("bars", "stages", "sizes", "profile", "inspect")


class ReportError(Exception):
    """An input we cannot use: one line for the user, exit 1."""


# ---- reading pipegemm's reports ---------------------------------------------


def split_csv_reports(text):
    """Reports in one CSV text: '# key: value' facts, '# note:' lines, a
    header row and data rows; a new '# report:' line starts the next one."""
    reports = []
    current = None
    lines = []

    def finish():
        if current is None:
            return
        rows = list(csv.DictReader(io.StringIO("".join(lines)))) if lines else []
        current["rows"] = rows
        reports.append(current)

    for line in io.StringIO(text):
        if line.startswith("# report:"):
            finish()
            current = {"report": line[len("# report:"):].strip(),
                       "facts": {}, "notes": []}
            lines = []
            continue
        if current is None:
            current = {"report": "", "facts": {}, "notes": []}
        if line.startswith("#"):
            body = line[1:].strip()
            key, sep, value = body.partition(":")
            if not sep:
                continue
            if key.strip() == "note":
                current["notes"].append(value.strip())
            else:
                current["facts"][key.strip()] = value.strip()
        elif line.strip():
            # CSVs joined together repeat their header line.
            if not lines or line.rstrip("\r\n") != lines[0].rstrip("\r\n"):
                lines.append(line)
    finish()
    return reports


def split_json_reports(text):
    """Reports in a JSON text: one object or several one after another."""
    decoder = json.JSONDecoder()
    reports = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            break
        value, position = decoder.raw_decode(text, position)
        for item in value if isinstance(value, list) else [value]:
            facts = {k: "" if v is None else str(v)
                     for k, v in (item.get("header") or {}).items()}
            rows = [{k: "" if v is None else str(v) for k, v in row.items()}
                    for row in item.get("rows") or []]
            reports.append({"report": item.get("report", ""), "facts": facts,
                            "notes": list(item.get("notes") or []),
                            "rows": rows})
    return reports


def read_reports(path):
    """The reports of one file; - is standard input."""
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
    except OSError as err:
        raise ReportError(f"cannot read {path}: {err.strerror}")
    try:
        reports = (split_json_reports(text) if text.lstrip().startswith(("{", "["))
                   else split_csv_reports(text))
    except (ValueError, csv.Error) as err:
        raise ReportError(f"{path}: not a pipegemm CSV or JSON report ({err})")
    for report in reports:
        report["path"] = path
    if not any(report["rows"] for report in reports):
        raise ReportError(f"{path}: no rows (is it pipegemm's --format csv output?)")
    return reports


def number(text):
    """A float from a CSV cell; None for an empty or non-numeric cell."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def bench_rows(reports, path):
    rows = []
    for report in reports:
        for row in report["rows"]:
            if "variant" in row and "tflops" in row and "shape" in row:
                rows.append(dict(row, _facts=report["facts"]))
    if not rows:
        raise ReportError(f"{path}: no variant, shape and tflops columns: "
                          "is it 'pipegemm bench --format csv'?")
    return rows


def shape_key(shape):
    """Shapes in order of size: multiply-adds (M*N*K), then M, N, K, all as
    numbers (as text, 512x512x512 would follow 4096x4096x4096). A shape that
    is not MxNxK goes last, by its text."""
    try:
        m, n, k = (int(part) for part in shape.split("x"))
    except ValueError:
        return (1, 0, 0, 0, 0, shape)
    return (0, m * n * k, m, n, k, "")


# ---- Markdown ----------------------------------------------------------------


def shown_path(path):
    """A path as the page names it: relative to here when below here."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(header, rows, right=()):
    out = ["| " + " | ".join(md_cell(h) for h in header) + " |",
           "| " + " | ".join("---:" if i in right else "---"
                             for i in range(len(header))) + " |"]
    out += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def fmt(value, decimals):
    if value is None:
        return "-"
    if decimals == 0 and abs(value) >= 10000:
        return f"{value:,.0f}"
    return f"{value:.{decimals}f}"


# ---- matplotlib ---------------------------------------------------------------


def new_plot(plt, title, ylabel):
    fig, ax = drawing.figure(plt, *SIZE)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    return fig, ax


def write_png(plt, fig, png):
    try:
        drawing.save(plt, fig, png)
    except (OSError, ValueError) as err:
        raise ReportError(f"cannot write {png}: {err}")


def slanted_ticks(ax, positions, labels, angle, **text):
    """Category labels under the axis, turned clockwise by angle degrees and
    hanging from their tick, so that long ones do not run into each other."""
    ax.set_xticks(positions)
    if angle:
        ax.set_xticklabels(labels, rotation=-angle, ha="left", rotation_mode="anchor", **text)
    else:
        ax.set_xticklabels(labels, **text)


def legend(ax, outside):
    """A boxed key, opaque: outside at the top right, or inside there."""
    where = {"loc": "upper left", "bbox_to_anchor": (1.02, 1), "borderaxespad": 0} \
        if outside else {"loc": "upper right"}
    ax.legend(framealpha=1, fancybox=False, edgecolor="black", **where)


def bar_chart(png, title, rows, plt):
    """Bars of TFLOP/s per variant in each variant's colour; cuBLAS and the
    FFMA peak as lines."""
    cublas = next((r for r in rows if r["variant"] == CUBLAS), None)
    peaks = [r["tflops_v"] / (r["pct_v"] / 100.0) for r in rows
             if r["pct_v"] not in (None, 0)]
    peak = sorted(peaks)[len(peaks) // 2] if peaks else None
    labels = [row["variant"] + (f" ({row['stages']})" if row["multi_stage"] else "")
              for row in rows]
    values = [row["tflops_v"] for row in rows]
    fig, ax = new_plot(plt, title, "TFLOP/s (median)")
    positions = range(len(rows))
    ax.bar(positions, values, width=0.7, edgecolor="black", linewidth=0.8, zorder=2,
           color=[variant_style(row["variant"]).color for row in rows])
    if cublas:
        level = cublas["tflops_v"]
        ax.axhline(level, label="cublas (strict FP32) %.1f" % level, zorder=3,
                   **line_style(CUBLAS, markers=False))
    if peak:
        ax.axhline(peak, color=PEAK_COLOR, linewidth=2, label="FFMA peak %.1f" % peak, zorder=3)
    # Above the lines and on a white box, so that the cuBLAS line does not
    # cross a value.
    for x, value in zip(positions, values):
        ax.annotate(f"{value:.1f}", (x, value), xytext=(0, 4), textcoords="offset points",
                    ha="center", va="bottom", zorder=4,
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white",
                          "edgecolor": "none"})
    top = max(values + ([peak] if peak else []))
    # Headroom above the highest bar or line for the key.
    ax.set_ylim(0, top * 1.22)
    ax.set_xlim(-0.6, len(rows) - 0.4)
    slanted_ticks(ax, positions, labels, 35)
    ax.grid(axis="y", color=GRID_COLOR)
    ax.set_axisbelow(True)
    if cublas or peak:
        legend(ax, outside=False)
    write_png(plt, fig, png)
    return peak


def stage_chart(png, title, rows, plt):
    """TFLOP/s against pipeline stages, one line per variant. Rows without a
    TFLOP/s figure (SKIP, FAIL, ERROR) are left out, so a line ends where a
    stage count stopped fitting or failed. A variant measured at one stage
    count is a level across the plot, marked where it ran: what the sweep is
    compared with. The TFLOP/s axis is scaled to the data, not from zero: a
    sweep is about the differences."""
    series, order = {}, []
    for row in rows:
        stages, tflops = number(row.get("stages")), number(row.get("tflops"))
        if stages is None or tflops is None:
            continue
        variant = row["variant"]
        if variant not in series:
            series[variant] = []
            order.append(variant)
        if any(s == stages for s, _ in series[variant]):
            raise ReportError(f"{variant} at {row['stages']} stages appears twice")
        series[variant].append((stages, tflops))
    if not order:
        raise ReportError("no row has a TFLOP/s figure to plot")
    every = [s for variant in order for s, _ in series[variant]]
    lo, hi = min(every) - 0.5, max(every) + 0.5
    fig, ax = new_plot(plt, title, "TFLOP/s (median)")
    for variant in order:
        points = sorted(series[variant])
        if len(points) == 1:
            stages, tflops = points[0]
            # The measured point, a gap (no segment to it), the level: the
            # marker on the first point only.
            ax.plot([stages, math.nan, lo, hi], [tflops, math.nan, tflops, tflops],
                    markevery=[0], **line_style(variant, 1.5),
                    label=(f"{variant} (reference)" if variant == CUBLAS else
                           f"{variant} (fixed at {stages:g} stage{'' if stages == 1 else 's'})"))
        else:
            ax.plot([s for s, _ in points], [t for _, t in points], label=variant,
                    **line_style(variant))
    ax.set_xlabel("pipeline stages")
    ax.set_xlim(lo, hi)
    ax.set_xticks(range(math.ceil(lo), math.floor(hi) + 1))
    ax.margins(y=0.08)
    ax.grid(color=GRID_COLOR)
    ax.set_axisbelow(True)
    legend(ax, outside=True)
    write_png(plt, fig, png)


def shape_tic(shape, two_lines=True):
    """The shape and, on a second line, its multiply-adds: the axis shows
    why the shapes come in this order. Many shapes get the shape alone, the
    line slanted."""
    key = shape_key(shape)
    return shape if key[0] or not two_lines else f"{shape}\n{key[1] / 1e9:.3g} G"


def size_chart(png, title, series, shapes, plt, ylabel="TFLOP/s (median)"):
    """A value (TFLOP/s, or × cuBLAS) against shape, one line per variant.
    The shapes are evenly spaced categories in order of size (shape_key)."""
    fig, ax = new_plot(plt, title, ylabel)
    for variant, points in series:
        ax.plot([shapes.index(s) for s, _ in points], [t for _, t in points], label=variant,
                **line_style(variant))
    many = len(shapes) > 10
    slanted_ticks(ax, range(len(shapes)), [shape_tic(s, not many) for s in shapes],
                  55 if many else 25 if len(shapes) > 6 else 0,
                  **({"fontsize": 9} if many else {}))
    ax.set_xlabel("GEMM shape M x N x K, and M*N*K multiply-adds (G = 10^9): in order of size",
                  labelpad=8)
    ax.set_xlim(-0.3, len(shapes) - 0.7)
    ax.margins(y=0.08)
    ax.grid(color=GRID_COLOR)
    ax.set_axisbelow(True)
    legend(ax, outside=True)
    write_png(plt, fig, png)


def stall_chart(png, title, columns, plt):
    """Clustered bars: the stall rows per profiled kernel."""
    fig, ax = new_plot(plt, title, "warp cycles per issued instruction")
    # A cluster's bars side by side, a bar's width apart from the next cluster.
    width = 1 / (len(STALL_KEYS) + 1)
    for i, (_, name, color) in enumerate(STALL_KEYS):
        shown = [(j, values[i]) for j, (_, values) in enumerate(columns)
                 if values[i] is not None]
        ax.bar([j + (i - (len(STALL_KEYS) - 1) / 2) * width for j, _ in shown],
               [v for _, v in shown], width=width * 0.9, color=color, edgecolor="black",
               linewidth=0.8, label=name, zorder=2)
    top = max([v for _, values in columns for v in values if v is not None] + [0.001])
    # Headroom above the highest bar for the key.
    ax.set_ylim(0, top * 1.2)
    ax.set_xlim(-0.6, len(columns) - 0.4)
    slanted_ticks(ax, range(len(columns)), [label for label, _ in columns], 25)
    ax.grid(axis="y", color=GRID_COLOR)
    ax.set_axisbelow(True)
    ax.legend(loc="upper center", ncol=len(STALL_KEYS), framealpha=1, fancybox=False,
              edgecolor="black")
    write_png(plt, fig, png)


# ---- sections -----------------------------------------------------------------


def representative(rows):
    """One row per variant and shape: the only one, else the BAR_STAGES one,
    else the lowest stage count, among rows with a TFLOP/s figure."""
    by_key = {}
    order = []
    for row in rows:
        tflops = number(row.get("tflops"))
        if tflops is None:
            continue
        key = (row["shape"], row["variant"])
        if key not in by_key:
            by_key[key] = []
            order.append(key)
        by_key[key].append(dict(row, tflops_v=tflops,
                                pct_v=number(row.get("pct_ffma_peak"))))
    chosen = []
    for key in order:
        group = by_key[key]
        # A shape measured by several runs: the latest run's rows.
        latest = max(r["_facts"].get("date", "") for r in group)
        group = [r for r in group if r["_facts"].get("date", "") == latest]
        pick = next((r for r in group if number(r.get("stages")) == BAR_STAGES), None)
        if pick is None:
            pick = min(group, key=lambda r: number(r.get("stages")) or 0)
        # The stage count goes on the label where the input has several.
        pick["multi_stage"] = len(group) > 1
        chosen.append(pick)
    return chosen


def run_facts(facts):
    """`command`, date: how one report came about."""
    bits = []
    if facts.get("command_line"):
        bits.append(f"`{facts['command_line']}`")
    if facts.get("date"):
        bits.append(facts["date"])
    return ", ".join(bits)


def provenance(inputs):
    """Each input with its GPU and each run in it (a size sweep holds one
    report per shape): which GPU, which command, which date."""
    lines = []
    for kind, path, reports in inputs:
        gpus = []
        for report in reports:
            gpu = report["facts"].get("gpu")
            if gpu and gpu not in gpus:
                gpus.append(gpu)
        runs = [run_facts(report["facts"]) for report in reports if report["rows"]]
        runs = [r for r in runs if r]
        head = ", ".join([f"`{shown_path(path)}` ({kind})"] + gpus)
        if len(runs) == 1:
            lines.append(f"- {head}, {runs[0]}")
        elif runs:
            lines.append(f"- {head}, {len(runs)} runs:")
            lines += [f"  - {run}" for run in runs]
        else:
            lines.append(f"- {head}")
    return "\n".join(lines)


def bar_sources(sources):
    """Per shape in order of size, the rows of the one input that draws its
    bars: the one with the most variants at that shape, a bench before a
    sweep on a tie, then the first given. sources: (kind, path, rows)."""
    shapes = sorted({r["shape"] for _, _, rows in sources for r in rows}, key=shape_key)
    chosen = []
    for shape in shapes:
        best = None
        for index, (kind, path, rows) in enumerate(sources):
            here = [r for r in rows if r["shape"] == shape]
            if not here:
                continue
            rank = (len({r["variant"] for r in here}), kind == "bench", -index)
            if best is None or rank > best[0]:
                best = (rank, kind, path, here)
        chosen.append((shape,) + best[1:])
    return chosen


def section_bars(out, name, by_shape, plt):
    md = ["## TFLOP/s per variant", ""]
    if not by_shape:
        return md + ["_No bench or sweep input, so no bars._", ""]
    for shape, kind, path, shape_rows in by_shape:
        gpu = shape_rows[0]["_facts"].get("gpu", "")
        png = f"{name}-tflops-{shape}.png"
        peak = bar_chart(os.path.join(out, png),
                         f"TFLOP/s per variant, {shape}" + (f", {gpu}" if gpu else ""),
                         shape_rows, plt)
        run = run_facts(shape_rows[0]["_facts"])
        source = f"From `{shown_path(path)}`" + (f", {run}" if run else "") + "."
        if kind == "sweep":
            source += (f" A stage sweep: each variant's {BAR_STAGES}-stage row, or its "
                       "only row where the depth is fixed (the number in brackets is "
                       "the stage count).")
        md += [f"### {shape}", "", f"![TFLOP/s per variant, {shape}]({png})", "",
               source, ""]
        table = [[r["variant"], r.get("stages", ""), fmt(number(r.get("median_ms")), 4),
                  fmt(r["tflops_v"], 2), fmt(number(r.get("x_cublas")), 2),
                  fmt(r["pct_v"], 1), r.get("verdict", "")] for r in shape_rows]
        md += [md_table(["variant", "stages", "median ms", "TFLOP/s", "× cuBLAS",
                         "% FFMA peak", "verdict"], table, right={1, 2, 3, 4, 5}), ""]
        if peak:
            md += [f"FFMA peak line: {peak:.1f} TFLOP/s, each row's TFLOP/s over its "
                   "% FFMA peak (2 × FP32 lanes × SMs × the SM clock bench sampled), "
                   "median over the rows. Dashed: cuBLAS, strict FP32.", ""]
    return md


def section_stages(out, name, sweeps, plt):
    md = ["## Stage sweep", ""]
    if not sweeps:
        return md + ["_No `--sweep` input (`pipegemm bench --stages 1-8 --format csv`)._", ""]
    # Per shape in order of size, each sweep that holds it, in the order given.
    per_shape = {}
    for path, reports in sweeps:
        for report in reports:
            for row in report["rows"]:
                if "shape" in row and "variant" in row:
                    per_shape.setdefault(row["shape"], {}).setdefault(
                        path, []).append(dict(row, _facts=report["facts"]))
    md += ["Variants with one fixed depth are levels across the plot, marked at "
           "the depth they ran at.", ""]
    for shape in sorted(per_shape, key=shape_key):
        md += [f"### {shape}", ""]
        paths = list(per_shape[shape])
        for index, path in enumerate(paths, 1):
            rows = per_shape[shape][path]
            facts = rows[0]["_facts"]
            png = (f"{name}-stages-{shape}.png" if len(paths) == 1 else
                   f"{name}-stages-{shape}-{index}.png")
            title = "TFLOP/s by pipeline stages" + \
                "".join(f", {x}" for x in (facts.get("gpu"), shape,
                                           facts.get("date", "")[:10]) if x)
            try:
                stage_chart(os.path.join(out, png), title, rows, plt)
            except ReportError as err:
                raise ReportError(f"{path} ({shape}): {err}")
            run = run_facts(facts)
            md += [f"![TFLOP/s against pipeline stages, {shape}]({png})", "",
                   f"From `{shown_path(path)}`" + (f", {run}" if run else "") + ".", "",
                   stage_table(rows), ""]
    return md


def stage_table(rows):
    """The plot's numbers: TFLOP/s of each variant (in the sweep's order) at
    each stage count it ran; '-' where it did not run at that depth."""
    depths = sorted({int(r["stages"]) for r in rows if r.get("stages", "").isdigit()})
    tflops = {}
    for r in rows:
        if r.get("stages", "").isdigit():
            tflops.setdefault(r["variant"], {})[int(r["stages"])] = number(r.get("tflops"))
    body = [[v] + [fmt(by_depth.get(d), 2) for d in depths] for v, by_depth in tflops.items()]
    return md_table(["TFLOP/s at stages"] + [str(d) for d in depths], body,
                    right=range(1, len(depths) + 1))


def section_sizes(out, name, rows, source, plt, ratio_rows=None):
    md = ["## Size sweep", ""]
    shapes = sorted({r["shape"] for r in rows}, key=shape_key)
    if len(shapes) < 2:
        only = f" ({shapes[0]})" if shapes else ""
        return md + [f"_Skipped: the inputs hold one shape{only}. Give bench or sweep "
                     "CSVs of several sizes (`pipegemm bench --size N --format csv`)._", ""]
    variants = []
    for r in rows:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    series = []
    for variant in variants:
        points = [(r["shape"], r["tflops_v"]) for r in rows if r["variant"] == variant]
        points.sort(key=lambda p: shape_key(p[0]))
        series.append((variant, points))
    png = f"{name}-sizes.png"
    gpus = sorted({r["_facts"].get("gpu", "") for r in rows} - {""})
    size_chart(os.path.join(out, png),
               "TFLOP/s against GEMM shape" + (", " + ", ".join(gpus) if gpus else ""),
               series, shapes, plt)
    header = ["variant"] + shapes
    table = []
    for variant, points in series:
        got = dict(points)
        table.append([variant] + [fmt(got.get(s), 2) for s in shapes])
    md += [f"![TFLOP/s against shape]({png})", "",
           f"TFLOP/s, {source}; shapes in order of M·N·K:", "",
           md_table(header, table, right=set(range(1, len(header)))), ""]
    # As a ratio to cuBLAS timed beside them (a row's own run; ratio_rows:
    # the latest run of each shape that timed cuBLAS too).
    ratios = []
    for variant, _ in series:
        points = [(r["shape"], number(r.get("x_cublas"))) for r in (ratio_rows or rows)
                  if r["variant"] == variant and r["variant"] != CUBLAS]
        points = sorted([p for p in points if p[1] is not None], key=lambda p: shape_key(p[0]))
        if points:
            ratios.append((variant, points))
    if ratios:
        ratio_png = f"{name}-sizes-x-cublas.png"
        size_chart(os.path.join(out, ratio_png),
                   "× cuBLAS against GEMM shape" + (", " + ", ".join(gpus) if gpus else ""),
                   ratios, shapes, plt, ylabel="× cuBLAS (cuBLAS's median over this one's)")
        md += [f"![× cuBLAS against shape]({ratio_png})", "",
               "× cuBLAS, each point from a run that timed cuBLAS in the same process "
               "(of a shape's runs, the latest such), above 1 where the variant is "
               "faster.", ""]
    return md


def profile_columns(reports):
    """(title, row) per profiled kernel or published column."""
    rows = [row for report in reports for row in report["rows"]
            if "source" in row and "status" in row]
    depths = {}
    for row in rows:
        depths.setdefault((row["source"], row.get("variant")), set()).add(row.get("stages"))
    columns = []
    for row in rows:
        title = row.get("variant", "?")
        if len(depths[(row["source"], row.get("variant"))]) > 1:
            title += f" ({row.get('stages', '')})"
        if row["source"] != "measured":
            # "RTX A6000, the write-up" -> "baseline (RTX A6000)"
            title += f" ({row['source'].split(',')[0]})"
        columns.append((title, row))
    return columns


# Shown names and decimals of the profile's keys, in the profile's order; keys
# not listed show under their own name.
PROFILE_LABELS = {
    "duration_ms": ("Kernel Duration (ms)", 3),
    "sm_throughput_pct": ("Compute (SM) Throughput (%)", 2),
    "memory_throughput_pct": ("Memory Throughput (%)", 2),
    "dram_throughput_pct": ("DRAM Throughput (%)", 2),
    "dram_bandwidth_gbps": ("DRAM Bandwidth (GB/s)", 2),
    "l1tex_throughput_pct": ("L1/TEX Cache Throughput (%)", 2),
    "l2_throughput_pct": ("L2 Cache Throughput (%)", 2),
    "issued_warps_per_scheduler": ("Issued Warp / Scheduler", 2),
    "eligible_warps_per_scheduler": ("Eligible Warps / Scheduler", 2),
    "warp_cycles_per_issued_inst": ("Warp Cycles / Issued Instruction", 2),
    "registers_per_thread": ("Registers / Thread", 0),
    "static_smem_kb": ("Static Shared Memory / Block (KB)", 2),
    "dynamic_smem_kb": ("Dynamic Shared Memory / Block (KB)", 2),
    "achieved_occupancy_pct": ("Achieved Occupancy (%)", 2),
    "l1tex_hit_rate_pct": ("L1/TEX Hit Rate (%)", 2),
    "stall_wait": ("Stall Wait (cycles/inst)", 2),
    "stall_long_scoreboard": ("Stall Long Scoreboard (cycles/inst)", 2),
    "stall_barrier": ("Stall Barrier (cycles/inst)", 2),
    "shared_excessive_wavefronts": ("L1 Wavefronts Shared Excessive", 0),
    "shared_excessive_pct": ("Uncoalesced Shared Access Ratio (%)", 0),
    "shared_bank_conflicts": ("Shared Bank Conflicts", 0),
    "global_excessive_pct": ("Global Excessive Sectors Ratio (%)", 0),
}
PROFILE_FIXED = {"source", "variant", "stages", "m", "n", "k", "status", "kernel"}


def section_profile(out, name, profiles, plt):
    md = ["## Nsight Compute", ""]
    if not profiles:
        return md + ["_No `--profile` input (`pipegemm profile --format csv`)._", ""]
    for index, (path, reports) in enumerate(profiles, 1):
        columns = profile_columns(reports)
        if not columns:
            raise ReportError(f"{path}: no source and status columns: is it "
                              "'pipegemm profile --format csv'?")
        keys = [k for k in columns[0][1] if k not in PROFILE_FIXED and not k.startswith("_")]
        # The profile's own header (a study's CSV has its timings' first).
        facts = next((r["facts"] for r in reports
                      if any("source" in row and "status" in row for row in r["rows"])),
                     reports[0]["facts"])
        shape = "x".join(facts.get(d, "?") for d in ("m", "n", "k"))
        if len(profiles) > 1:
            md += [f"### {shape}, {', '.join(t for t, _ in columns)}", ""]
        md += [f"From `{shown_path(path)}`: {facts.get('gpu', 'GPU unknown')}, "
               f"{shape}, {facts.get('ncu_version', 'ncu version unknown')}.", ""]
        table = []
        for key in keys:
            label, decimals = PROFILE_LABELS.get(key, (key, 2))
            table.append([label] + [fmt(number(row.get(key)), decimals)
                                    for _, row in columns])
        md += [md_table(["metric"] + [t for t, _ in columns], table,
                        right=set(range(1, len(columns) + 1))), ""]
        not_profiled = [f"{t}: {row['status']}" for t, row in columns
                        if row["status"] not in ("profiled", "published")]
        if not_profiled:
            md += ["Not profiled: " + "; ".join(not_profiled) + ".", ""]
        stalls = [(title, [number(row.get(k)) for k, _, _ in STALL_KEYS])
                  for title, row in columns]
        if any(v is not None for _, values in stalls for v in values):
            png = f"{name}-stalls.png" if len(profiles) == 1 else \
                f"{name}-stalls-{index}.png"
            gpu = facts.get("gpu", "")
            stall_chart(os.path.join(out, png),
                        "Warp stalls per issued instruction" + (f", {gpu}" if gpu else "")
                        + f", {shape}", stalls, plt)
            md += [f"![Warp stalls per issued instruction]({png})", ""]
    return md


# The columns of inspect's CSV that tell the study's story, in this order;
# the page shows those present (all columns when fewer than three are).
INSPECT_COLUMNS = ["variant", "arch", "kernel", "registers", "static_smem_bytes",
                   "dynamic_smem_bytes", "spill_stores", "spill_loads", "blocks_per_sm",
                   "limited_by", "ldg", "sts", "lds", "ldgsts", "ldgdepbar", "depbar",
                   "bar_sync", "syncs", "arrives", "tma", "bulk", "ffma", "mechanism"]


def section_inspect(inspects):
    md = ["## SASS and resources (`pipegemm inspect`)", ""]
    if not inspects:
        return md + ["_No `--inspect` input (`pipegemm inspect --format csv`)._", ""]
    for path, reports in inspects:
        for report in reports:
            rows = report["rows"]
            if not rows:
                continue
            every = [k for k in rows[0] if k is not None and not k.startswith("_")]
            header = [k for k in INSPECT_COLUMNS if k in every]
            if len(header) < 3:
                header = every
            title = report["report"] or "inspect"
            shown = "" if header == every else \
                f", {len(header)} of its {len(every)} columns (the CSV has them all)"
            md += [f"From `{shown_path(path)}` ({title}){shown}:", "",
                   md_table(header, [[r.get(k, "") or "" for k in header] for r in rows]),
                   ""]
    return md


# ---- main ---------------------------------------------------------------------


def matplotlib_or_none():
    """pyplot, or None once the user is told in one line what is missing."""
    try:
        return drawing.pyplot()
    except drawing.Missing as err:
        print(f"{ME}: {err}", file=sys.stderr)
        return None


def stage_plot_main(argv):
    """--stage-plot CSV OUT.png [TITLE]: one stage sweep of one shape."""
    if len(argv) not in (2, 3):
        print(f"usage: {ME} --stage-plot CSV OUT.png [title]   (CSV from "
              "'pipegemm bench --format csv'; - for stdin)", file=sys.stderr)
        return 2
    path, png = argv[0], argv[1]
    if path != "-" and not os.access(path, os.R_OK):
        print(f"{ME}: cannot read {path}", file=sys.stderr)
        return 2
    plt = matplotlib_or_none()
    if plt is None:
        return 3
    try:
        reports = read_reports(path)
        rows, facts = [], {}
        for report in reports:
            for row in report["rows"]:
                if all(k in row for k in ("variant", "stages", "tflops")):
                    rows.append(row)
                    facts = facts or report["facts"]
        if not rows:
            raise ReportError("no variant, stages and tflops columns: is this "
                              "pipegemm bench --format csv?")
        shapes = []
        for row in rows:
            if row.get("shape") and row["shape"] not in shapes:
                shapes.append(row["shape"])
        if len(shapes) > 1:
            raise ReportError(f"rows of two shapes ({shapes[0]}, {shapes[1]}); "
                              "plot one shape at a time")
        title = argv[2] if len(argv) == 3 else "TFLOP/s by pipeline stages" + \
            "".join(f", {x}" for x in (facts.get("gpu"), shapes[0] if shapes else "") if x)
        stage_chart(png, title, rows, plt)
    except ReportError as err:
        print(f"{ME}: {err}", file=sys.stderr)
        return 1
    print(f"{ME}: wrote {png}")
    return 0


def main(argv):
    if argv and argv[0] == "--stage-plot":
        return stage_plot_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog=ME, description="One Markdown page with plots from pipegemm's CSV or JSON "
        "(or, with --stage-plot CSV OUT.png [TITLE], one stage sweep).")
    parser.add_argument("--bench", action="append", default=[], metavar="CSV",
                        help="pipegemm bench --format csv (bars, size sweep)")
    parser.add_argument("--sweep", action="append", default=[], metavar="CSV",
                        help="a stage sweep: pipegemm bench --stages 1-8 --format csv")
    parser.add_argument("--profile", action="append", default=[], metavar="CSV",
                        help="pipegemm profile --format csv")
    parser.add_argument("--inspect", action="append", default=[], metavar="CSV",
                        help="pipegemm inspect --format csv")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="where the page and its plots go (made if missing)")
    parser.add_argument("--name", default="report",
                        help="file names: NAME.md and NAME-*.png (default: report)")
    parser.add_argument("--title", default=None, help="the page's heading")
    parser.add_argument("--sections", default=",".join(SECTIONS), metavar="LIST",
                        help="the sections to write, of " + ",".join(SECTIONS)
                        + " (default: all)")
    args = parser.parse_args(argv)
    sections = [x for x in args.sections.split(",") if x]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown or not sections:
        parser.error(f"--sections: {', '.join(unknown) or 'none'} not among "
                     + ",".join(SECTIONS))
    args.sections = set(sections)
    if not (args.bench or args.sweep or args.profile or args.inspect):
        parser.error("give at least one of --bench, --sweep, --profile, --inspect")
    plt = matplotlib_or_none()
    if plt is None:
        return 3
    try:
        return write_report(args, plt)
    except ReportError as err:
        print(f"{ME}: {err}", file=sys.stderr)
        return 1


def write_report(args, plt):
    inputs = []
    benches, sweeps, profiles, inspects = [], [], [], []
    for kind, paths, into in (("bench", args.bench, benches), ("sweep", args.sweep, sweeps),
                              ("profile", args.profile, profiles),
                              ("inspect", args.inspect, inspects)):
        for path in paths:
            reports = read_reports(path)
            inputs.append((kind, path, reports))
            into.append((path, reports))
    os.makedirs(args.out, exist_ok=True)

    # One row per variant and shape within each input; the bars of a shape
    # come from one input, so that a chart compares rows of one run.
    sources = [(kind, path, representative(bench_rows(reports, path)))
               for kind, path, reports in inputs if kind in ("bench", "sweep")]
    by_shape = bar_sources(sources)
    bar_rows = [r for _, _, _, rows in by_shape for r in rows]
    bench_every = [r for path, reports in benches for r in bench_rows(reports, path)]
    bench_all = representative(bench_every)
    # The ratio chart's rows: the latest run of a shape that timed cuBLAS
    # beside the variant (a later run of the variant alone has no ratio).
    ratio_rows = None
    if len({r["shape"] for r in bench_all}) > 1:
        size_rows = bench_all
        ratio_rows = representative([r for r in bench_every
                                     if number(r.get("x_cublas")) is not None])
        size_source = "the --bench rows (" + ", ".join(
            f"`{shown_path(path)}`" for path, _ in benches) + ")"
    else:
        size_rows, size_source = bar_rows, "the same rows as the bars"

    gpus = sorted({report["facts"].get("gpu", "") for _, _, reps in inputs
                   for report in reps} - {""})
    title = args.title or ("pipegemm on " + ", ".join(gpus) if gpus else "pipegemm report")
    md = [f"# {title}", "",
          "Written by `scripts/report.py` (`make report`) from these inputs:", "",
          provenance(inputs), ""]
    if "bars" in args.sections:
        md += section_bars(args.out, args.name, by_shape, plt)
    if "stages" in args.sections:
        md += section_stages(args.out, args.name, sweeps, plt)
    if "sizes" in args.sections:
        md += section_sizes(args.out, args.name, size_rows, size_source, plt, ratio_rows)
    if "profile" in args.sections:
        md += section_profile(args.out, args.name, profiles, plt)
    if "inspect" in args.sections:
        md += section_inspect(inspects)
    page = os.path.join(args.out, f"{args.name}.md")
    with open(page, "w", encoding="utf-8") as handle:
        handle.write("\n".join(md).rstrip("\n") + "\n")
    print(f"{ME}: wrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
