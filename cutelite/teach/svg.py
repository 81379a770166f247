"""Pictures as SVG text, in pure Python (no NumPy, no matplotlib): what the live page draws.

    layout_svg(L)                 grid of L(m, n), coloured by offset, labelled with the offset
    tv_svg(tv, (M, N))            which thread and value own each element of an M x N tile
    tiled_mma_svg(mma)            print_latex's picture of a TiledMMA: A left of C, B above C
    tiled_copy_svg(copy)          print_latex's picture of a TiledCopy: source and destination side by side
    bank_svg(L, elem_bytes, access)   each element coloured by its shared-memory bank, accessed cells outlined
    timeline_svg(rows)            what each pipeline stage holds, iteration by iteration (teach.gemm.stage_timeline)
    chunks_svg(chunks)            a shared-memory tile in 16-byte chunks, coloured by the group of banks each lands in
    softmax_svg(x, now, final, block)  one row of the online softmax: scores, weights so far, the final softmax
    grid_svg(rows, cols, cell)    the one drawing routine the others fill in

They look like cutelite.teach.viz's matplotlib figures (same colour maps, same labelling rule: numbers
up to MAX_LABELS cells, colours only beyond), so a reader sees the same picture in the notebook and on
the live page. Rows m go down, columns n go across, (0, 0) top left, as print_layout prints.
"""

import colorsys
import html

from ..bank_conflicts import _need_count, access_cells
from ..errors import check_cells, quote
from ..int_tuple import flatten, is_int, wrap
from ..layout import _need_int_strides, _need_layout, rank, size

__all__ = ["layout_rows", "layout_svg", "tv_svg", "bank_svg", "grid_svg", "panels_svg", "viridis", "thread_colour",
           "tv_offsets", "tv_owners", "tiled_mma_svg", "tiled_copy_svg", "mma_panels", "copy_panels", "timeline_svg",
           "STATE_COLOURS", "chunks_svg", "softmax_svg"]

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
    """The viridis colour of x in [0, 1] (clamped), as "#rrggbb"."""
    if not isinstance(x, (int, float)) or isinstance(x, bool) or x != x:
        raise TypeError(f"viridis: x must be a number in [0, 1], got {quote(x)}")
    x = min(max(x, 0.0), 1.0) * (len(_VIRIDIS) - 1)
    i = min(int(x), len(_VIRIDIS) - 2)
    lo, hi, f = _rgb(_VIRIDIS[i]), _rgb(_VIRIDIS[i + 1]), x - i
    return "#" + "".join(f"{round(a + (b - a) * f):02x}" for a, b in zip(lo, hi))


def thread_colour(t, threads):
    """The colour of thread t among `threads` (as viz._thread_colours: tab20, or every third of 40)."""
    _need_count(t, "thread_colour", "t")
    _need_count(threads, "thread_colour", "threads", low=1)
    return _TAB40[(t * 3) % 40] if threads > 20 else _TAB40[t % 20]


def _ink(fill):
    """Black or white text on `fill`, by its brightness (as viz._labels)."""
    r, g, b = (c / 255 for c in _rgb(fill))
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def layout_rows(layout):
    """The offsets of a rank-1 or rank-2 layout as a list of rows: rows[m][n] = L(m, n) (rank 1: one row)."""
    _need_layout(layout, "draw", composed=True)
    r = rank(layout)
    if r == 1:
        check_cells(1, size(layout), "draw")
        return [[layout(n) for n in range(size(layout))]]
    if r != 2:
        raise ValueError(f"draw: needs a rank-1 or rank-2 layout, got {layout} of rank {r} "
                         "(group modes, e.g. cutelite.group(L, 1), to draw it)")
    check_cells(size(layout, 0), size(layout, 1), "draw")
    return [[layout(m, n) for n in range(size(layout, 1))] for m in range(size(layout, 0))]


