#!/usr/bin/env python3
"""What scripts/report.py draws, read back from the gnuplot scripts it runs.

    tests/test_report.py SOURCE_DIR PIPEGEMM OUT_DIR [unittest options]

A stand-in gnuplot first on PATH keeps every script it is given, then runs
the real one. The checks:
  * every registry variant (`pipegemm list`) has a row in VARIANT_STYLES,
    and no two rows share a colour (so no two share colour+dash+point);
  * in every plot of a page a variant has its one look, and two variants
    never look the same, a name outside the table included;
  * every variant measured at a shape in a bench or sweep input is drawn at
    that shape (its bars, a stage sweep or the size sweep), every profiled
    kernel is in the stall chart, and every variant of every input is named
    on the page;
  * shapes go by size (M*N*K, then M, N, K) wherever a page lists them;
  * `make report` draws the committed bench/results/h200-report.md from
    every committed H200 report CSV, and the committed page is that page.
CTest runs it (report_styles); it exits 77 where python3 or gnuplot is
missing. Standard library only.
"""

import csv
import glob
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import unittest

SOURCE, PIPEGEMM, OUT = (None, None, None)

# Independent of report.py: how the tests expect shapes ordered.
def size_order(shape):
    m, n, k = (int(part) for part in shape.split("x"))
    return (m * n * k, m, n, k)


def load_report_module():
    # No __pycache__ left in the source tree.
    sys.dont_write_bytecode = True
    path = os.path.join(SOURCE, "scripts", "report.py")
    spec = importlib.util.spec_from_file_location("report", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recording_gnuplot(directory, log):
    """A gnuplot first on PATH that keeps each script it reads on stdin."""
    real = shutil.which("gnuplot")
    os.makedirs(directory, exist_ok=True)
    os.makedirs(log, exist_ok=True)
    path = os.path.join(directory, "gnuplot")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("#!/bin/sh\n"
                     "if [ $# -eq 0 ]; then\n"
                     f'  script=$(mktemp "{log}/script.XXXXXX") || exit 1\n'
                     '  cat >"$script" || exit 1\n'
                     f'  exec "{real}" "$script"\n'
                     "fi\n"
                     f'exec "{real}" "$@"\n')
    os.chmod(path, 0o755)
    env = dict(os.environ)
    env["PATH"] = directory + os.pathsep + env.get("PATH", "")
    return env


# ---- reading the inputs, as a user would -------------------------------------


def input_rows(path):
    """(facts, rows) of each report in a pipegemm CSV."""
    reports, facts, lines = [], {}, []

    def finish():
        if lines:
            rows = [r for r in csv.DictReader(io.StringIO("".join(lines)))
                    if r.get("variant") != "variant"]
            reports.append((facts, rows))

    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("# report:"):
                finish()
                facts, lines = {}, []
            elif line.startswith("#"):
                key, _, value = line[1:].partition(":")
                facts[key.strip()] = value.strip()
            elif line.strip():
                lines.append(line)
    finish()
    return reports


def measured(path):
    """(variant, shape) of every row with a TFLOP/s figure."""
    return {(r["variant"], r["shape"]) for _, rows in input_rows(path) for r in rows
            if r.get("tflops") not in (None, "")}


def every_variant(kind, path):
    """The variants a page must name: those measured in a bench or sweep
    (a variant with SKIP rows only has no data), every one of the others."""
    if kind in ("bench", "sweep"):
        return {v for v, _ in measured(path)}
    return {r["variant"] for _, rows in input_rows(path) for r in rows if r.get("variant")}


# ---- reading what was drawn ----------------------------------------------------


BLOCK = re.compile(r"^\$(\w+) << EOD\n(.*?)\nEOD$", re.S | re.M)
LINE_CLAUSE = re.compile(r'(\$\w+|[-\d.]+) (?:using \S+ )?with (?:lines|linespoints) '
                         r'[^\n]*?lc rgb "(#[0-9a-fA-F]{6})" dt (\d+) pt (\d+)'
                         r'[^\n]*? title "([^"]*)"')
BAR_ROW = re.compile(r'^\d+ [-\d.]+ (\d+) "([^"]*)"$')
TIC = re.compile(r'"([^"\\]*)(?:\\n[^"]*)?" (\d+)')


def variant_of(title):
    """cp_async (2) -> cp_async; cublas (strict FP32) 50.3 -> cublas."""
    return title.split(" (")[0].split(" ")[0]


class Plot:
    """One gnuplot script: its PNG, and per variant the looks and the x
    values (shape indices or stage counts) it was drawn at."""

    def __init__(self, text):
        self.png = os.path.basename(re.search(r'^set output "(.*)"$', text, re.M).group(1))
        self.blocks = {m.group(1): m.group(2).split("\n") for m in BLOCK.finditer(text)}
        self.looks = {}   # variant -> {(colour, dash, point)}
        self.colors = {}  # variant -> {colour} (bars: no dash or point)
        self.xs = {}      # variant -> {x}
        for m in LINE_CLAUSE.finditer(text):
            source, color, dash, point, title = m.groups()
            variant = variant_of(title)
            self.looks.setdefault(variant, set()).add((color.lower(), int(dash), int(point)))
            if source.startswith("$"):
                for row in self.blocks.get(source[1:], []):
                    if row.strip():
                        self.xs.setdefault(variant, set()).add(float(row.split()[0]))
        for row in self.blocks.get("bars", []):
            bar = BAR_ROW.match(row)
            if bar:
                variant = variant_of(bar.group(2))
                self.colors.setdefault(variant, set()).add(f"#{int(bar.group(1)):06x}")
        tics = re.search(r"^set xtics \((.*)\)$", text, re.M)
        self.tics = [(label, int(i)) for label, i in TIC.findall(tics.group(1))] if tics else []
        self.stall_labels = [re.match(r'"([^"]*)"', row).group(1)
                             for row in self.blocks.get("st", []) if row.startswith('"')]

    def kind(self):
        found = re.search(r"-(tflops|stages|sizes-x-cublas|sizes|stalls)", self.png)
        return found.group(1)

    def shape(self):
        found = re.search(r"-(?:tflops|stages)-(\d+x\d+x\d+)", self.png)
        return found.group(1) if found else None


def read_plots(log):
    plots = []
    for path in sorted(glob.glob(os.path.join(log, "script.*"))):
        with open(path, encoding="utf-8") as handle:
            plots.append(Plot(handle.read()))
    return plots


def page_sections(md):
    """### headings per ## section, in page order."""
    sections, current = {}, None
    for line in md.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:], [])
        elif line.startswith("### ") and current is not None:
            current.append(line[4:])
    return sections


