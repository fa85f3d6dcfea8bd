#!/usr/bin/env python3
"""matplotlib for the scripts that draw (report.py, timeline.py): python3's
own, else the copy that scripts/deps.sh fetched into .deps/python of this
repository, so that `make report` works after `make deps` with nothing set.
Pictures are PNG files from the Agg backend: no display needed.

    scripts/drawing.py    where matplotlib comes from ("3.8.2: DIR"), exit 0;
                          else the one line saying it is missing, exit 3
                          (scripts/deps.sh asks it so)

PG_PLOT_LOG=DIR: each PNG that save() writes also gets DIR/NAME.png.json,
what it shows read back from the figure's artists: per axes the title,
labels and x ticks, every labelled line (colour, dash, marker, hollow or
filled, points) and every bar (where, how big, colour).
tests/test_report.py checks the plots with it.

Standard library and matplotlib (3.5 or later) only.
"""

import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPS = os.path.join(ROOT, ".deps", "python")
MISSING = "drawing needs matplotlib: run make deps, or pip install matplotlib"
DPI = 100
# One look of text in every picture, whatever the machine's matplotlibrc.
STYLE = {"font.family": "DejaVu Sans", "font.size": 10, "axes.titlesize": 10.5,
         "legend.fontsize": 9.5, "axes.linewidth": 0.8, "savefig.facecolor": "white",
         # A margin round the picture (inches), so that the title is not at the edge.
         "figure.constrained_layout.h_pad": 0.12, "figure.constrained_layout.w_pad": 0.12}


class Missing(Exception):
    """No usable matplotlib: one line for the user, exit 3."""


def import_pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    matplotlib.rcParams.update(STYLE)
    return plt


def pyplot():
    """matplotlib.pyplot on Agg: python3's own, else the one in .deps/python."""
    failure = None
    for path in ([], [DEPS] if os.path.isdir(DEPS) else []):
        sys.path[:0] = path
        before = set(sys.modules)
        try:
            return import_pyplot()
        except ImportError as err:
            failure = err
            # What a broken install left half-imported must not shadow the
            # next try.
            for name in set(sys.modules) - before:
                del sys.modules[name]
    # One line: numpy, for one, explains a failed import over a page, whose
    # last line is the cause.
    cause = ([line.strip() for line in str(failure).splitlines() if line.strip()] or [""])[-1]
    raise Missing(MISSING + ("" if failure.name == "matplotlib" else f" (here: {cause})"))


def figure(plt, width, height):
    """A figure of width x height pixels whose layout keeps labels and
    legends outside the axes inside the picture."""
    return plt.subplots(figsize=(width / DPI, height / DPI), dpi=DPI,
                        constrained_layout=True)


def save(plt, fig, png):
    """Writes fig to png in place of what was there (no date or version in
    the file, so the same input gives the same bytes), and its description
    where PG_PLOT_LOG says; closes fig."""
    try:
        if os.path.exists(png):
            os.remove(png)
        fig.savefig(png, dpi=DPI, metadata={"Software": None})
        log = os.environ.get("PG_PLOT_LOG")
        if log:
            os.makedirs(log, exist_ok=True)
            with open(os.path.join(log, os.path.basename(png) + ".json"), "w",
                      encoding="utf-8") as handle:
                json.dump(describe(fig, png), handle, indent=1)
    finally:
        plt.close(fig)


def describe(fig, png):
    """What fig shows, from its artists (after drawing, so ticks are set)."""
    return {"png": os.path.basename(png), "axes": [describe_axes(ax) for ax in fig.axes]}


def describe_axes(ax):
    """One axes' title, labels and x ticks, labelled lines and bars."""
    from matplotlib.colors import to_hex
    lines = []
    for line in ax.get_lines():
        if line.get_label().startswith("_"):
            continue
        lines.append({"label": line.get_label(), "color": to_hex(line.get_color()),
                      "dash": line.get_linestyle(), "marker": str(line.get_marker()),
                      "hollow": str(line.get_markerfacecolor()).lower() == "none",
                      "x": finite(line.get_xdata()), "y": finite(line.get_ydata())})
    bars = [{"label": container.get_label(), "x": float(patch.get_x()),
             "y": float(patch.get_y()), "width": float(patch.get_width()),
             "height": float(patch.get_height()), "color": to_hex(patch.get_facecolor())}
            for container in ax.containers for patch in container.patches]
    return {"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
            "xticks": [[float(x), label.get_text()]
                       for x, label in zip(ax.get_xticks(), ax.get_xticklabels())],
            "lines": lines, "bars": bars}


def finite(values):
    """Numbers for JSON: a gap in a line (NaN) is null."""
    return [float(v) if math.isfinite(v) else None for v in values]


def main():
    try:
        pyplot()
    except Missing as err:
        print(f"drawing.py: {err}", file=sys.stderr)
        return 3
    import matplotlib
    print(f"{matplotlib.__version__}: {os.path.dirname(matplotlib.__file__)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