def _n(x):
    """A coordinate as short text: 18 for 18.0, 18.5 for 18.5."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _cells(rows, cols, cell, x0, y0, c, font, labels, outlined=()):
    """The <rect> and <text> elements of a rows x cols grid whose top-left corner is (x0, y0), cells c
    pixels wide; label <text>s are appended to `labels` (drawn last, above every rect). Shared
    attributes sit on <g> groups, which keeps a picture of a few thousand cells small."""
    out = ['<g stroke="white" stroke-width="0.6">']
    text = ['<g text-anchor="middle" dominant-baseline="central">']
    cs = _n(c)
    for m in range(rows):
        for n in range(cols):
            fill, label, tip = cell(m, n)
            x, y = x0 + n * c, y0 + m * c
            out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{cs}" height="{cs}" fill="{fill}">'
                       f'<title>{html.escape(tip)}</title></rect>')
            if label:
                ink = "" if _ink(fill) == "black" else ' fill="white"'
                parts = label.split("\n")
                for k, part in enumerate(parts):
                    dy = (k - (len(parts) - 1) / 2) * font
                    text.append(f'<text x="{_n(x + c / 2)}" y="{_n(y + c / 2 + dy)}"{ink}>{html.escape(part)}</text>')
    out.append("</g>")
    if len(text) > 1:
        labels.append("".join(text) + "</g>")
    for m, n in outlined:
        labels.append(f'<rect x="{_n(x0 + n * c)}" y="{_n(y0 + m * c)}" width="{cs}" height="{cs}" '
                      'fill="none" stroke="black" stroke-width="1.4"/>')
    return out


def _font(c):
    return max(5.0, min(11.0, c * 0.42))


def grid_svg(rows, cols, cell, title="", size_px=None, outlined=()):
    """An SVG grid: cell(m, n) gives (fill colour, label text or "", tooltip); `outlined` cells get a
    black border. Cells are square; the picture is at most size_px wide (default: 28 px a cell, capped)."""
    _need_count(rows, "grid_svg", "rows", low=1)
    _need_count(cols, "grid_svg", "cols", low=1)
    check_cells(rows, cols, "grid_svg")
    if not callable(cell):
        raise TypeError(f"grid_svg: cell must be a function (m, n) -> (fill, label, tooltip), got {quote(cell)}")
    if size_px is not None:
        _need_count(size_px, "grid_svg", "size_px", low=1)
    px = size_px or min(28 * cols, 560)
    c = max(4.0, min(28.0, px / cols))
    top, left = 18 if title else 2, 2
    w, h = left + c * cols + 2, top + c * rows + 2
    font = _font(c)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="cutelite-svg" width="{w:.0f}" height="{h:.0f}" '
           f'viewBox="0 0 {w:.1f} {h:.1f}" font-family="sans-serif" font-size="{font:.1f}">']
    if title:
        out.append(f'<text x="{left}" y="12" font-size="11">{html.escape(title)}</text>')
    labels = []
    out += _cells(rows, cols, cell, left, top, c, font, labels, outlined)
    return "".join(out + labels + ["</svg>"])


def panels_svg(panels, title="", cell_px=None, max_px=900):
    """Several grids in one SVG, placed on a common grid of cells: panels is a list of
    (rows, cols, cell, col0, row0, caption, outlined) with (col0, row0) the panel's top-left cell
    (captions take one cell row above the panel). Cells are cell_px wide (default: as large as fits
    max_px, at most 28)."""
    width = max(p[3] + p[1] for p in panels)
    height = max(p[4] + p[0] for p in panels)
    c = cell_px or max(4.0, min(28.0, max_px / max(width, 1)))
    font = _font(c)
    top, left = 18 if title else 2, 2
    w, h = left + c * width + 2, top + c * height + 2
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="cutelite-svg" width="{w:.0f}" height="{h:.0f}" '
           f'viewBox="0 0 {w:.1f} {h:.1f}" font-family="sans-serif" font-size="{font:.1f}">']
    if title:
        out.append(f'<text x="{left}" y="12" font-size="11">{html.escape(title)}</text>')
    labels = []
    for rows, cols, cell, col0, row0, caption, outlined in panels:
        x0, y0 = left + col0 * c, top + row0 * c
        if caption:
            out.append(f'<text x="{x0:.1f}" y="{y0 - 3:.1f}" font-size="10">{html.escape(caption)}</text>')
        out += _cells(rows, cols, cell, x0, y0, c, font, labels, outlined)
    return "".join(out + labels + ["</svg>"])


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


def tv_offsets(tv_layout):
    """rows[t][v] = tv_layout(t, v) for every thread t and value v (a rank-1 layout: one value each).
    Computed by walking the flattened modes, so a 128-thread tile takes about a millisecond."""
    _need_layout(tv_layout, "tv_offsets")
    _need_int_strides(tv_layout, "tv_offsets")
    check_cells(1, size(tv_layout), "tv_offsets")
    shape = [int(x) for x in wrap(flatten(tv_layout.shape))]
    stride = [int(x) for x in wrap(flatten(tv_layout.stride))]
    offs = [0]
    for n, d in zip(shape, stride):          # colexicographic: the first mode varies fastest
        offs = [o + i * d for i in range(n) for o in offs]
    threads = size(tv_layout, 0) if rank(tv_layout) > 1 else size(tv_layout)
    values = len(offs) // threads
    return [[offs[t + threads * v] for v in range(values)] for t in range(threads)]


def tv_owners(tv_layout, tile_shape, what="draw_tv_layout"):
    """{(m, n): (t, v, count)}: for each element of an M x N tile (index m + n*M) the first (thread,
    value) that tv maps there (smallest thread, then value: the one CuTe's print_latex shows, through
    right_inverse) and how many (t, v) reach it. Raises ValueError for an index outside the tile."""
    _need_layout(tv_layout, what)
    M, N = tile_mn(tile_shape, what)
    check_cells(M, N, what)
    owner = {}
    for t, row in enumerate(tv_offsets(tv_layout)):
        for v, idx in enumerate(row):
            if not 0 <= idx < M * N:
                raise ValueError(f"{what}: {tv_layout}({t},{v}) = {idx} is outside the {M}x{N} tile")
            key = (idx % M, idx // M)
            if key in owner:
                t0, v0, k = owner[key]
                owner[key] = (t0, v0, k + 1)
            else:
                owner[key] = (t, v, 1)
    return owner


def tile_mn(tile_shape, what):
    """(M, N) of a tile given as M or (M, N): positive ints."""
    mn = (tile_shape, 1) if is_int(tile_shape) else tile_shape
    if not (isinstance(mn, tuple) and len(mn) == 2 and all(is_int(x) and x > 0 for x in mn)):
        raise ValueError(f"{what}: the tile must be M or (M, N), positive ints, got {quote(tile_shape)}")
    return mn


def _owner_cell(owner, threads, show, lanes=None, transpose=False, name="", plus=True):
    def cell(m, n):
        key = (n, m) if transpose else (m, n)
        if key not in owner:
            return "#ffffff", "", f"{name}({key[0]},{key[1]}): no thread"
        t, v, count = owner[key]
        who = lanes(t) if lanes else t
        label = f"T{who}\nV{v}" + ("+" if plus and count > 1 else "")
        also = f" (and {count - 1} more)" if count > 1 else ""
        return thread_colour(t, threads), label if show else "", f"{name}({key[0]},{key[1]}): T{who} V{v}{also}"
    return cell


def tv_svg(tv_layout, tile_shape, title=None, lanes=None, thread=None):
    """draw_tv_layout as SVG: element (m, n) of an M x N tile (index m + n*M) shows "T{t} V{v}" of the
    (thread, value) that tv maps to it, coloured by thread. lanes(t) renames thread t (e.g. an atom's
    ThrID); elements reached twice get a "+" (and show the first thread), elements never reached stay white;
    `thread`'s cells are outlined."""
    M, N = tile_mn(tile_shape, "tv_svg")
    owner = tv_owners(tv_layout, (M, N), "tv_svg")
    cell = _owner_cell(owner, size(tv_layout, 0), M * N <= MAX_LABELS, lanes)
    return grid_svg(M, N, cell, f"{tv_layout} on a {M}x{N} tile" if title is None else title,
                    outlined=() if thread is None else _thread_cells(owner, thread))


