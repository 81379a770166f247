"""Pictures as SVG text, in pure Python (no NumPy, no matplotlib): what the live page draws.

    layout_svg(L)                 grid of L(m, n), coloured by offset, labelled with the offset
    tv_svg(tv, (M, N))            which thread and value own each element of an M x N tile
    bank_svg(L, elem_bytes, access)   each element coloured by its shared-memory bank, accessed cells outlined
    grid_svg(rows, cols, cell)    the one drawing routine the others fill in

They look like cutelite.teach.viz's matplotlib figures (same colour maps, same labelling rule: numbers
up to MAX_LABELS cells, colours only beyond), so a reader sees the same picture in the notebook and on
the live page. Rows m go down, columns n go across, (0, 0) top left, as print_layout prints.
"""

import colorsys
import html

from ..layout import rank, size

__all__ = ["layout_rows", "layout_svg", "tv_svg", "bank_svg", "grid_svg", "viridis", "thread_colour"]

MAX_LABELS = 16 * 16  # as viz.MAX_LABELS: beyond this many cells, colours only

# matplotlib's viridis at 0, 0.1, ..., 1; colours in between are interpolated linearly.
_VIRIDIS = ["#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c",
            "#22a884", "#44bf70", "#7ad151", "#bddf26", "#fde725"]
# matplotlib's tab20 then tab20b: the thread colours of viz.draw_tv_layout.
_TAB40 = ("#1f77b4 #aec7e8 #ff7f0e #ffbb78 #2ca02c #98df8a #d62728 #ff9896 #9467bd #c5b0d5 "
          "#8c564b #c49c94 #e377c2 #f7b6d2 #7f7f7f #c7c7c7 #bcbd22 #dbdb8d #17becf #9edae5 "
          "#393b79 #5254a3 #6b6ecf #9c9ede #637939 #8ca252 #b5cf6b #cedb9c #8c6d31 #bd9e39 "
          "#e7ba52 #e7cb94 #843c39 #ad494a #d6616b #e7969c #7b4173 #a55194 #ce6dbd #de9ed6").split()


def _rgb(hex_colour):
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def viridis(x):
    """The viridis colour of x in [0, 1], as "#rrggbb"."""
    x = min(max(x, 0.0), 1.0) * (len(_VIRIDIS) - 1)
    i = min(int(x), len(_VIRIDIS) - 2)
    lo, hi, f = _rgb(_VIRIDIS[i]), _rgb(_VIRIDIS[i + 1]), x - i
    return "#" + "".join(f"{round(a + (b - a) * f):02x}" for a, b in zip(lo, hi))


def thread_colour(t, threads):
    """The colour of thread t among `threads` (as viz._thread_colours: tab20, or every third of 40)."""
    return _TAB40[(t * 3) % 40] if threads > 20 else _TAB40[t % 20]


def _ink(fill):
    """Black or white text on `fill`, by its brightness (as viz._labels)."""
    r, g, b = (c / 255 for c in _rgb(fill))
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def layout_rows(layout):
    """The offsets of a rank-1 or rank-2 layout as a list of rows: rows[m][n] = L(m, n) (rank 1: one row)."""
    r = rank(layout)
    if r == 1:
        return [[layout(n) for n in range(size(layout))]]
    if r != 2:
        raise ValueError(f"draw: needs a rank-1 or rank-2 layout, got {layout} of rank {r} "
                         "(group modes, e.g. cutelite.group(L, 1), to draw it)")
    return [[layout(m, n) for n in range(size(layout, 1))] for m in range(size(layout, 0))]


