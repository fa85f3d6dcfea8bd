#!/usr/bin/env python3
"""Strict FP32 `auto` against its targets, from `pipegemm bench` CSV files.

    scripts/targets.py [--hbm-tbps 4.8] FILE.csv...

Each FILE is the CSV output of `pipegemm bench --shapes F --variant
cublas,auto --format csv` (comment lines first, as bench writes them). The
file's `# command_line:` says which shape file it ran; from that:

  - the committed set (bench/shapes/set.txt): `auto` x cuBLAS at every
    shape (at least 0.90), their geometric mean (at least 1.0), and the
    large squares 4096^3, 6144^3, 8192^3;
  - layouts.txt (every op(A), op(B) and the batched set, bench run three
    times into one file: cublas,auto; cublas,auto_emulated;
    cublas_tf32,auto_tf32): each class against cuBLAS with the same ops and
    batch, targets on the geometric mean: `auto` 0.95, `auto_emulated` 2.0,
    `auto_tf32` 1.0 (against cuBLAS TF32); a problem below it in bold;
  - any-layout.txt: each unaligned shape's time against its aligned
    neighbour's (the file lists them in pairs, unaligned first): within
    10 %, i.e. aligned time / unaligned time at least 0.90;
  - every file: where M or N is at most 8, the share of the HBM's
    bandwidth that reading the long operand once takes, 4 K max(M, N)
    bytes (times the batch, unless the batch shares it) over `auto`'s median time (at least 60 % of --hbm-tbps, the
    H200's 4.8 TB/s by default). A shape measured in several files meets
    it only if every measurement does.

Prints a Markdown summary; exits 0 whatever it finds (a report, not a test),
2 with one line on stderr where a FILE cannot be read or is no bench CSV
(before anything is printed).
"""
import argparse
import csv
import math
import os
import sys


def read(path):
    """The file's command line and its rows, by variant and shape."""
    command, rows = "", {}
    with open(path, newline="") as f:
        lines = []
        for line in f:
            if line.startswith("# command_line:"):
                command = line.split(":", 1)[1].strip()
            elif not line.startswith("#") and line.strip():
                lines.append(line)
    reader = csv.DictReader(lines)
    missing = [c for c in ("variant", "shape", "m", "n", "k", "median_ms", "x_cublas")
               if c not in (reader.fieldnames or [])]
    if missing:
        raise ValueError(f"no column {', '.join(missing)}: not a CSV of pipegemm bench")
    for row in reader:
        if row.get("variant") in ("auto", "cublas", "auto_emulated", "auto_tf32", "cublas_tf32"):
            rows[(row["variant"], problem(row))] = row
    return command, rows


def problem(row):
    """The shape, with op(A), op(B) and the batch where they are not one NN
    GEMM: 4096x4096x4096 NT, 64x64x64 NN batch=1024 stride_b=0."""
    op, batch = row.get("op") or "NN", int(row.get("batch") or 1)
    if op == "NN" and batch == 1:
        return row["shape"]
    text = f"{row['shape']} {op}"
    if batch > 1:
        text += f" batch={batch}"
        text += "".join(f" {name}=0" for name in ("stride_a", "stride_b")
                        if row.get(name) == "0")
    return text


def shapes_file(command):
    words = command.split()
    for i, w in enumerate(words):
        if w == "--shapes" and i + 1 < len(words):
            return os.path.basename(words[i + 1])
    return ""


def ratio(rows, shape, variant="auto", column="x_cublas"):
    row = rows.get((variant, shape))
    return float(row[column]) if row and row.get(column) else None


def geometric_mean(values):
    return math.exp(sum(math.log(x) for x in values) / len(values)) if values else float("nan")


# layouts.txt: each precision class against cuBLAS with the same ops and
# batch, and its target: (variant, column, least ratio, the least geometric mean)
LAYOUT_TARGETS = (("auto", "x_cublas", 0.95, 0.95),
                  ("auto_emulated", "x_cublas", 2.0, 2.0),
                  ("auto_tf32", "x_cublas_tf32", 1.0, 1.0))


def ms(rows, shape):
    row = rows.get(("auto", shape))
    return float(row["median_ms"]) if row else None