def stage_plot_sources(md):
    """PNG of each stage plot -> the input it names just below it."""
    found = {}
    for m in re.finditer(r"!\[TFLOP/s against pipeline stages[^]]*\]\(([^)]+)\)\n\n"
                         r"From `([^`]+)`", md):
        found[m.group(1)] = m.group(2)
    return found


# ---- the checks ------------------------------------------------------------------


class PageChecks:
    """Checks on one drawn page; subclasses draw it in setUpClass and set
    cls.md, cls.plots, cls.inputs ((kind, path) as the page names them,
    paths readable from the cwd)."""

    def test_one_look_per_variant(self):
        looks = {}
        for plot in self.plots:
            for variant, seen in plot.looks.items():
                looks.setdefault(variant, set()).update(seen)
        self.assertTrue(looks, "no variant drawn as a line")
        table = self.report.VARIANT_STYLES
        for variant, seen in looks.items():
            self.assertEqual(len(seen), 1, f"{variant} has several looks: {seen}")
            if variant in table:
                style = table[variant]
                self.assertEqual(seen, {(style.color.lower(), style.dash, style.point)},
                                 f"{variant} is not drawn in its VARIANT_STYLES look")
            else:
                self.assertEqual(next(iter(seen))[1], self.report.FALLBACK_DASH,
                                 f"{variant}, not in VARIANT_STYLES, is not dotted")
        owners = {}
        for variant, seen in looks.items():
            look = next(iter(seen))
            self.assertNotIn(look, owners,
                             f"{variant} and {owners.get(look)} look the same: {look}")
            owners[look] = variant
        for plot in self.plots:
            for variant, colors in plot.colors.items():
                line_colors = {look[0] for look in looks.get(variant, ())}
                self.assertEqual(len(colors | line_colors), 1,
                                 f"{variant}'s bar in {plot.png} and its lines differ in colour")
                if variant in table:
                    self.assertEqual(colors, {table[variant].color.lower()},
                                     f"{variant}'s bar in {plot.png} is not its colour")

    def test_every_measured_variant_is_drawn_at_its_shape(self):
        drawn = set()
        for plot in self.plots:
            if plot.kind() == "tflops":
                drawn |= {(v, plot.shape()) for v in plot.colors}
            elif plot.kind() == "stages":
                drawn |= {(v, plot.shape()) for v in plot.looks}
            elif plot.kind() == "sizes":
                shapes = {i: label for label, i in plot.tics}
                for variant, xs in plot.xs.items():
                    drawn |= {(variant, shapes[int(x)]) for x in xs}
        for kind, path in self.inputs:
            if kind in ("bench", "sweep"):
                missing = measured(path) - drawn
                self.assertFalse(missing, f"{path}: measured but drawn nowhere: "
                                 f"{sorted(missing)}")

    def test_the_size_sweep_draws_every_bench_row(self):
        sizes = [plot for plot in self.plots if plot.kind() == "sizes"]
        benches = [path for kind, path in self.inputs if kind == "bench"]
        if not benches or len({s for path in benches for _, s in measured(path)}) < 2:
            self.skipTest("no bench input of several shapes")
        self.assertEqual(len(sizes), 1)
        shapes = {i: label for label, i in sizes[0].tics}
        drawn = {(v, shapes[int(x)]) for v, xs in sizes[0].xs.items() for x in xs}
        for path in benches:
            missing = measured(path) - drawn
            self.assertFalse(missing, f"{path}: not in the size sweep: {sorted(missing)}")
        # Its twin in × cuBLAS: every variant but cuBLAS at the same shapes.
        ratios = [plot for plot in self.plots if plot.kind() == "sizes-x-cublas"]
        self.assertEqual(len(ratios), 1)
        ratio_shapes = {i: label for label, i in ratios[0].tics}
        ratio_drawn = {(v, ratio_shapes[int(x)]) for v, xs in ratios[0].xs.items() for x in xs}
        self.assertEqual(ratio_drawn, {(v, sh) for v, sh in drawn if v != "cublas"})

    def test_every_sweep_has_its_stage_plots(self):
        sources = stage_plot_sources(self.md)
        by_png = {plot.png: plot for plot in self.plots}
        for kind, path in self.inputs:
            if kind != "sweep":
                continue
            for shape in {s for _, s in measured(path)}:
                pngs = [png for png, source in sources.items()
                        if source == path and f"-stages-{shape}" in png]
                self.assertEqual(len(pngs), 1, f"{path}: no one stage plot of {shape}")
                want = {v for v, s in measured(path) if s == shape}
                self.assertEqual(set(by_png[pngs[0]].looks), want,
                                 f"{pngs[0]} does not draw {path}'s variants at {shape}")

    def test_every_profiled_kernel_is_in_a_stall_chart(self):
        labels = [label for plot in self.plots if plot.kind() == "stalls"
                  for label in plot.stall_labels]
        for kind, path in self.inputs:
            if kind == "profile":
                for _, rows in input_rows(path):
                    for row in rows:
                        if row.get("stall_wait"):
                            self.assertTrue(any(variant_of(l) == row["variant"]
                                                for l in labels),
                                            f"{path}: {row['variant']} not in a stall chart")

    def test_every_variant_is_named_on_the_page(self):
        for kind, path in self.inputs:
            self.assertIn(f"`{path}` ({kind})", self.md, f"{path} is not among the inputs")
            for variant in every_variant(kind, path):
                self.assertRegex(self.md, rf"\| {re.escape(variant)} \|",
                                 f"{path}: {variant} is not in a table on the page")

    def test_shapes_go_by_size(self):
        sections = page_sections(self.md)
        for name in ("TFLOP/s per variant", "Stage sweep"):
            shapes = [h for h in sections.get(name, []) if re.fullmatch(r"\d+x\d+x\d+", h)]
            self.assertEqual(shapes, sorted(shapes, key=size_order), f"## {name}")
        for plot in self.plots:
            if plot.kind() == "sizes":
                shapes = [label for label, _ in sorted(plot.tics, key=lambda t: t[1])]
                self.assertEqual(shapes, sorted(shapes, key=size_order), plot.png)
        header = re.search(r"^\| variant \| (\d+x\d+x\d+ \|.*)$", self.md, re.M)
        if header:
            shapes = [c.strip() for c in header.group(1).split("|") if c.strip()]
            self.assertEqual(shapes, sorted(shapes, key=size_order), "size sweep table")