def _thread_cells(owner, thread, transpose=False):
    return [(n, m) if transpose else (m, n) for (m, n), (t, _, _) in owner.items() if t == thread]


def mma_panels(mma):
    """The three grids of a TiledMMA's picture: {"A": (owners, (M, K)), "B": (owners, (N, K)),
    "C": (owners, (M, N)), "threads": the thread count of the TV layouts}, owners as tv_owners of
    get_layoutX_TV. The TV layouts count threads by index, so a Volta atom's 8 threads are lanes 0-3 and
    16-19 of 32 (lanes 4-15 repeat 0-3, and the picture shows the lower lane)."""
    from ..tiled import TiledMMA
    if not isinstance(mma, TiledMMA):
        raise TypeError(f"draw a TiledMMA: expected a TiledMMA (make_tiled_mma), got {quote(mma)}")
    M, N, K = (mma.tile_size_mnk(i) for i in range(3))
    tv_c = mma.get_layoutC_TV()
    return {"A": (tv_owners(mma.get_layoutA_TV(), (M, K)), (M, K)),
            "B": (tv_owners(mma.get_layoutB_TV(), (N, K)), (N, K)),
            "C": (tv_owners(tv_c, (M, N)), (M, N)), "threads": size(tv_c, 0)}


def picture_args(op, thread, size_px, what="max_px"):
    """TypeError or ValueError naming `op` unless thread is None or an int >= 0 and size_px a positive number."""
    if thread is not None:
        _need_count(thread, op, "thread")
    if not isinstance(size_px, (int, float)) or isinstance(size_px, bool) or not size_px > 0:
        raise ValueError(f"{op}: {what} must be a positive number, got {quote(size_px)}")


