#!/usr/bin/env python3
"""What scripts/report.py draws, read back from the figures it saves.

    tests/test_report.py SOURCE_DIR PIPEGEMM OUT_DIR [unittest options]

With PG_PLOT_LOG set, scripts/drawing.py describes each PNG it saves in a
JSON file: the lines (label, colour, dash, marker, hollow or filled, points),
bars and ticks of the figure, read off its artists. The checks:
  * every registry variant (`pipegemm list`) has a row in VARIANT_STYLES,
    and no two rows share a colour (so no two share colour+dash+marker);
    tma_ws's tile forms take theirs from their list (TWS_FORMS);
  * in every plot of a page a variant has its one look, and two variants
    never look the same, a name outside the table included;
  * every variant measured at a shape in a bench or sweep input is drawn at
    that shape (its bars, a stage sweep or the size sweep), every profiled
    kernel is in the stall chart, and every variant of every input is named
    on the page;
  * shapes go by size (M*N*K, then M, N, K) wherever a page lists them;
  * `make report` draws the committed bench/results/report/h200-report.md
    from committed H200 runs in the question folders of bench/results/ (every
    profile and inspect CSV among them), and the committed page is that
    page, every picture it names beside it.
CTest runs it (report_styles); it exits 77 where the scripts find no
matplotlib (python3's own, or .deps/python's that `make deps` fetches), and
fails there instead where the environment variable CI is set. Standard
library, and matplotlib through scripts/drawing.py.
"""