class StyleTable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.report = load_report_module()

    def test_every_registry_variant_has_a_row(self):
        if not PIPEGEMM:
            self.skipTest("no pipegemm given")
        listed = subprocess.run([PIPEGEMM, "list", "--format", "csv"], capture_output=True,
                                text=True, check=False)
        rows = csv.DictReader(io.StringIO("".join(
            line + "\n" for line in listed.stdout.splitlines() if not line.startswith("#"))))
        names = [row["name"] for row in rows]
        self.assertGreater(len(names), 10, listed.stdout + listed.stderr)
        self.assertEqual(sorted(self.report.VARIANT_STYLES), sorted(names),
                         "VARIANT_STYLES and the registry list different variants")

    def test_no_two_rows_share_a_colour_or_a_look(self):
        styles = list(self.report.VARIANT_STYLES.values())
        colors = [s.color.lower() for s in styles]
        self.assertEqual(len(set(colors)), len(colors), "two variants share a colour")
        self.assertEqual(len(set(styles)), len(styles), "two variants share a look")
        greys = {self.report.PEAK_COLOR} | {c for _, _, c in self.report.STALL_KEYS}
        self.assertFalse(set(colors) & greys, "a variant has a colour kept for other lines")

    def test_unknown_names_keep_a_look_apart_from_the_table(self):
        table = set(self.report.VARIANT_STYLES.values())
        for name in ("my_new_kernel", "tma_ws2", "x", "CP_ASYNC"):
            style = self.report.variant_style(name)
            self.assertEqual(style, self.report.variant_style(name))
            self.assertNotIn(style, table, f"{name} looks like a variant of the table")
            self.assertEqual(style.dash, self.report.FALLBACK_DASH)