def tiled_mma_svg(mma, thread=None, title=None, labels=None, max_px=900):
    """print_latex(TiledMMA) as SVG: C (M x N) bottom right, A (M x K) to its left, B drawn K x N above
    it (CuTe keeps B as N x K; the picture turns it so that its columns line up with C's). Each cell
    shows "T{t} V{v}" of its first owner, coloured by thread, as print_latex does (no "+": the threads of
    other atoms along N hold the same A element, along M the same B element, and a Volta atom's lanes 4-15
    repeat lanes 0-3); `thread`'s cells are outlined. Labels when a cell is at least
    14 px (or as `labels` says)."""
    picture_args("tiled_mma_svg", thread, max_px)
    p = mma_panels(mma)
    (M, K), (N, _) = p["A"][1], p["B"][1]
    threads = p["threads"]
    width = K + 1 + N
    c = max(4.0, min(28.0, max_px / width))
    show = c >= 14 if labels is None else labels
    out = lambda op, tr=False: [] if thread is None else _thread_cells(p[op][0], thread, tr)  # noqa: E731
    panels = [(K, N, _owner_cell(p["B"][0], threads, show, transpose=True, name="B", plus=False), K + 1, 1,
               f"B ({K} x {N}: k down, n across)", out("B", True)),
              (M, K, _owner_cell(p["A"][0], threads, show, name="A", plus=False), 0, K + 2, f"A ({M} x {K})", out("A")),
              (M, N, _owner_cell(p["C"][0], threads, show, name="C", plus=False), K + 1, K + 2, f"C ({M} x {N})", out("C"))]
    return panels_svg(panels, title if title is not None else
                      f"TiledMMA {M}x{N}x{K}, {size(mma.thr_layout_vmnk)} threads",
                      cell_px=c)


def copy_panels(tiled_copy):
    """The two grids of a TiledCopy's picture: {"S": (owners, (M, N)), "D": (owners, (M, N))}."""
    from ..tiled import TiledCopy, tile_size
    if not isinstance(tiled_copy, TiledCopy):
        raise TypeError(f"draw a TiledCopy: expected a TiledCopy (make_tiled_copy), got {quote(tiled_copy)}")
    shape = (tile_size(tiled_copy, 0), tile_size(tiled_copy, 1))
    return {"S": (tv_owners(tiled_copy.get_layoutS_TV(), shape), shape),
            "D": (tv_owners(tiled_copy.get_layoutD_TV(), shape), shape)}


