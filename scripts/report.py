#!/usr/bin/env python3
"""Turns what pipegemm writes into one Markdown page with PNG plots.

    scripts/report.py [--bench X.csv]... [--sweep Y.csv]... [--profile Z.csv]...
                      [--inspect W.csv]... --out DIR [--name NAME] [--title T]

Inputs are the CSV (or JSON) reports of `pipegemm bench`, `pipegemm profile`
and `pipegemm inspect` (`--format csv`); each option may repeat, and a file
may hold several reports one after another (`study pipelining --profile`
writes two). The page, DIR/NAME.md, has:

  * TFLOP/s per variant, one bar chart per shape, with the cuBLAS row and the
    FFMA peak as lines (the peak is each row's TFLOP/s over its % FFMA peak,
    so it uses the clock bench sampled). From --bench; without it, from the
    sweep, taking each variant's 2-stage row, or its only row when its depth
    is fixed (2 is every variant's default and the write-up's depth).
  * The stage sweep of each --sweep file and shape, drawn by
    scripts/plot-stages.sh.
  * The size sweep, TFLOP/s against size per variant, when the inputs hold
    more than one shape; a note says so when they do not.
  * The Nsight Compute table of --profile (seed's rows, one column per
    kernel) and a chart of its stall rows.
  * The tables of --inspect, as they come.

Plots are DIR/NAME-*.png. Needs Python 3 (standard library only) and
gnuplot 5 (Debian/Ubuntu: apt-get install gnuplot-nox). The page is the same
for the same inputs: no date of its own, the inputs' dates instead.

Exit codes: 0 ok, 1 an input has nothing usable or gnuplot failed, 2 bad
usage, 3 gnuplot is not installed.
"""

import argparse
import csv
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

ME = os.path.basename(sys.argv[0])
HERE = os.path.dirname(os.path.abspath(__file__))
PLOT_STAGES = os.path.join(HERE, "plot-stages.sh")

# The per-variant bars take this stage count from a sweep (every variant's
# default, and the depth of the "CUDA Kernel Study: Pipelining" write-up).
BAR_STAGES = 2
CUBLAS = "cublas"
# Ten colours that stay apart on white (matplotlib's tab10), as plot-stages.sh.
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
SIZE = "1100,620"
# Stall rows of the profile table, drawn as a chart.
STALL_KEYS = [("stall_wait", "wait"),
              ("stall_long_scoreboard", "long scoreboard"),
              ("stall_barrier", "barrier")]


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
    try:
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
    """Sort shapes by their number of multiply-adds, then by text."""
    try:
        m, n, k = (int(part) for part in shape.split("x"))
        return (m * n * k, shape)
    except ValueError:
        return (0, shape)


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


# ---- gnuplot ------------------------------------------------------------------


def gnuplot_terminal():
    probe = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True,
                           text=True, check=False)
    if "pngcairo" in probe.stdout + probe.stderr:
        return f'pngcairo size {SIZE} font "sans,11" noenhanced'
    return f"png size {SIZE} noenhanced"


