"""The one look of each variant in every plot of scripts/report.py (and of
scripts/plot-stages.sh, which is report.py's --stage-plot): its colour, dash
and marker, hollow or filled, by name, and the greys of the lines that are
no variant. tma_ws's tile forms take theirs from their list, TWS_FORMS in
src/kernels/tma_ws.h, in its order. Standard library only."""
import collections
import os
import re
import zlib

# One look per variant, the same in every plot, so a reader who learnt
# tma_ws's red on one chart finds it on the next: the colour (bars and
# lines), the dash and the marker, hollow or filled (lines). Every variant of
# the registry has a row (tma_ws's tile forms from their list: FORM_LOOKS,
# below); tests/test_report.py holds the table to `pipegemm list` and checks
# that no two rows share a colour. Kernels are solid; the
# cuBLAS reference is black and dashed; auto, which runs one of the others,
# is dash-dot so that it shows on top of the kernel it chose. Dashes and
# markers are matplotlib's.
Style = collections.namedtuple("Style", "color dash marker hollow", defaults=(False,))
VARIANT_STYLES = {
    "cublas": Style("#000000", "--", "o", hollow=True),
    "tiled32": Style("#bcbd22", "-", "s", hollow=True),
    "tiled32_db": Style("#8c6d31", "-", "s"),        # square
    "baseline": Style("#8c564b", "-", "o"),          # circle
    "pingpong": Style("#e377c2", "-", "^"),          # triangle
    "cp_async": Style("#1f77b4", "-", "s"),
    "pipeline_thread": Style("#17becf", "-", "v"),   # triangle down
    "pipeline_block": Style("#9467bd", "-", "D"),    # diamond
    "barrier": Style("#ff7f0e", "-", "p"),           # pentagon
    "mbarrier": Style("#2ca02c", "-", "o"),
    "warp_specialized": Style("#393b79", "-", "^"),
    "tma": Style("#7b4173", "-", "s"),
    "tma_ws": Style("#d62728", "-", "o"),
    # tma_ws's tile forms: FORM_LOOKS, below.
    "tma_ws_streamk": Style("#8c2d04", "-", "D"),
    "auto": Style("#e7298a", "-.", "*"),             # star
    # The tensor-core regime: cuBLAS TF32 dotted (the reference of TF32
    # rows, as cublas is of strict ones), auto_tf32 dash-dot as auto.
    "cublas_tf32": Style("#08306b", ":", "o", hollow=True),
    "mma_cp_async": Style("#a55194", "-", "s"),
    "wgmma_sync": Style("#637939", "-", "o"),
    "wgmma_cp_async": Style("#3182bd", "-", "v"),
    "wgmma_tma": Style("#843c39", "-", "D"),
    "wgmma_tma_ws": Style("#e6550d", "-", "o"),
    "wgmma_tma_ws_wait0": Style("#fdae6b", "-", "^"),
    "wgmma_tma_coop": Style("#31a354", "-", "p"),
    "wgmma_tma_coop_n256": Style("#756bb1", "-", "s"),
    "wgmma_tma_rs": Style("#ce6dbd", "-", "^"),
    "wgmma_tma_rs_persistent": Style("#9e9ac8", "-", "D"),
    "wgmma_tma_pingpong": Style("#a1d99b", "--", "p"),
    "wgmma_tma_rs_multicast": Style("#dd3497", "--", "^"),
    "auto_tf32": Style("#c51b7d", "-.", "*"),
}
# The tile forms of tma_ws are a list of their own, one line a form
# (TWS_FORMS in src/kernels/tma_ws.h), which the table takes in its order:
# form i is drawn in FORM_LOOKS[i], so that a form added there has a look of
# the table's without a row here (past the last look, a fallback look, as
# any name the table lacks).
TILE_FORMS_HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src",
                                 "kernels", "tma_ws.h")
FORM_LOOKS = [Style("#fd8d3c", "-", "v"), Style("#74c476", "-", "^"),
              Style("#6baed6", "-", "p"), Style("#08519c", "--", "h"),
              Style("#d6616b", "-", "s"), Style("#9c9ede", "--", "s"),
              Style("#8ca252", "--", "D"), Style("#e7cb94", "--", "v"),
              Style("#e7969c", "--", "p"), Style("#b5cf6b", "-", "v"),
              Style("#c6dbef", "--", "o"), Style("#cedb9c", "-", "h")]


def tile_forms(header=TILE_FORMS_HEADER):
    """The names of tma_ws's tile forms, in TWS_FORMS's order: the first
    field of each FORM(...) line of the header ([] where it is not there)."""
    try:
        with open(header, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return []
    return re.findall(r"^[ \t]*FORM\(([a-z0-9_]+),", text, re.M)


VARIANT_STYLES.update(zip(tile_forms(), FORM_LOOKS))

# A name the table lacks (a new variant, a renamed one) still keeps one look
# from plot to plot and run to run: a hash picks colour and hollow marker,
# and the dots, which no row of the table uses, tell it from every variant
# there. Two such names may meet on one look: give them rows above.
FALLBACK_DASH = ":"
FALLBACK_COLORS = ["#e6550d", "#31a354", "#3182bd", "#756bb1", "#bd9e39",
                   "#a55194", "#843c39", "#637939"]
FALLBACK_MARKERS = ["s", "o", "^", "v", "D", "p"]
# Markers of one apparent size: a star or a diamond drawn at the size of a
# circle looks smaller or larger than it.
MARKER_SIZES = {"*": 11, "D": 6, "p": 8}
MARKER_SIZE = 7

# Lines that are no variant: greys, which no variant uses.
PEAK_COLOR = "#7f7f7f"
GRID_COLOR = "#dddddd"
# Stall rows of the profile table, drawn as a chart in greys: there a colour
# means a kind of stall, and the variants are the x axis.
STALL_KEYS = [("stall_wait", "wait", "#e0e0e0"),
              ("stall_long_scoreboard", "long scoreboard", "#969696"),
              ("stall_barrier", "barrier", "#404040")]


def variant_style(name):
    """The one look of a variant in every plot (see VARIANT_STYLES)."""
    style = VARIANT_STYLES.get(name)
    if style is not None:
        return style
    code = zlib.crc32(name.encode("utf-8"))
    return Style(FALLBACK_COLORS[code % len(FALLBACK_COLORS)], FALLBACK_DASH,
                 FALLBACK_MARKERS[(code // len(FALLBACK_COLORS)) % len(FALLBACK_MARKERS)],
                 hollow=True)


def line_style(name, width=2, markers=True):
    """matplotlib's line properties of a variant: its colour and dash, and
    its marker unless the line marks no points (a level)."""
    style = variant_style(name)
    words = {"color": style.color, "linestyle": style.dash, "linewidth": width}
    if markers:
        words.update(marker=style.marker, markersize=MARKER_SIZES.get(style.marker, MARKER_SIZE),
                     markeredgecolor=style.color, markeredgewidth=1.3,
                     markerfacecolor="none" if style.hollow else style.color)
    return words
