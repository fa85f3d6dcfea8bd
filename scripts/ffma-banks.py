#!/usr/bin/env python3
"""A static count of register-bank conflicts in the FFMAs of compiled kernels.

    scripts/ffma-banks.py FILE... [--kernel REGEX] [--banks 2]

FILE: an object file, library or executable with sm_90 (or other) SASS in
it (cuobjdump must be on PATH, or named by $CUOBJDUMP), or a text file of
`cuobjdump -sass` output. For each kernel with FFMAs it prints their count
and the extra operand cycles a FFMA pays on average under this model: a
register lives in bank (its number mod --banks); a source operand that the
previous instruction held in the same slot with .reuse comes from the
operand reuse cache; of the others, each one beyond the first in the same
bank costs a cycle. The model is an assumption (the hardware's banking is
not documented), kept because on the H200 it separates the flagship's
instances that run fast from those that do not:
bench/results/partial-waves/README.md, "Stream-K: not yet better than split K". Output: one line a kernel, demangled where
c++filt is on PATH.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

FFMA = re.compile(r"\*/\s+(?:@!?U?P[T\d]+\s+)?FFMA(?:\.\S+)?\s+R\d+,\s*([^,;]+),\s*([^,;]+),\s*([^,;]+)\s*;")
REG = re.compile(r"^-?\|?R(\d+)\|?(\.reuse)?")


def sass_text(path):
    with open(path, "rb") as f:
        head = f.read(4)
    if head == b"\x7fELF" or path.endswith((".o", ".a", ".so", ".cubin", ".fatbin")):
        tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
        if not tool:
            sys.exit("ffma-banks: cuobjdump not found (PATH or $CUOBJDUMP)")
        out = subprocess.run([tool, "-sass", path], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"ffma-banks: {tool} -sass {path}: {out.stderr.strip()}")
        return out.stdout
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def functions(text):
    """(architecture, kernel name, SASS lines) of each function, in order."""
    arch, name, lines = "?", None, []
    for line in text.splitlines():
        a = re.search(r"(?:arch = |code for )(sm_\w+)", line)
        m = re.search(r"Function : (\S+)", line)
        if a or m:
            if name:
                yield arch_of_name, name, lines
            name, lines = None, []
        if a:
            arch = a.group(1)
        if m:
            arch_of_name, name = arch, m.group(1)
        elif name and re.match(r"\s*/\*[0-9a-f]{4,}\*/", line):
            lines.append(line)
    if name:
        yield arch_of_name, name, lines


def count(lines, banks):
    ffmas = extra = 0
    prev = None  # the previous instruction's source slots: (register, reuse) or None
    for line in lines:
        m = FFMA.search(line)
        if not m:
            prev = None
            continue
        slots = []
        for op in m.groups():
            r = REG.match(op.strip())
            slots.append((int(r.group(1)), bool(r.group(2))) if r else None)
        per_bank = {}
        for i, s in enumerate(slots):
            if s is None:
                continue
            cached = prev is not None and prev[i] is not None and prev[i][0] == s[0] and prev[i][1]
            if not cached:
                per_bank[s[0] % banks] = per_bank.get(s[0] % banks, 0) + 1
        extra += max(per_bank.values()) - 1 if per_bank else 0
        ffmas += 1
        prev = slots
    return ffmas, extra


def demangle(names):
    tool = shutil.which("c++filt")
    if not tool:
        return names
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True)
    got = out.stdout.splitlines()
    return got if len(got) == len(names) else names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--kernel", default=".", help="only kernels whose mangled name matches")
    ap.add_argument("--banks", type=int, default=2)
    args = ap.parse_args()
    rows = []
    for path in args.files:
        seen = set()
        for arch, name, lines in functions(sass_text(path)):
            if (arch, name) in seen or not re.search(args.kernel, name):
                continue
            seen.add((arch, name))
            ffmas, extra = count(lines, args.banks)
            if ffmas:
                rows.append((path, arch, name, ffmas, extra))
    pretty = [re.sub(r"\(.*", "", n) for n in demangle([r[2] for r in rows])]
    width = max([len("kernel")] + [len(n) for n in pretty])
    print(f"{'kernel':{width}s} {'arch':7s} {'FFMA':>6s} {'extra cycles / FFMA':>20s}  file")
    for (path, arch, _, ffmas, extra), name in zip(rows, pretty):
        print(f"{name:{width}s} {arch:7s} {ffmas:6d} {extra / ffmas:20.3f}  {os.path.basename(path)}")


if __name__ == "__main__":
    main()