def grid_svg(rows, cols, cell, title="", size_px=None, outlined=()):
    """An SVG grid: cell(m, n) gives (fill colour, label text or "", tooltip); `outlined` cells get a
    black border. Cells are square; the picture is at most size_px wide (default: 28 px a cell, capped)."""
    px = size_px or min(28 * cols, 560)
    c = max(4.0, min(28.0, px / cols))
    top, left = 18 if title else 2, 2
    w, h = left + c * cols + 2, top + c * rows + 2
    font = max(5.0, min(11.0, c * 0.42))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="cutelite-svg" width="{w:.0f}" height="{h:.0f}" '
           f'viewBox="0 0 {w:.1f} {h:.1f}" font-family="sans-serif" font-size="{font:.1f}">']
    if title:
        out.append(f'<text x="{left}" y="12" font-size="11">{html.escape(title)}</text>')
    labels, lines = [], []
    for m in range(rows):
        for n in range(cols):
            fill, label, tip = cell(m, n)
            x, y = left + n * c, top + m * c
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{c:.1f}" height="{c:.1f}" fill="{fill}" '
                       f'stroke="white" stroke-width="0.6"><title>{html.escape(tip)}</title></rect>')
            if label:
                parts = label.split("\n")
                for k, part in enumerate(parts):
                    dy = (k - (len(parts) - 1) / 2) * font
                    labels.append(f'<text x="{x + c / 2:.1f}" y="{y + c / 2 + dy:.1f}" fill="{_ink(fill)}" '
                                  f'text-anchor="middle" dominant-baseline="central">{html.escape(part)}</text>')
    for m, n in outlined:
        lines.append(f'<rect x="{left + n * c:.1f}" y="{top + m * c:.1f}" width="{c:.1f}" height="{c:.1f}" '
                     'fill="none" stroke="black" stroke-width="1.4"/>')
    return "".join(out + labels + lines + ["</svg>"])


def layout_svg(layout, title=None, labels=None):
    """draw_layout as SVG: a rank-1/2 layout (plain or swizzled) as cells coloured by offset (viridis),
    labelled with the offset up to MAX_LABELS cells."""
    grid = layout_rows(layout)
    rows, cols = len(grid), len(grid[0])
    vmax = max(max(max(row) for row in grid), 1)
    show = rows * cols <= MAX_LABELS if labels is None else labels

    def cell(m, n):
        v = grid[m][n]
        return viridis(v / vmax), str(v) if show else "", f"({m},{n}) -> {v}"
    return grid_svg(rows, cols, cell, str(layout) if title is None else title)


def tv_svg(tv_layout, tile_shape, title=None, lanes=None):
    """draw_tv_layout as SVG: element (m, n) of an M x N tile (index m + n*M) shows "T{t} V{v}" of the
    (thread, value) that tv maps to it, coloured by thread. lanes(t) renames thread t (e.g. an atom's
    ThrID); elements reached twice get a "+", elements never reached stay white."""
    M, N = (tile_shape, 1) if isinstance(tile_shape, int) else tuple(tile_shape)
    threads = size(tv_layout, 0)
    values = size(tv_layout, 1) if rank(tv_layout) > 1 else 1
    owner = {}
    for t in range(threads):
        for v in range(values):
            idx = tv_layout(t, v) if rank(tv_layout) > 1 else tv_layout(t)
            if not 0 <= idx < M * N:
                raise ValueError(f"draw_tv_layout: {tv_layout}({t},{v}) = {idx} is outside the {M}x{N} tile")
            key = (idx % M, idx // M)
            owner[key] = (t, v, key in owner)
    show = M * N <= MAX_LABELS

    def cell(m, n):
        if (m, n) not in owner:
            return "#ffffff", "", f"({m},{n}): no thread"
        t, v, twice = owner[(m, n)]
        name = lanes(t) if lanes else t
        label = f"T{name}\nV{v}" + ("+" if twice else "")
        return thread_colour(t, threads), label if show else "", f"({m},{n}): T{name} V{v}"
    return grid_svg(M, N, cell, f"{tv_layout} on a {M}x{N} tile" if title is None else title)


def bank_svg(layout, elem_bytes=4, access=(), title=None, banks=32):
    """draw_banks as SVG: each element of a rank-2 layout coloured by the bank of its first byte (hsv,
    light); the cells of `access` (coordinates, or lists of coordinates per lane) outlined."""
    from ..bank_conflicts import bank_grid
    grid = bank_grid(layout, elem_bytes)
    rows, cols = len(grid), len(grid[0])

    def colour(bank):
        r, g, b = colorsys.hsv_to_rgb(bank / banks, 1.0, 1.0)
        return "#" + "".join(f"{round(255 * (0.45 + 0.55 * x)):02x}" for x in (r, g, b))

    def cell(m, n):
        bank = grid[m][n]
        return colour(bank), str(bank) if rows * cols <= 512 else "", f"({m},{n}): bank {bank}"
    outlined = []
    for a in access or ():
        outlined += a if isinstance(a, list) else [a] if a is not None else []
    return grid_svg(rows, cols, cell, title or f"{layout}: bank of each element ({elem_bytes}-byte elements)",
                    outlined=outlined)