def tiled_copy_svg(tiled_copy, thread=None, title=None, labels=None, max_px=900):
    """print_latex(TiledCopy) as SVG: the source (thread, value) picture left, the destination right."""
    picture_args("tiled_copy_svg", thread, max_px)
    p = copy_panels(tiled_copy)
    M, N = p["S"][1]
    threads = size(tiled_copy.layout_tv, 0)
    c = max(4.0, min(28.0, max_px / (2 * N + 1)))
    show = c >= 14 if labels is None else labels
    out = lambda s: [] if thread is None else _thread_cells(p[s][0], thread)  # noqa: E731
    panels = [(M, N, _owner_cell(p["S"][0], threads, show, name="S"), 0, 1, "source", out("S")),
              (M, N, _owner_cell(p["D"][0], threads, show, name="D"), N + 1, 1, "destination", out("D"))]
    return panels_svg(panels, title if title is not None else f"TiledCopy {M}x{N}, {threads} threads",
                      cell_px=c)


def bank_svg(layout, elem_bytes=4, access=(), title=None, banks=32):
    """draw_banks as SVG: each element of a rank-2 layout coloured by the bank of its first byte (hsv,
    light); the cells of `access` (coordinates, or lists of coordinates per lane) outlined."""
    from ..bank_conflicts import bank_grid
    _need_count(banks, "bank_svg", "banks", low=1)
    grid = bank_grid(layout, elem_bytes)
    rows, cols = len(grid), len(grid[0])
    outlined = access_cells(access, rows, cols, "bank_svg")

    def colour(bank):
        r, g, b = colorsys.hsv_to_rgb(bank / banks, 1.0, 1.0)
        return "#" + "".join(f"{round(255 * (0.45 + 0.55 * x)):02x}" for x in (r, g, b))

    def cell(m, n):
        bank = grid[m][n]
        return colour(bank), str(bank) if rows * cols <= 512 else "", f"({m},{n}): bank {bank}"
    return grid_svg(rows, cols, cell, title or f"{layout}: bank of each element ({elem_bytes}-byte elements)",
                    outlined=outlined)


def _rows(rows, op):
    """rows as a list of (name, cells) pairs, or a TypeError naming `op`."""
    if not isinstance(rows, list) or not all(isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], str)
                                             for r in rows):
        raise TypeError(f"{op}: expected a list of (name, cells) rows, got {quote(rows)}")
    return rows


def _grid(grid, op, ok, what):
    """TypeError or ValueError naming `op` unless grid is a non-empty list of equally long non-empty lists
    whose every cell passes ok (`what` says what a cell must be), small enough to draw."""
    if not (isinstance(grid, list) and grid and all(isinstance(r, list) and r for r in grid)):
        raise TypeError(f"{op}: expected a non-empty list of non-empty lists, got {quote(grid)}")
    if len({len(r) for r in grid}) != 1:
        raise ValueError(f"{op}: the rows have different lengths: {sorted({len(r) for r in grid})}")
    check_cells(len(grid), len(grid[0]), op)
    bad = next((c for r in grid for c in r if not ok(c)), _OK)
    if bad is not _OK:
        raise TypeError(f"{op}: {what}, got {quote(bad)}")


_OK = object()


# The colours of a stage's states (teach.gemm.STAGE_STATES): matplotlib's tab10 blue for a k-tile being read,
# orange for a copy issued, light orange while it may be in flight, purple in registers.
STATE_COLOURS = {"read": "#1f77b4", "issued": "#ff7f0e", "in flight": "#ffbb78", "loading": "#c5b0d5",
                 "stored": "#ff7f0e"}