import csv
import glob
import importlib.util
import io
import json
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
    # report.py imports drawing.py from beside it.
    scripts = os.path.join(SOURCE, "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    path = os.path.join(scripts, "report.py")
    spec = importlib.util.spec_from_file_location("report", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def describing(log):
    """The environment in which scripts/drawing.py describes every PNG it
    saves in log (PG_PLOT_LOG)."""
    env = dict(os.environ)
    env["PG_PLOT_LOG"] = log
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


def variant_of(title):
    """cp_async (2) -> cp_async; cublas (strict FP32) 50.3 -> cublas."""
    return title.split(" (")[0].split(" ")[0]


class Plot:
    """One drawn PNG, from its description: per variant the looks of its
    lines and the x values (shape indices or stage counts) they mark, and
    the colours of its bars."""

    def __init__(self, described, peak_color):
        self.png = described["png"]
        axes = described["axes"][0]
        self.looks = {}   # variant -> {(colour, dash, marker, hollow)}
        self.levels = {}  # variant -> {(colour, dash)}: lines without markers
        self.colors = {}  # variant -> {colour} (bars: no dash or marker)
        self.xs = {}      # variant -> {x}
        for line in axes["lines"]:
            if line["color"] == peak_color:  # the FFMA peak: no variant
                continue
            variant = variant_of(line["label"])
            if line["marker"] in ("None", "none", ""):
                self.levels.setdefault(variant, set()).add((line["color"], line["dash"]))
                continue
            self.looks.setdefault(variant, set()).add(
                (line["color"], line["dash"], line["marker"], line["hollow"]))
            self.xs.setdefault(variant, set()).update(x for x in line["x"] if x is not None)
        # A tick's first line: the shape, without the multiply-adds below it.
        self.tics = [(label.split("\n")[0], round(x)) for x, label in axes["xticks"]]
        if self.kind() == "tflops":
            names = dict((i, label) for label, i in self.tics)
            for bar in axes["bars"]:
                variant = variant_of(names[round(bar["x"] + bar["width"] / 2)])
                self.colors.setdefault(variant, set()).add(bar["color"])
        self.stall_labels = [label for label, _ in self.tics] if self.kind() == "stalls" else []

    def kind(self):
        found = re.search(r"-(tflops|stages|sizes-x-cublas|sizes|stalls)", self.png)
        return found.group(1) if found else None

    def shape(self):
        found = re.search(r"-(?:tflops|stages)-(\d+x\d+x\d+)", self.png)
        return found.group(1) if found else None


def read_plots(log, report):
    plots = []
    for path in sorted(glob.glob(os.path.join(log, "*.png.json"))):
        with open(path, encoding="utf-8") as handle:
            plots.append(Plot(json.load(handle), report.PEAK_COLOR))
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
        looks, levels = {}, {}
        for plot in self.plots:
            for variant, seen in plot.looks.items():
                looks.setdefault(variant, set()).update(seen)
            for variant, seen in plot.levels.items():
                levels.setdefault(variant, set()).update(seen)
        self.assertTrue(looks, "no variant drawn as a line")
        table = self.report.VARIANT_STYLES
        for variant, seen in looks.items():
            self.assertEqual(len(seen), 1, f"{variant} has several looks: {seen}")
            if variant in table:
                style = table[variant]
                self.assertEqual(seen, {(style.color.lower(), style.dash, style.marker,
                                         style.hollow)},
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
        # A line without markers (cuBLAS's level over the bars) has its
        # variant's colour and dash.
        for variant, seen in levels.items():
            full = looks.get(variant) or (
                {(table[variant].color.lower(), table[variant].dash)} if variant in table else set())
            self.assertEqual(seen, {look[:2] for look in full},
                             f"{variant}'s lines without markers differ from its look")
        for plot in self.plots:
            for variant, colors in plot.colors.items():
                line_colors = {look[0] for look in
                               looks.get(variant, set()) | levels.get(variant, set())}
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

    def test_every_row_is_a_registry_variant(self):
        """No row for a variant the registry lost or renamed. A new variant
        needs none: until it gets one, it is drawn in a look of its own
        (test_unknown_names_keep_a_look_apart_from_the_table), so a variant
        stays one kernel file and one line of src/variants.h."""
        if not PIPEGEMM:
            self.skipTest("no pipegemm given")
        listed = subprocess.run([PIPEGEMM, "list", "--format", "csv"], capture_output=True,
                                text=True, check=False)
        rows = csv.DictReader(io.StringIO("".join(
            line + "\n" for line in listed.stdout.splitlines() if not line.startswith("#"))))
        names = [row["name"] for row in rows]
        self.assertGreater(len(names), 10, listed.stdout + listed.stderr)
        stale = sorted(set(self.report.VARIANT_STYLES) - set(names))
        self.assertEqual(stale, [], "VARIANT_STYLES has rows for variants the registry lacks")

    def test_no_two_rows_share_a_colour_or_a_look(self):
        styles = list(self.report.VARIANT_STYLES.values())
        colors = [s.color.lower() for s in styles]
        self.assertEqual(len(set(colors)), len(colors), "two variants share a colour")
        self.assertEqual(len(set(styles)), len(styles), "two variants share a look")
        greys = {self.report.PEAK_COLOR} | {c for _, _, c in self.report.STALL_KEYS}
        self.assertFalse(set(colors) & greys, "a variant has a colour kept for other lines")

    def test_tile_forms_take_their_looks_from_their_list(self):
        """tma_ws's tile forms are no rows of the table: it takes them from
        their list (TWS_FORMS, src/kernels/tma_ws.h), form i in FORM_LOOKS[i],
        so that a form is one line there and keeps one look."""
        forms = self.report.tile_forms()
        self.assertIn("tma_ws_splitk", forms)
        self.assertEqual(len(set(forms)), len(forms), "a form twice in TWS_FORMS")
        for form, look in zip(forms, self.report.FORM_LOOKS):
            self.assertEqual(self.report.variant_style(form), look, form)
        looks = self.report.FORM_LOOKS
        self.assertEqual(len(set(s.color.lower() for s in looks)), len(looks),
                         "two looks of FORM_LOOKS share a colour")
        others = {s.color.lower() for name, s in self.report.VARIANT_STYLES.items()
                  if name not in forms}
        self.assertFalse(others & {s.color.lower() for s in looks},
                         "a look of FORM_LOOKS has another variant's colour")

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
        log = os.path.join(base, "plots")
        env = describing(log)
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
        cls.plots = read_plots(log, cls.report)
        cls.inputs = [(kind, path) for path, kind in
                      re.findall(r"^- `([^`]+)` \((\w+)\)", cls.md, re.M)]

    def test_every_committed_profile_and_inspect_csv_is_an_input(self):
        named = {path for _, path in self.inputs}
        for path in sorted(glob.glob("bench/results/*/*.csv")):
            with open(path, encoding="utf-8") as handle:
                head = handle.read(4096)
            if re.search(r"^# report: pipegemm (profile|inspect)$", head, re.M):
                self.assertIn(path, named, f"make report leaves out {path}")

    def test_every_input_is_a_committed_run_of_a_question(self):
        self.assertTrue(self.inputs, "the page names no input")
        for _, path in self.inputs:
            self.assertRegex(path, r"^bench/results/[a-z0-9-]+/[^/]+$",
                             f"{path} is not in a question's folder of bench/results")
            self.assertTrue(os.path.isfile(path), f"{path} is not there")
            self.assertNotRegex(path, r"^bench/results/report/",
                                "the report draws from the questions' runs, not its own folder")

    def test_tma_tma_ws_and_auto_are_on_the_page(self):
        drawn = {v for plot in self.plots for v in list(plot.looks) + list(plot.colors)}
        for variant in ("tma", "tma_ws", "auto"):
            self.assertIn(variant, drawn)

    def test_the_committed_page_is_this_page(self):
        with open("bench/results/report/h200-report.md", encoding="utf-8") as handle:
            committed = handle.read()
        self.assertEqual(committed, self.md, "bench/results/report/h200-report.md is not "
                         "what `make report` draws now: run `make report` and commit it")
        drawn = sorted(os.listdir(self.out))
        for png in re.findall(r"\]\(([^)]+\.png)\)", self.md):
            self.assertTrue(os.path.exists(os.path.join("bench/results/report", png)),
                            f"the committed page names {png}, which is not there")
        committed_pngs = sorted(f for f in os.listdir("bench/results/report")
                                if f.endswith(".png"))
        self.assertEqual(committed_pngs, [f for f in drawn if f.endswith(".png")],
                         "bench/results/report/ holds other pictures than `make report` draws")


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
        log = os.path.join(base, "plots")
        env = describing(log)
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
        cls.plots = read_plots(log, cls.report)
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
        os.makedirs(base)
        log = os.path.join(base, "plots")
        env = describing(log)
        png = os.path.join(base, "sweep.png")
        done = subprocess.run(["bash", os.path.join(SOURCE, "scripts", "plot-stages.sh"),
                               os.path.join(SOURCE, "tests", "stage_sweep.csv"), png],
                              env=env, capture_output=True, text=True, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        plots = read_plots(log, report)
        self.assertEqual(len(plots), 1)
        self.assertEqual(set(plots[0].looks), {"cublas", "baseline", "pingpong", "cp_async",
                                               "pipeline_block"})
        for variant, seen in plots[0].looks.items():
            style = report.VARIANT_STYLES[variant]
            self.assertEqual(seen, {(style.color, style.dash, style.marker, style.hollow)},
                             variant)


def require_matplotlib():
    """Exits 77 (skipped) where the scripts find no matplotlib, or 1 where CI
    is set: there `make deps` fetches it, and a check that cannot run must
    not pass."""
    load_report_module()  # which puts scripts/ on the path
    import drawing
    try:
        drawing.pyplot()
    except drawing.Missing as err:
        if os.environ.get("CI"):
            print(f"test_report: FAIL: {err} (with CI set)")
            sys.exit(1)
        print(f"skipped: {err}")
        sys.exit(77)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        print("usage: test_report.py SOURCE_DIR PIPEGEMM|- OUT_DIR [unittest options]",
              file=sys.stderr)
        sys.exit(2)
    SOURCE = os.path.abspath(sys.argv[1])
    PIPEGEMM = None if sys.argv[2] == "-" else os.path.abspath(sys.argv[2])
    OUT = os.path.abspath(sys.argv[3])
    require_matplotlib()
    os.chdir(SOURCE)
    unittest.main(argv=[sys.argv[0]] + sys.argv[4:])