class H200Page(PageChecks, unittest.TestCase):
    """`make report` with no CSVs of one's own: the committed H200 runs."""

    @classmethod
    def setUpClass(cls):
        cls.report = load_report_module()
        base = os.path.join(OUT, "h200")
        shutil.rmtree(base, ignore_errors=True)
        log = os.path.join(base, "scripts")
        env = recording_gnuplot(os.path.join(base, "bin"), log)
        cls.out = os.path.join(base, "page")
        if not shutil.which("make"):
            raise AssertionError("make is not installed: `make report` is under test")
        done = subprocess.run(["make", "-s", "-C", SOURCE, "report",
                               "RESULTS=" + os.path.join(base, "no-results"),
                               "H200_OUT=" + cls.out], env=env, capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            raise AssertionError(f"make report failed:\n{done.stdout}{done.stderr}")
        with open(os.path.join(cls.out, "h200-report.md"), encoding="utf-8") as handle:
            cls.md = handle.read()
        cls.plots = read_plots(log)
        cls.inputs = [(kind, path) for path, kind in
                      re.findall(r"^- `([^`]+)` \((\w+)\)", cls.md, re.M)]

    def test_every_committed_report_csv_is_an_input(self):
        named = {path for _, path in self.inputs}
        for path in sorted(glob.glob("bench/results/h200-*.csv")):
            with open(path, encoding="utf-8") as handle:
                first = handle.readline()
            if re.match(r"# report: pipegemm (bench|profile|inspect)$", first.strip()):
                self.assertIn(path, named, f"make report leaves out {path}")

    def test_tma_tma_ws_and_auto_are_on_the_page(self):
        drawn = {v for plot in self.plots for v in list(plot.looks) + list(plot.colors)}
        for variant in ("tma", "tma_ws", "auto"):
            self.assertIn(variant, drawn)

    def test_the_committed_page_is_this_page(self):
        with open("bench/results/h200-report.md", encoding="utf-8") as handle:
            committed = handle.read()
        self.assertEqual(committed, self.md, "bench/results/h200-report.md is not what "
                         "`make report` draws now: run `make report` and commit it")
        for png in re.findall(r"\]\(([^)]+\.png)\)", self.md):
            self.assertTrue(os.path.exists(os.path.join("bench/results", png)),
                            f"the committed page names {png}, which is not there")


FIXTURE_HEADER = """# report: pipegemm bench
# gpu: hand-made test fixture, not a measurement
# command_line: pipegemm bench --variant cublas,cp_async,tma_ws,my_new_kernel --format csv
# date: 2026-01-01 00:00:00 UTC
variant,stages,shape,m,n,k,median_ms,tflops,x_cublas,pct_ffma_peak,verdict
"""
# Shapes whose text order is not their size order (M*N*K: 5.2G, 1.07G,
# 134M, 268M with M = 64 before M = 2048, 75M), and a variant no table knows.
FIXTURE_SHAPES = ["1024x1024x4096", "1024x1024x1024", "512x512x512", "2048x64x2048",
                  "64x2048x2048", "96x8192x96"]


class FixturePage(PageChecks, unittest.TestCase):
    """Shapes that sort wrongly as text, and a name outside the table."""

    @classmethod
    def setUpClass(cls):
        cls.report = load_report_module()
        base = os.path.join(OUT, "fixture")
        shutil.rmtree(base, ignore_errors=True)
        os.makedirs(base)
        log = os.path.join(base, "scripts")
        env = recording_gnuplot(os.path.join(base, "bin"), log)
        bench = os.path.join(base, "bench.csv")
        with open(bench, "w", encoding="utf-8") as handle:
            handle.write(FIXTURE_HEADER)
            for i, shape in enumerate(FIXTURE_SHAPES):
                m, n, k = shape.split("x")
                for j, variant in enumerate(("cublas", "cp_async", "tma_ws", "my_new_kernel")):
                    handle.write(f"{variant},2,{shape},{m},{n},{k},1.0,{30 + i + j},"
                                 f"0.9,50,PASS\n")
        sweep = os.path.join(SOURCE, "tests", "stage_sweep.csv")
        cls.out = os.path.join(base, "page")
        done = subprocess.run([sys.executable, os.path.join(SOURCE, "scripts", "report.py"),
                               "--bench", bench, "--sweep", sweep, "--out", cls.out],
                              env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise AssertionError(f"report.py failed:\n{done.stdout}{done.stderr}")
        with open(os.path.join(cls.out, "report.md"), encoding="utf-8") as handle:
            cls.md = handle.read()
        cls.plots = read_plots(log)
        shown = cls.report.shown_path
        cls.inputs = [("bench", shown(bench)), ("sweep", shown(sweep))]

    def test_the_fixture_is_a_trap(self):
        self.assertNotEqual(sorted(FIXTURE_SHAPES), sorted(FIXTURE_SHAPES, key=size_order))

    def test_an_unknown_variant_is_drawn(self):
        drawn = {v for plot in self.plots for v in plot.looks}
        self.assertIn("my_new_kernel", drawn)


class StagePlotAlone(unittest.TestCase):
    """scripts/plot-stages.sh draws with the same looks as the page."""

    def test_plot_stages_uses_the_table(self):
        report = load_report_module()
        base = os.path.join(OUT, "plot-stages")
        shutil.rmtree(base, ignore_errors=True)
        log = os.path.join(base, "scripts")
        env = recording_gnuplot(os.path.join(base, "bin"), log)
        png = os.path.join(base, "sweep.png")
        done = subprocess.run(["bash", os.path.join(SOURCE, "scripts", "plot-stages.sh"),
                               os.path.join(SOURCE, "tests", "stage_sweep.csv"), png],
                              env=env, capture_output=True, text=True, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        plots = read_plots(log)
        self.assertEqual(len(plots), 1)
        self.assertEqual(set(plots[0].looks), {"cublas", "baseline", "pingpong", "cp_async",
                                               "pipeline_block"})
        for variant, seen in plots[0].looks.items():
            style = report.VARIANT_STYLES[variant]
            self.assertEqual(seen, {(style.color, style.dash, style.point)}, variant)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        print("usage: test_report.py SOURCE_DIR PIPEGEMM|- OUT_DIR [unittest options]",
              file=sys.stderr)
        sys.exit(2)
    SOURCE = os.path.abspath(sys.argv[1])
    PIPEGEMM = None if sys.argv[2] == "-" else os.path.abspath(sys.argv[2])
    OUT = os.path.abspath(sys.argv[3])
    if not shutil.which("gnuplot"):
        print("skipped: gnuplot is not installed (apt-get install gnuplot-nox)")
        sys.exit(77)
    os.chdir(SOURCE)
    unittest.main(argv=[sys.argv[0]] + sys.argv[4:])
