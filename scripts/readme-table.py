#!/usr/bin/env python3
"""The headline tables, from a committed `pipegemm bench --format csv`.

    scripts/readme-table.py [--csv bench/results/headline/h200-headline.csv] [--readme README.md]
                            [--page bench/results/headline/README.md] [--check]

Writes two tables between the markers

    <!-- headline table: scripts/readme-table.py -->
    ...
    <!-- end of headline table -->

README.md's: the rows that tell the story (README_ROWS), a few columns, the
GPU and the shape, and a link to the results page; the results page's: every
row and column, with the run's command, commit and date.

--check writes nothing and exits 1 when either table is not what the CSV
gives (the test readme_table runs it): a number in the README is the
committed run's, never one typed by hand. The CSV's header facts name the
GPU, the drivers, the date and the command line; the commit is the fact
`commit`, which scripts/device-check.sh adds. Exit 2 for a missing or
unreadable file, a file without the markers, or a README row the CSV lacks.
"""
import argparse
import csv
import io
import os
import sys

BEGIN = "<!-- headline table: scripts/readme-table.py -->"
END = "<!-- end of headline table -->"

# The README's rows: the FFMA mechanisms from none to TMA with warp
# specialization, the tensor-core family's best, the emulated entry, each
# class's reference and selector.
README_ROWS = ["cublas", "baseline", "cp_async", "tma", "tma_ws", "auto",
               "cublas_tf32", "wgmma_tma_rs", "auto_tf32", "wgmma_3xtf32", "auto_emulated"]

# (CSV column, title, decimals): the columns a reader compares.
COLUMNS = [
    ("variant", "variant", None),
    ("runs", "runs", None),
    ("stages", "stages", None),
    ("median_ms", "median ms", 3),
    ("tflops", "TFLOP/s", 1),
    ("x_baseline", "× baseline", 2),
    ("x_cublas", "× cuBLAS", 2),
    ("x_cublas_tf32", "× cuBLAS TF32", 2),
    ("pct_ffma_peak", "% FFMA peak", 1),
    ("verdict", "verdict", None),
]
README_COLUMNS = ["variant", "runs", "median_ms", "tflops", "x_baseline", "x_cublas",
                  "x_cublas_tf32"]


def read_report(path):
    """The header facts and the rows of a bench CSV."""
    facts, body = {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# "):
                key, _, value = line[2:].rstrip("\n").partition(": ")
                if key != "note":
                    facts[key] = value
            else:
                body.append(line)
    return facts, list(csv.DictReader(io.StringIO("".join(body))))


def cell(row, key, decimals):
    value = row.get(key, "")
    if value == "":
        return "-"
    if decimals is None:
        return value
    return f"{float(value):.{decimals}f}"


def rows_table(rows, columns):
    lines = [
        "| " + " | ".join(title for _, title, _ in columns) + " |",
        "| " + " | ".join("---" if d is None else "---:" for _, _, d in columns) + " |",
    ]
    for row in rows:
        lines.append("| " + " | ".join(cell(row, key, d) for key, _, d in columns) + " |")
    return lines


def gpu_line(facts):
    return (f"{facts.get('gpu', 'unknown GPU')} ({facts.get('sm_count', '?')} SMs, SM clock seen "
            f"{float(facts.get('sm_clock_seen_min_mhz', 'nan')):.0f}–"
            f"{float(facts.get('sm_clock_seen_max_mhz', 'nan')):.0f} MHz; CUDA driver "
            f"{facts.get('driver', '?')}, runtime {facts.get('runtime', '?')}, cuBLAS "
            f"{facts.get('cublas', '?')})")


def verdicts(rows):
    if all(r.get("verdict") == "PASS" for r in rows):
        return "every row checked against an FP64 reference first (all PASS)"
    return "every row checked against an FP64 reference first (verdicts in the last column)"


def page_table(facts, rows, link):
    """The results page's: every row, every column, the run's facts; link:
    the CSV, relative to the page."""
    shapes = sorted({r["shape"] for r in rows})
    lines = [
        f"`{facts.get('command_line', 'pipegemm bench')}` on an {gpu_line(facts)}, "
        f"{facts.get('date', 'undated')}, commit `{facts.get('commit', 'unknown')}`, at "
        f"{', '.join(shapes)}; {verdicts(rows)} ([{os.path.basename(link)}]({link})):",
        "",
    ]
    return "\n".join(lines + rows_table(rows, COLUMNS)) + "\n"


def readme_table(facts, rows, page):
    """README.md's: the chosen rows, no date or commit (the page has them);
    page: the results page, relative to the README."""
    by_name = {r["variant"]: r for r in rows}
    missing = [name for name in README_ROWS if name not in by_name]
    if missing:
        raise KeyError(", ".join(missing))
    shapes = sorted({r["shape"] for r in rows})
    chosen = [by_name[name] for name in README_ROWS]
    columns = [c for key in README_COLUMNS for c in COLUMNS if c[0] == key]
    lines = [
        f"`pipegemm bench` on an {gpu_line(facts)} at {', '.join(shapes)}, "
        f"{verdicts(chosen)}; every variant's row, the run's date and commit: "
        f"[{os.path.dirname(page)}/]({page}).",
        "",
    ]
    return "\n".join(lines + rows_table(chosen, columns)) + "\n"


def replace(text, name, table):
    start, stop = text.find(BEGIN), text.find(END)
    if start < 0 or stop < start:
        raise ValueError(f"{name} lacks the markers '{BEGIN}' ... '{END}'")
    return text[: start + len(BEGIN)] + "\n" + table + text[stop:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", default="bench/results/headline/h200-headline.csv")
    parser.add_argument("--readme", default="README.md")
    parser.add_argument("--page", default="bench/results/headline/README.md")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    try:
        facts, rows = read_report(args.csv)
        texts = {args.readme: open(args.readme, encoding="utf-8").read(),
                 args.page: open(args.page, encoding="utf-8").read()}
    except OSError as err:
        print(f"readme-table: {err}", file=sys.stderr)
        return 2
    if not rows:
        print(f"readme-table: {args.csv} holds no rows", file=sys.stderr)
        return 2
    # The README links the page relative to itself; the page names the CSV beside it.
    page_link = os.path.relpath(os.path.abspath(args.page),
                                os.path.dirname(os.path.abspath(args.readme)))
    csv_link = os.path.relpath(os.path.abspath(args.csv),
                               os.path.dirname(os.path.abspath(args.page)))
    try:
        updated = {
            args.readme: replace(texts[args.readme], args.readme,
                                 readme_table(facts, rows, page_link)),
            args.page: replace(texts[args.page], args.page, page_table(facts, rows, csv_link)),
        }
    except KeyError as err:
        print(f"readme-table: {args.csv} has no row of {err}, which README.md shows",
              file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"readme-table: {err}", file=sys.stderr)
        return 2
    stale = [name for name in texts if updated[name] != texts[name]]
    if args.check:
        for name in stale:
            print(f"readme-table: {name}'s headline table is not what {args.csv} "
                  "gives; run scripts/readme-table.py", file=sys.stderr)
        return 1 if stale else 0
    for name in stale:
        with open(name, "w", encoding="utf-8") as f:
            f.write(updated[name])
    return 0


if __name__ == "__main__":
    sys.exit(main())