def shape_order(rows):
    seen = []
    for (_, shape) in rows:
        if shape not in seen:
            seen.append(shape)
    return seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hbm-tbps", type=float, default=4.8)
    ap.add_argument("files", nargs="+")
    opt = ap.parse_args()

    # Every file read before a line is printed: a name mistyped is told in
    # one line, not after half a report or as a traceback.
    files = []
    for path in opt.files:
        try:
            files.append((path, *read(path)))
        except OSError as e:
            print(f"targets.py: cannot read {path}: {e.strerror or e}", file=sys.stderr)
            return 2
        except (ValueError, UnicodeDecodeError, csv.Error) as e:
            print(f"targets.py: {path}: {e}", file=sys.stderr)
            return 2

    hbm = {}  # shape -> [MB read, [percent, ...]]
    for path, command, rows in files:
        name = shapes_file(command)
        order = shape_order(rows)
        print(f"## {os.path.basename(path)} ({name or 'shapes not named'})\n")
        if name == "set.txt":
            r = [(s, ratio(rows, s)) for s in order if ratio(rows, s) is not None]
            low = [(s, x) for s, x in r if x < 0.90]
            geo = geometric_mean([x for _, x in r])
            worst = min(r, key=lambda t: t[1]) if r else ("-", float("nan"))
            print(f"- at least 0.90x cuBLAS: {len(r) - len(low)} of {len(r)} "
                  f"(lowest {worst[0]} {worst[1]:.3f}x)")
            for s, x in low:
                print(f"  - missed: {s} {x:.3f}x")
            print(f"- geometric mean: {geo:.3f}x")
            squares = [f"{s} {ratio(rows, s):.3f}x ({ms(rows, s):.3f} ms)"
                       for s in ("4096x4096x4096", "6144x6144x6144", "8192x8192x8192")
                       if ratio(rows, s) is not None]
            print(f"- large squares: {', '.join(squares)}")
        elif name == "layouts.txt":
            print("| problem | " + " | ".join(f"{v} ×" for v, *_ in LAYOUT_TARGETS) + " |")
            print("| --- |" + " ---: |" * len(LAYOUT_TARGETS))
            for s in order:
                cells = []
                for variant, column, least, _ in LAYOUT_TARGETS:
                    x = ratio(rows, s, variant, column)
                    cells.append("–" if x is None else
                                 f"{x:.3f}" if x >= least else f"**{x:.3f}**")
                if any(c != "–" for c in cells):
                    print(f"| {s} | " + " | ".join(cells) + " |")
            print()
            for variant, column, least, mean in LAYOUT_TARGETS:
                r = [x for x in (ratio(rows, s, variant, column) for s in order) if x is not None]
                if not r:
                    continue
                met = sum(x >= least for x in r)
                geo = geometric_mean(r)
                print(f"- {variant}: at least {least:.2f}x at {met} of {len(r)}, lowest "
                      f"{min(r):.3f}x; geometric mean {geo:.3f}x (target {mean:.2f}x)")
        elif name == "any-layout.txt":
            met = 0
            pairs = list(zip(order[0::2], order[1::2]))
            for unaligned, aligned in pairs:
                t_u, t_a = ms(rows, unaligned), ms(rows, aligned)
                if t_u is None or t_a is None:
                    continue
                x = t_a / t_u
                met += x >= 0.90
                mark = "" if x >= 0.90 else "  **missed**"
                print(f"- {unaligned} against {aligned}: {x:.3f}{mark}")
            print(f"- within 10 % of the aligned neighbour: {met} of {len(pairs)}")
        else:
            r = [ratio(rows, s) for s in order if ratio(rows, s) is not None]
            if r:
                geo = geometric_mean(r)
                print(f"- {len(r)} shapes, geometric mean {geo:.3f}x cuBLAS, "
                      f"lowest {min(r):.3f}x")
        for s in order:
            row = rows.get(("auto", s))
            if row is None:
                continue
            m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
            batch = int(row.get("batch") or 1)
            if min(m, n) <= 8:
                # The long operand is what must cross HBM: once a member,
                # once in all where the batch shares it (a stride of 0).
                shared = row.get("stride_b" if m <= n else "stride_a") == "0"
                mb = 4.0 * k * max(m, n) * (1 if shared else batch) / 1e6
                share = mb * 1e6 / (float(row["median_ms"]) * 1e-3) / (opt.hbm_tbps * 1e12)
                hbm.setdefault(s, [mb, []])[1].append(100.0 * share)
        print()

    if hbm:
        met = [s for s, (_, v) in hbm.items() if min(v) >= 60.0]
        print(f"## HBM where M or N <= 8 (of {opt.hbm_tbps} TB/s)\n")
        print(f"- at least 60 %: {len(met)} of {len(hbm)}")
        for s, (mb, v) in sorted(hbm.items(), key=lambda t: min(t[1][1])):
            if min(v) < 60.0:
                print(f"  - missed: {s} {min(v):.1f} % ({mb:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