def gp_string(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def run_gnuplot(script, png, terminal):
    full = f"set terminal {terminal}\nset output {gp_string(png)}\n{script}\n"
    done = subprocess.run(["gnuplot"], input=full, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0 or not os.path.exists(png):
        raise ReportError(f"gnuplot failed to draw {png}: {done.stderr.strip()}")


def colors_script():
    lines = [f'set linetype {i + 1} lc rgb "{c}"' for i, c in enumerate(COLORS)]
    lines.append(f"set linetype cycle {len(COLORS)}")
    return "\n".join(lines)


def bar_chart(png, title, rows, terminal):
    """Bars of TFLOP/s per variant; cuBLAS and FFMA peak as lines."""
    cublas = next((r for r in rows if r["variant"] == CUBLAS), None)
    peaks = [r["tflops_v"] / (r["pct_v"] / 100.0) for r in rows
             if r["pct_v"] not in (None, 0)]
    peak = sorted(peaks)[len(peaks) // 2] if peaks else None
    data = []
    for i, row in enumerate(rows):
        color = 4 if row["variant"] == CUBLAS else 1
        label = row["variant"]
        if row["multi_stage"]:
            label += f" ({row['stages']})"
        data.append(f"{i} {row['tflops_v']:.4f} {color} {gp_string(label)}")
    top = max([r["tflops_v"] for r in rows] + ([peak] if peak else []))
    plot = [f"$bars << EOD\n" + "\n".join(data) + "\nEOD",
            colors_script(),
            f"set title {gp_string(title)}",
            'set ylabel "TFLOP/s (median)"',
            f"set yrange [0:{top * 1.12:.3f}]",
            f"set xrange [-0.6:{len(rows) - 0.4}]",
            "set xtics rotate by -35 nomirror",
            "set grid ytics lc rgb \"#dddddd\"",
            "set style fill solid 0.85 border -1",
            "set boxwidth 0.7",
            "set key top right box opaque"]
    series = ["$bars using 1:2:3:xtic(4) with boxes lc variable notitle",
              "$bars using 1:2:(sprintf(\"%.1f\", $2)) with labels offset 0,0.8 notitle"]
    if cublas:
        level = cublas["tflops_v"]
        label = gp_string("cuBLAS (strict FP32) %.1f" % level)
        series.append(f"{level:.4f} with lines dt 2 lw 2 lc 4 title {label}")
    if peak:
        label = gp_string("FFMA peak %.1f" % peak)
        series.append(f"{peak:.4f} with lines lw 2 lc 8 title {label}")
    plot.append("plot " + ", \\\n     ".join(series))
    run_gnuplot("\n".join(plot), png, terminal)
    return peak


def size_chart(png, title, series, shapes, terminal):
    """TFLOP/s against shape, one line per variant."""
    blocks, plots = [], []
    # cuBLAS in the red of the bar charts; ours in the other colours, then
    # again dashed with other points past ten.
    others = [c for c in COLORS if c != COLORS[3]]
    points_types = [7, 5, 9, 11, 13]
    ours = 0
    for i, (variant, points) in enumerate(series):
        blocks.append(f"$s{i} << EOD\n" +
                      "\n".join(f"{shapes.index(s)} {t:.4f}" for s, t in points) +
                      "\nEOD")
        if variant == CUBLAS:
            style = f'dt 2 lw 2 pt 6 lc rgb "{COLORS[3]}"'
        else:
            cycle = ours // len(others)
            style = (f'lw 2 dt {1 + cycle % 3} pt {points_types[cycle % len(points_types)]} '
                     f'ps 1.2 lc rgb "{others[ours % len(others)]}"')
            ours += 1
        plots.append(f"$s{i} using 1:2 with linespoints {style} title {gp_string(variant)}")
    tics = ", ".join(f"{gp_string(s)} {i}" for i, s in enumerate(shapes))
    script = "\n".join(blocks + [
        colors_script(),
        f"set title {gp_string(title)}",
        'set xlabel "GEMM shape (M x N x K)"',
        'set ylabel "TFLOP/s (median)"',
        f"set xtics ({tics})",
        f"set xrange [-0.3:{len(shapes) - 0.7}]",
        "set offsets 0, 0, graph 0.08, graph 0.08",
        "set grid ytics xtics lc rgb \"#dddddd\"",
        "set key outside right top box opaque",
        "plot " + ", \\\n     ".join(plots)])
    run_gnuplot(script, png, terminal)


def stall_chart(png, title, columns, terminal):
    """Clustered bars: the stall rows per profiled kernel."""
    lines = []
    for label, values in columns:
        cells = " ".join("NaN" if v is None else f"{v:.4f}" for v in values)
        lines.append(f"{gp_string(label)} {cells}")
    series = []
    for i, (_, name) in enumerate(STALL_KEYS):
        using = f"{i + 2}:xtic(1)" if i == 0 else f"{i + 2}"
        series.append(f"$st using {using} title {gp_string(name)} lc {i + 1}")
    script = "\n".join([
        "$st << EOD\n" + "\n".join(lines) + "\nEOD",
        colors_script(),
        f"set title {gp_string(title)}",
        'set ylabel "warp cycles per issued instruction"',
        "set style data histogram",
        "set style histogram cluster gap 1",
        "set style fill solid 0.85 border -1",
        "set boxwidth 0.9",
        "set yrange [0:*]",
        f"set xrange [-0.6:{len(columns) - 0.4}]",
        "set xtics rotate by -25 nomirror",
        "set grid ytics lc rgb \"#dddddd\"",
        "set key top right box opaque",
        "plot " + ", \\\n     ".join(series)])
    run_gnuplot(script, png, terminal)


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
        pick = next((r for r in group if number(r.get("stages")) == BAR_STAGES), None)
        if pick is None:
            pick = min(group, key=lambda r: number(r.get("stages")) or 0)
        # The stage count goes on the label where the input has several.
        pick["multi_stage"] = len(group) > 1
        chosen.append(pick)
    return chosen


def provenance(inputs):
    lines = []
    for kind, path, reports in inputs:
        facts = reports[0]["facts"]
        bits = [f"`{shown_path(path)}` ({kind})"]
        if facts.get("command_line"):
            bits.append(f"`{facts['command_line']}`")
        if facts.get("gpu"):
            bits.append(facts["gpu"])
        if facts.get("date"):
            bits.append(facts["date"])
        lines.append("- " + ", ".join(bits))
    return "\n".join(lines)


def section_bars(out, name, rows, from_sweep, terminal):
    md = ["## TFLOP/s per variant", ""]
    if not rows:
        return md + ["_No bench or sweep input, so no bars._", ""]
    if from_sweep:
        md += [f"No `--bench` input: each variant's {BAR_STAGES}-stage row of the "
               "sweep, or its only row where the depth is fixed (the number in "
               "brackets is the stage count).", ""]
    for shape in sorted({r["shape"] for r in rows}, key=shape_key):
        shape_rows = [r for r in rows if r["shape"] == shape]
        gpu = shape_rows[0]["_facts"].get("gpu", "")
        png = f"{name}-tflops-{shape}.png"
        peak = bar_chart(os.path.join(out, png),
                         f"TFLOP/s per variant, {shape}" + (f", {gpu}" if gpu else ""),
                         shape_rows, terminal)
        md += [f"### {shape}", "", f"![TFLOP/s per variant, {shape}]({png})", ""]
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


def section_stages(out, name, sweeps, tmp):
    md = ["## Stage sweep", ""]
    if not sweeps:
        return md + ["_No `--sweep` input (`pipegemm bench --stages 1-8 --format csv`)._", ""]
    for index, (path, reports) in enumerate(sweeps):
        rows = [r for report in reports for r in report["rows"] if "shape" in r]
        for shape in sorted({r["shape"] for r in rows}, key=shape_key):
            # One shape per call of plot-stages.sh: the rows of that shape with
            # the facts of the report they came from.
            part = os.path.join(tmp, f"sweep-{index}-{shape}.csv")
            with open(part, "w", encoding="utf-8", newline="") as handle:
                facts = reports[0]["facts"]
                for key in ("gpu",):
                    if key in facts:
                        handle.write(f"# {key}: {facts[key]}\n")
                fields = [k for k in rows[0] if not k.startswith("_")]
                writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
                writer.writeheader()
                writer.writerows(r for r in rows if r["shape"] == shape)
            png = f"{name}-stages-{shape}.png"
            done = subprocess.run(["bash", PLOT_STAGES, part, os.path.join(out, png)],
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise ReportError(f"plot-stages.sh failed on {path} ({shape}): "
                                  f"{done.stderr.strip()}")
            md += [f"### {shape}", "",
                   f"![TFLOP/s against pipeline stages, {shape}]({png})", "",
                   f"From `{shown_path(path)}`. Variants with one fixed depth "
                   "are dashed levels.", ""]
    return md


def section_sizes(out, name, rows, terminal):
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
               series, shapes, terminal)
    header = ["variant"] + shapes
    table = []
    for variant, points in series:
        got = dict(points)
        table.append([variant] + [fmt(got.get(s), 2) for s in shapes])
    return md + [f"![TFLOP/s against shape]({png})", "",
                 "TFLOP/s, same rows as the bars:", "",
                 md_table(header, table, right=set(range(1, len(header)))), ""]


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


def section_profile(out, name, profiles, terminal):
    md = ["## Nsight Compute", ""]
    if not profiles:
        return md + ["_No `--profile` input (`pipegemm profile --format csv`)._", ""]
    for path, reports in profiles:
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
        stalls = [(title, [number(row.get(k)) for k, _ in STALL_KEYS])
                  for title, row in columns]
        if any(v is not None for _, values in stalls for v in values):
            png = f"{name}-stalls.png" if len(profiles) == 1 else \
                f"{name}-stalls-{profiles.index((path, reports))}.png"
            gpu = facts.get("gpu", "")
            stall_chart(os.path.join(out, png),
                        "Warp stalls per issued instruction" + (f", {gpu}" if gpu else ""),
                        stalls, terminal)
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


def main(argv):
    parser = argparse.ArgumentParser(
        prog=ME, description="One Markdown page with plots from pipegemm's CSV or JSON.")
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
    args = parser.parse_args(argv)
    if not (args.bench or args.sweep or args.profile or args.inspect):
        parser.error("give at least one of --bench, --sweep, --profile, --inspect")
    if not shutil.which("gnuplot"):
        print(f"{ME}: gnuplot is not installed, so there are no plots; install it "
              "(Debian/Ubuntu: apt-get install gnuplot-nox) and run again",
              file=sys.stderr)
        return 3
    try:
        return write_report(args)
    except ReportError as err:
        print(f"{ME}: {err}", file=sys.stderr)
        return 1


def write_report(args):
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
    terminal = gnuplot_terminal()

    bars_from = benches or sweeps
    rows = []
    for path, reports in bars_from:
        rows += bench_rows(reports, path)
    chosen = representative(rows)
    gpus = sorted({r["_facts"].get("gpu", "") for r in rows} - {""})
    if not gpus:
        gpus = sorted({report["facts"].get("gpu", "") for _, _, reps in inputs
                       for report in reps} - {""})
    title = args.title or ("pipegemm on " + ", ".join(gpus) if gpus else "pipegemm report")

    md = [f"# {title}", "",
          "Written by `scripts/report.py` (`make report`) from these inputs:", "",
          provenance(inputs), ""]
    with tempfile.TemporaryDirectory() as tmp:
        md += section_bars(args.out, args.name, chosen, not benches, terminal)
        md += section_stages(args.out, args.name, sweeps, tmp)
    md += section_sizes(args.out, args.name, chosen, terminal)
    md += section_profile(args.out, args.name, profiles, terminal)
    md += section_inspect(inspects)
    page = os.path.join(args.out, f"{args.name}.md")
    with open(page, "w", encoding="utf-8") as handle:
        handle.write("\n".join(md).rstrip("\n") + "\n")
    print(f"{ME}: wrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