def timeline_svg(rows, title=""):
    """teach.gemm.stage_timeline as a grid: a row per stage (or buffer, or the registers), a column per
    iteration after the one "before the loop"; each cell names the k-tile it holds, coloured by its state."""
    from .gemm import STAGE_STATES
    _grid([cells for _, cells in _rows(rows, "timeline_svg")], "timeline_svg",
          lambda c: c is None or isinstance(c, tuple) and len(c) == 2 and c[1] in STAGE_STATES and is_int(c[0]),
          "a cell must be None or (k-tile, state)")
    cols = len(rows[0][1])
    heads = ["pre"] + [f"it {kt}" for kt in range(cols - 1)]

    def cell(m, n):
        if m == 0:
            return "#ffffff", heads[n - 1] if n else "", "before the loop" if n == 1 else f"iteration {n - 2}"
        name, cells = rows[m - 1]
        if n == 0:
            return "#ffffff", name.replace("stage ", "s").replace("buffer ", "b").replace("registers", "regs"), name
        held = cells[n - 1]
        if held is None:
            return "#f4f4f4", "", f"{name}: nothing"
        kt, state = held
        return STATE_COLOURS[state], f"k{kt}", f"{name}: k-tile {kt}, {STAGE_STATES[state]}"
    return grid_svg(len(rows) + 1, cols + 1, cell, title, size_px=min(40 * (cols + 1), 640))


def chunks_svg(chunks, outlined=(), title=""):
    """A shared-memory tile in 16-byte chunks: chunks[r][c] is the chunk (address / 16) that chunk (r, c) of the
    tile lands in, drawn coloured by its group of 4 banks (address / 16 mod 8: chapter 4's view of a 128-byte
    line; tab10's colours), labelled with the chunk address where the labels fit; `outlined` cells get a
    border."""
    _grid(chunks, "chunks_svg", lambda a: is_int(a) and a >= 0, "a chunk must be an int >= 0")
    rows, cols = len(chunks), len(chunks[0])
    c = max(4.0, min(28.0, 720 / cols, 560 / rows))
    show = rows * cols <= MAX_LABELS and c >= 14

    def cell(m, n):
        a = chunks[m][n]
        return thread_colour(2 * (a % 8), 20), str(a) if show else "", f"({m},{n}) -> chunk {a} (byte {16 * a}), " \
            f"bank group {a % 8}"
    return grid_svg(rows, cols, cell, title, size_px=max(1, round(c * cols)), outlined=outlined)


def softmax_svg(x, now, final, block, title=""):
    """One row of the online softmax (teach.explorers.online_softmax_result): a column per key, three rows: the
    scaled scores x (viridis from the smallest to the largest; a masked key, -inf, grey), the weights of the keys
    seen so far if the row ended here, and the softmax of the whole row (viridis from 0 to the largest weight;
    keys not seen yet grey). The last block seen is outlined."""
    if not (isinstance(x, list) and isinstance(now, list) and isinstance(final, list) and x and
            len(final) == len(x) and len(now) <= len(x)):
        raise ValueError(f"softmax_svg: x and final must be lists of one number per key and now at most as long, "
                         f"got {quote(x)}, {quote(now)}, {quote(final)}")
    _need_count(block, "softmax_svg", "block", low=1)
    finite = [v for v in x if v != -float("inf")] or [0.0]
    lo, hi, top = min(finite), max(finite), max(final + now + [1e-30])
    n, seen = len(x), len(now)
    first = (seen - 1) // block * block
    show = n <= 16
    names = ("x", "now", "final")

    def cell(m, c):
        if c == 0:
            return "#ffffff", names[m], ("the scaled scores x = s * scale * log2(e)",
                                         "the weights exp2(x - m) / l of the keys seen so far",
                                         "the softmax of the whole row")[m]
        j = c - 1
        if m == 0:
            v = x[j]
            if v == -float("inf"):
                return "#f4f4f4", "-inf" if show else "", f"key {j}: masked"
            return viridis((v - lo) / (hi - lo) if hi > lo else 0.5), f"{v:.1f}" if show else "", f"key {j}: x = {v:.4g}"
        if m == 1 and j >= seen:
            return "#f4f4f4", "", f"key {j}: not seen yet"
        w = (now if m == 1 else final)[j]
        return viridis(w / top), f"{w:.2f}" if show else "", f"key {j}: weight {w:.4g}"
    outlined = [(m, c + 1) for m in range(3) for c in range(first, seen)]
    return grid_svg(3, n + 1, cell, title, size_px=min(36 * (n + 1), 900), outlined=outlined)
