#!/usr/bin/env python3
"""Where a kernel's warps wait, instruction by instruction: reads the SASS
page Nsight Compute writes with

    ncu --set full --import-source no -o rep <program>
    ncu -i rep.ncu-rep --page source --csv --print-source sass > page.csv

and prints, per file, the warp-state samples by stall reason (share of all
samples), and per opcode its share of executed warp instructions against
its share of samples and of dispatch stalls. Two files side by side compare
two kernels (bench/results/tma-ws/README.md: cuBLAS against tma_ws).

    scripts/ncu-source-stalls.py page-a.csv [page-b.csv ...]
"""
import collections
import csv
import sys

TOP_REASONS = 10
TOP_OPCODES = 10


def read_page(path):
    """The rows of the SASS table (after the "Kernel Name" line) as dicts."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    for i, row in enumerate(rows):
        if row and row[0] == "Address":
            header = row
            return [dict(zip(header, r)) for r in rows[i + 1:] if len(r) == len(header)]
    raise SystemExit(f"{path}: no SASS table (a header row starting with Address)")


def number(text):
    return int(text.replace(",", "")) if text and text.strip() not in ("", "-") else 0


def opcode(source):
    words = source.split()
    if words and words[0].startswith("@"):  # a predicate guard
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def summarise(path):
    rows = read_page(path)
    reasons = [k for k in rows[0] if k.startswith("stall_") and "Not Issued" not in k]
    by_reason = collections.Counter()
    samples = collections.Counter()
    executed = collections.Counter()
    dispatch = collections.Counter()
    for row in rows:
        op = opcode(row["Source"])
        samples[op] += number(row["Warp Stall Sampling (All Samples)"])
        executed[op] += number(row["Instructions Executed"])
        dispatch[op] += number(row.get("stall_dispatch", "0"))
        for reason in reasons:
            by_reason[reason] += number(row[reason])
    total_samples = sum(samples.values()) or 1
    total_executed = sum(executed.values()) or 1
    total_dispatch = sum(dispatch.values()) or 1
    print(f"{path}: {total_samples} samples, {total_executed} warp instructions executed")
    print("  samples by reason:")
    for reason, count in by_reason.most_common(TOP_REASONS):
        print(f"    {reason[len('stall_'):]:20s} {100.0 * count / total_samples:5.1f} %")
    print("  opcode       executed  samples  dispatch stalls")
    for op, count in executed.most_common(TOP_OPCODES):
        print(f"    {op:10s} {100.0 * count / total_executed:7.2f} % {100.0 * samples[op] / total_samples:7.2f} %"
              f" {100.0 * dispatch[op] / total_dispatch:7.2f} %")


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in argv[1:]:
        summarise(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
