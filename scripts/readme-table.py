#!/usr/bin/env python3
"""The README's headline table, from a committed `pipegemm bench --format csv`.

    scripts/readme-table.py [--csv bench/results/headline/h200-headline.csv] [--readme README.md]
                            [--check]

Writes the table, and the line that says which GPU, command, commit and date
it comes from, between README.md's markers

    <!-- headline table: scripts/readme-table.py -->
    ...
    <!-- end of headline table -->

--check writes nothing and exits 1 when README.md's table is not what the
CSV gives (the test readme_table runs it): a number in the README is the
committed run's, never one typed by hand. The CSV's header facts name the
GPU, the drivers, the date and the command line; the commit is the fact
`commit`, which scripts/device-check.sh adds. Exit 2 for a missing or
unreadable file.
"""
import argparse
import csv
import io
import sys

BEGIN = "<!-- headline table: scripts/readme-table.py -->"
END = "<!-- end of headline table -->"

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


def table(facts, rows, path):
    shapes = sorted({r["shape"] for r in rows})
    lines = [
        f"`{facts.get('command_line', 'pipegemm bench')}` on an {facts.get('gpu', 'unknown GPU')} "
        f"({facts.get('sm_count', '?')} SMs, SM clock seen "
        f"{float(facts.get('sm_clock_seen_min_mhz', 'nan')):.0f}–"
        f"{float(facts.get('sm_clock_seen_max_mhz', 'nan')):.0f} MHz; CUDA driver "
        f"{facts.get('driver', '?')}, runtime {facts.get('runtime', '?')}, cuBLAS "
        f"{facts.get('cublas', '?')}), {facts.get('date', 'undated')}, commit "
        f"`{facts.get('commit', 'unknown')}`, at {', '.join(shapes)}; every row checked against "
        f"an FP64 reference (`{path}`):",
        "",
        "| " + " | ".join(title for _, title, _ in COLUMNS) + " |",
        "| " + " | ".join("---" if d is None else "---:" for _, _, d in COLUMNS) + " |",
    ]
    for row in rows:
        lines.append("| " + " | ".join(cell(row, key, d) for key, _, d in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", default="bench/results/headline/h200-headline.csv")
    parser.add_argument("--readme", default="README.md")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    try:
        facts, rows = read_report(args.csv)
        readme = open(args.readme, encoding="utf-8").read()
    except OSError as err:
        print(f"readme-table: {err}", file=sys.stderr)
        return 2
    if not rows:
        print(f"readme-table: {args.csv} holds no rows", file=sys.stderr)
        return 2
    start, stop = readme.find(BEGIN), readme.find(END)
    if start < 0 or stop < start:
        print(f"readme-table: {args.readme} lacks the markers '{BEGIN}' ... '{END}'",
              file=sys.stderr)
        return 2
    updated = readme[: start + len(BEGIN)] + "\n" + table(facts, rows, args.csv) + readme[stop:]
    if args.check:
        if updated != readme:
            print(f"readme-table: {args.readme}'s headline table is not what {args.csv} "
                  "gives; run scripts/readme-table.py", file=sys.stderr)
            return 1
        return 0
    with open(args.readme, "w", encoding="utf-8") as f:
        f.write(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
