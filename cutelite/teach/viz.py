"""Pictures of layouts (matplotlib): the book's figures, and what the widgets redraw.

    draw_layout(L)                      grid of L(m, n), coloured by offset, labelled with the offset
    draw_tv_layout(tv, (M, N))          which thread and value own each element of an M x N tile
    draw_tiles(L, tiler)                a divide (or product) as coloured tiles
    draw_warp_access(offsets)           which memory segments the 32 lanes of a warp touch
    draw_pipeline(run)                  a timeline of a simulated producer/consumer pipeline (cutelite.pipeline)
    draw_tiled_mma(mma)                 print_latex's picture of a TiledMMA: A left of C, B above C
    draw_tiled_copy(copy)               print_latex's picture of a TiledCopy: source and destination
    draw_banks(L, elem_bytes, access)   the shared-memory bank of each element, a warp's accesses outlined

Each function draws into `ax` (a new figure when None) and returns the axes. Grids read like
print_layout: row m downwards, column n across, (0, 0) top left.
"""

from itertools import product

import numpy as np

from ..explain import operand_text
from ..int_tuple import crd2idx, is_int
from ..layout import Layout, _need_layout, make_layout, rank, size, zipped_divide, logical_product, blocked_product
from ..layout import raked_product
from ..bank_conflicts import NUM_BANKS, _addresses, _need_count, access_cells, bank_grid
from ..errors import check_cells, quote

__all__ = ["layout_grid", "draw_layout", "draw_tv_layout", "draw_tiles", "segments_of", "draw_warp_access",
           "draw_pipeline", "draw_owners", "draw_tiled_mma", "draw_tiled_copy", "draw_banks", "layout_png"]

MAX_LABELS = 16 * 16  # more cells than this: colours only (and text is slow to draw: ~0.5 ms a label)


def _plt():
    import matplotlib
    import matplotlib.pyplot as plt  # noqa: F401  (imported here: `import cutelite` must stay light)
    return matplotlib, plt


def layout_grid(layout):
    """The offsets of a rank-1 or rank-2 layout (plain or swizzled) as an array: grid[m, n] = L(m, n).

    A rank-1 layout is one row: grid[0, n] = L(n). (svg.layout_rows as an array.)
    """
    from .svg import layout_rows
    return np.array(layout_rows(layout), dtype=np.int64)


def _axes(ax, rows, cols, cell=0.42):
    _, plt = _plt()
    if ax is None:
        width = min(14.0, max(2.5, cols * cell + 1.0))
        height = min(14.0, max(1.2, rows * cell + 0.8))
        _, ax = plt.subplots(figsize=(width, height))
    return ax


def _frame(ax, rows, cols, title):
    """Axes limits, a few index ticks (m down the left, n along the top), cell borders, title.

    Cell borders are one line collection and ticks are at most 16 per side: matplotlib ticks are costly,
    and the widgets redraw a 32x32 layout in well under 100 ms only this way.
    """
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_xticks(range(0, cols, max(1, -(-cols // 16))))
    ax.set_yticks(range(0, rows, max(1, -(-rows // 16))))
    ax.xaxis.tick_top()
    ax.tick_params(length=0, labelsize=7)
    if rows * cols <= 64 * 64:
        ax.vlines(np.arange(0.5, cols - 0.5), -0.5, rows - 0.5, colors="white", linewidth=0.6)
        ax.hlines(np.arange(0.5, rows - 0.5), -0.5, cols - 0.5, colors="white", linewidth=0.6)
    for spine in ax.spines.values():
        spine.set_visible(False)
    if title:
        ax.set_title(title, fontsize=9)


def _labels(ax, grid_text, colours, fontsize):
    """Write grid_text[m][n] in each cell, black or white by the cell's brightness."""
    rows, cols = len(grid_text), len(grid_text[0])
    for m in range(rows):
        for n in range(cols):
            if grid_text[m][n] == "":
                continue
            r, g, b = colours[m, n, :3]
            ink = "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"
            ax.text(n, m, grid_text[m][n], ha="center", va="center", fontsize=fontsize, color=ink)


def _fontsize(rows, cols, lines=1):
    n = max(rows, cols)
    return max(4.0, min(9.0, 120.0 / n)) / (1.0 if lines == 1 else 1.25)


def draw_layout(layout, ax=None, title=None, labels=None, cmap="viridis"):
    """Draw a rank-1 or rank-2 layout as a grid of cells coloured by offset, labelled with the offset.

    Works for swizzled layouts (ComposedLayout) too. labels=None labels up to MAX_LABELS cells.
    Returns the axes.
    """
    matplotlib, _ = _plt()
    grid = layout_grid(layout)
    rows, cols = grid.shape
    ax = _axes(ax, rows, cols)
    vmax = max(int(grid.max()), 1)
    colours = matplotlib.colormaps[cmap](grid / vmax)
    ax.imshow(colours, interpolation="nearest", aspect="equal")
    if labels is None:
        labels = rows * cols <= MAX_LABELS
    if labels:
        _labels(ax, [[str(v) for v in row] for row in grid], colours, _fontsize(rows, cols))
    _frame(ax, rows, cols, str(layout) if title is None else title)
    return ax


def _thread_colours(n):
    matplotlib, _ = _plt()
    palette = list(matplotlib.colormaps["tab20"].colors) + list(matplotlib.colormaps["tab20b"].colors)
    return [palette[(t * 3) % 40 if n > 20 else t % 20] for t in range(n)]


def draw_owners(owner, shape, threads, ax=None, title=None, labels=None, transpose=False, plus=True,
                thread=None):
    """Draw an M x N grid whose cell (m, n) shows "T{t}\\nV{v}" of owner[(m, n)] = (t, v, count)
    (cutelite.teach.svg.tv_owners), coloured by thread t; white where no thread reaches. transpose=True
    draws the N x M picture (cell (i, j) is owner[(j, i)]); a "+" marks elements reached more than once
    when `plus`; the cells of `thread` get a black outline. Labels up to 64 x 64 cells unless `labels`
    says otherwise. Returns the axes."""
    _, plt = _plt()
    M, N = shape
    rows, cols = (N, M) if transpose else (M, N)
    palette = _thread_colours(threads)
    colours = np.ones((rows, cols, 4))
    text = [["" for _ in range(cols)] for _ in range(rows)]
    mine = []
    for (m, n), (t, v, count) in owner.items():
        i, j = (n, m) if transpose else (m, n)
        colours[i, j, :3] = palette[t]
        text[i][j] = f"T{t}\nV{v}" + ("+" if plus and count > 1 else "")
        if t == thread:
            mine.append((i, j))
    ax = _axes(ax, rows, cols, cell=0.6)
    ax.imshow(colours, interpolation="nearest", aspect="equal")
    if (rows * cols <= 64 * 64) if labels is None else labels:
        _labels(ax, text, colours, _fontsize(rows, cols, lines=2) * 0.8)
    for i, j in mine:
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.5))
    _frame(ax, rows, cols, title)
    return ax


def draw_tv_layout(tv_layout, tile_shape, ax=None, title=None):
    """Draw a thread-value layout: tv(t, v) is an index into a tile of tile_shape = (M, N), column-major
    (element (m, n) has index m + n*M). Each element shows "T{t}\\nV{v}", coloured by thread t.

    Elements no (t, v) reaches stay blank; an element reached twice shows its first (t, v) (smallest
    thread) and a "+". Returns the axes.
    """
    from .svg import tile_mn, tv_owners
    M, N = tile_mn(tile_shape, "draw_tv_layout")
    owner = tv_owners(tv_layout, (M, N))
    return draw_owners(owner, (M, N), size(tv_layout, 0), ax=ax, labels=M * N <= MAX_LABELS,
                       title=f"{tv_layout} on a {M}x{N} tile" if title is None else title)


def draw_tiled_mma(mma, thread=None, labels=None, cell=0.32, title=None):
    """CuTe's print_latex(TiledMMA) as a matplotlib figure: C (M x N) bottom right, A (M x K) to its left,
    B above C drawn K x N (CuTe's N x K tile turned so that its columns are C's). Each cell: "T{t} V{v}"
    of its first owner, coloured by thread; `thread`'s cells outlined. Returns the figure."""
    from .svg import mma_panels, picture_args
    picture_args("draw_tiled_mma", thread, cell, "cell")
    _, plt = _plt()
    p = mma_panels(mma)
    (M, K), (N, _) = p["A"][1], p["B"][1]
    threads = p["threads"]
    fig = plt.figure(figsize=(min(30, (K + N) * cell + 1.5), min(30, (K + M) * cell + 1.5)))
    gs = fig.add_gridspec(2, 2, width_ratios=(K, N), height_ratios=(K, M), wspace=0.04, hspace=0.12)
    draw_owners(p["B"][0], (N, K), threads, ax=fig.add_subplot(gs[0, 1]), labels=labels, transpose=True,
                plus=False, thread=thread, title=f"B ({K} x {N}: k down, n across)")
    draw_owners(p["A"][0], (M, K), threads, ax=fig.add_subplot(gs[1, 0]), labels=labels, plus=False,
                thread=thread, title=f"A ({M} x {K})")
    draw_owners(p["C"][0], (M, N), threads, ax=fig.add_subplot(gs[1, 1]), labels=labels, plus=False,
                thread=thread, title=f"C ({M} x {N})")
    fig.suptitle(title or f"TiledMMA {M}x{N}x{K}, {size(mma.thr_layout_vmnk)} threads", fontsize=10)
    return fig


def draw_tiled_copy(tiled_copy, thread=None, labels=None, cell=0.32, title=None):
    """CuTe's print_latex(TiledCopy) as a matplotlib figure: the tile seen by the source's (thread,
    value) layout (get_layoutS_TV) left, by the destination's (get_layoutD_TV) right. Returns the figure."""
    from .svg import copy_panels, picture_args
    picture_args("draw_tiled_copy", thread, cell, "cell")
    _, plt = _plt()
    p = copy_panels(tiled_copy)
    M, N = p["S"][1]
    threads = size(tiled_copy.layout_tv, 0)
    fig, axs = plt.subplots(1, 2, figsize=(min(30, 2 * N * cell + 1.5), min(30, M * cell + 1.2)))
    for ax, side, name in ((axs[0], "S", "source"), (axs[1], "D", "destination")):
        draw_owners(p[side][0], (M, N), threads, ax=ax, labels=labels, thread=thread, title=name)
    fig.suptitle(title or f"TiledCopy {M}x{N}, {threads} threads", fontsize=10)
    return fig


def _tiles_of(shape, tiler):
    """(the tile zipped_divide(make_layout(shape), tiler) puts each cell in, cells in column-major order;
    how many elements of the tiles fall outside the shape). A tiler that does not divide the shape makes
    tiles that reach past it (C++ does not check). A tuple of ints and Layouts divides each mode on its own,
    so an element past the end of one mode is counted, not drawn in the next column as its 1-D index would."""
    extents = [size(s) for s in (shape if isinstance(shape, tuple) else (shape,))]
    tile_of, past = np.zeros(size(shape), dtype=np.int64), 0
    if not (isinstance(tiler, tuple) and all(is_int(t) or isinstance(t, Layout) for t in tiler)):
        coords = zipped_divide(make_layout(shape), tiler)       # a Layout acts on the 1-D index
        check_cells(1, size(coords), "draw_tiles")                  # tiles far larger than the layout
        for j in range(size(coords, 1)):
            for i in range(size(coords, 0)):
                if 0 <= coords(i, j) < len(tile_of):
                    tile_of[coords(i, j)] = j
                else:
                    past += 1
        return tile_of, past
    per_mode = [zipped_divide(make_layout(e), t) if m < len(tiler) else Layout((1, e), (0, 1))
                for m, (e, t) in enumerate(zip(extents, tiler + (None,) * len(extents)))]
    check_cells(1, int(np.prod([size(d) for d in per_mode])), "draw_tiles")
    for tile in product(*[range(size(d, 0)) for d in per_mode]):
        for rest in product(*[range(size(d, 1)) for d in per_mode]):
            at = [d(i, j) for d, i, j in zip(per_mode, tile, rest)]
            if all(0 <= x < e for x, e in zip(at, extents)):
                tile_of[crd2idx(tuple(at), tuple(extents))] = crd2idx(rest, tuple(size(d, 1) for d in per_mode))
            else:
                past += 1
    return tile_of, past


_PRODUCTS = {"logical_product": logical_product, "blocked_product": blocked_product,
             "raked_product": raked_product}


def draw_tiles(layout, tiler, op="divide", ax=None, title=None):
    """Draw a divide or a product as coloured tiles, each cell labelled with its offset.

    op="divide": the grid of `layout` (rank 1 or 2), each cell coloured by the tile zipped_divide(layout,
    tiler) puts it in. op="blocked_product" | "raked_product" | "logical_product": the grid of the
    product of block `layout` by `tiler`, each cell coloured by the copy of the block it belongs to.
    Returns the axes.
    """
    matplotlib, _ = _plt()
    _need_layout(layout, "draw_tiles")
    if not isinstance(op, str):
        raise TypeError(f"draw_tiles: op must be 'divide' or a product's name, got {quote(op)}")
    if op == "divide":
        grid = layout_grid(layout)
        # Divide the column-major *coordinate* layout of the same shape: its value at (tile i, rest j)
        # is the index of the cell, so each cell learns its tile j.
        tile_of, past = _tiles_of(layout.shape, tiler)
        rows, cols = grid.shape
        tile = tile_of.reshape(cols, rows).T if rank(layout) == 2 else tile_of.reshape(1, -1)
        name = f"zipped_divide({layout}, {operand_text(tiler)})"
        if past:
            name += f": {past} elements of the tiles fall past the layout's {grid.size} (not drawn)"
    elif op in _PRODUCTS:
        product = _PRODUCTS[op]
        result = product(layout, tiler)
        grid = layout_grid(result)
        # The same product of a compact block of the same shape: offset // size(block) is the copy.
        compact = layout_grid(product(make_layout(layout.shape), tiler))
        tile = compact // size(layout)
        name = f"{op}({layout}, {operand_text(tiler)}) = {result}"
    else:
        raise ValueError(f"draw_tiles: op must be 'divide' or one of {sorted(_PRODUCTS)}, got {quote(op)}")
    rows, cols = grid.shape
    ax = _axes(ax, rows, cols)
    palette = _thread_colours(int(tile.max()) + 1)
    colours = np.array([[(*palette[t], 1.0) for t in row] for row in tile])
    ax.imshow(colours, interpolation="nearest", aspect="equal")
    if rows * cols <= MAX_LABELS:
        _labels(ax, [[str(v) for v in row] for row in grid], colours, _fontsize(rows, cols))
    _frame(ax, rows, cols, name if title is None else title)
    return ax


def segments_of(offsets, elem_bytes=4, segment_bytes=32):
    """The distinct memory segments (32-byte sectors by default) that element offsets fall in, sorted.

    A warp's load costs one transaction per sector it touches: 32 lanes reading 32 consecutive floats
    touch 4 sectors; reading with a stride of 32 floats, 32 sectors.
    """
    _addresses(offsets, "segments_of", inactive=False, what="element offset")
    _need_count(elem_bytes, "segments_of", "elem_bytes", low=1)
    _need_count(segment_bytes, "segments_of", "segment_bytes", low=elem_bytes)
    return sorted({int(o) * elem_bytes // segment_bytes for o in offsets})


def draw_warp_access(offsets, elem_bytes=4, segment_bytes=32, ax=None, title=None, span=None):
    """Draw memory as a row of sectors and mark the element each lane of a warp touches.

    offsets[lane] is the element offset lane reads. Touched sectors are shaded; each touched element is
    coloured by its lane. Returns the axes.
    """
    _, plt = _plt()
    touched = segments_of(offsets, elem_bytes, segment_bytes)
    offsets = [int(o) for o in offsets]
    if not offsets:
        raise ValueError("draw_warp_access: no offsets to draw")
    if span is not None:
        _need_count(span, "draw_warp_access", "span", low=1)
    per_segment = segment_bytes // elem_bytes
    span = span or (max(offsets) // per_segment + 1) * per_segment
    check_cells(1, span, "draw_warp_access")
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 1.6))
    palette = _thread_colours(len(offsets))
    for s in range(span // per_segment):
        ax.add_patch(plt.Rectangle((s * per_segment, 0), per_segment, 1, fill=s in touched,
                                   facecolor="0.85", edgecolor="0.3", linewidth=0.8))
    for lane, o in enumerate(offsets):
        ax.add_patch(plt.Rectangle((o, 0.15), 1, 0.7, facecolor=palette[lane], edgecolor="none"))
    ax.set_xlim(0, span)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_xlabel(f"element offset ({elem_bytes}-byte elements; boxes are {segment_bytes}-byte sectors)",
                  fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(title or f"{len(offsets)} lanes touch {len(touched)} sectors", fontsize=9)
    return ax


def draw_pipeline(run, ax=None, title=None):
    """Draw a PipelineRun (cutelite.pipeline.simulate_pipeline) as a timeline: one row for the producer's
    TMA copies, one per consumer's wgmma groups (from the moment a group enters the tensor cores until it
    is done; a consumer keeps up to wait_group + 1 in flight, drawn in as many lanes), each bar labelled
    with its k-tile and coloured by its stage;
    waits on an mbarrier are grey hatched bands, waits on `wgmma.wait_group` dotted ones, each broken rule a
    red cross, and empty[s] phase completions ticks under the axis. Returns the axes.
    """
    from ..pipeline import PipelineRun
    if not isinstance(run, PipelineRun):
        raise TypeError(f"draw_pipeline: expected a PipelineRun (simulate_pipeline), got {quote(run)}")
    _, plt = _plt()
    rows = run.rows()
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 0.7 * len(rows) + 1.2))
    palette = _thread_colours(max(run.stages, 2))
    for row, start, end, kind, kt in run.intervals:
        y = len(rows) - 1 - row
        if kind in ("wait", "wait_group"):
            ax.add_patch(plt.Rectangle((start, y + 0.02), end - start, 0.2, facecolor="0.92", edgecolor="0.6",
                                       hatch="///" if kind == "wait" else "...", linewidth=0.5))
            continue
        lanes = run.wait_group + 1 if kind == "mma" else 1
        h = 0.67 / lanes
        y0 = y + 0.28 + h * (lanes - 1 - kt % lanes)
        ax.add_patch(plt.Rectangle((start, y0), end - start, h, facecolor=palette[kt % run.stages],
                                   edgecolor="0.2", linewidth=0.6))
        ax.text((start + end) / 2, y0 + h / 2, f"k{kt}", ha="center", va="center", fontsize=7 if lanes < 3 else 6)
    for row, t in run.marks:
        ax.plot([t], [len(rows) - 1 - row + 0.6], marker="x", color="#d62728", markersize=9, markeredgewidth=2)
    for t, name, phase in run.phases:
        if name.startswith("empty"):
            ax.plot([t, t], [-0.35, -0.05], color="0.3", linewidth=0.8)
    end = max([e for _, _, e, _, _ in run.intervals] + [1])
    ax.set_xlim(0, end * 1.01)
    ax.set_ylim(-0.45, len(rows))
    ax.set_yticks([len(rows) - 1 - i + 0.5 for i in range(len(rows))])
    ax.set_yticklabels(rows, fontsize=8)
    ax.set_xlabel("time (one unit = one k-tile's wgmma group of one consumer, alone on the tensor cores); ticks "
                  "below: an empty[s] phase completes (a stage is free again)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(title or f"{run.stages} stages, {run.consumers} consumers, {run.ktiles} k-tiles, "
                 f"wgmma.wait_group {run.wait_group}: colour = stage, hatched = waiting on an mbarrier, "
                 "dotted = on wait_group", fontsize=9)
    return ax


def layout_png(layout, cell=14, cmap="viridis"):
    """The picture of draw_layout as PNG bytes, drawn straight from the offsets (no axes, no labels).

    The widgets use it: a 32x32 layout takes a few milliseconds, where matplotlib takes ~100 ms.
    """
    import io

    matplotlib, _ = _plt()
    from PIL import Image

    _need_count(cell, "layout_png", "cell (pixels)", low=2)
    if cell > 64:
        raise ValueError(f"layout_png: cell must be at most 64 pixels, got {cell}")
    grid = layout_grid(layout)
    vmax = max(int(grid.max()), 1)
    rgb = (matplotlib.colormaps[cmap](grid / vmax)[..., :3] * 255).astype(np.uint8)
    big = np.repeat(np.repeat(rgb, cell, axis=0), cell, axis=1)
    big[::cell, :, :] = 255  # white cell borders
    big[:, ::cell, :] = 255
    buf = io.BytesIO()
    Image.fromarray(big).save(buf, format="PNG")
    return buf.getvalue()


def draw_banks(layout, elem_bytes=4, access=None, ax=None, title=None, numbers=True):
    """Draw a rank-2 layout as a grid of cells coloured by bank; outline the cells `access` touches
    (lane numbers written in them). Returns the matplotlib Axes."""
    _, plt = _plt()
    grid = np.array(bank_grid(layout, elem_bytes))
    rows, cols = grid.shape
    cells = access_cells(access, rows, cols, "draw_banks")
    if ax is None:
        _, ax = plt.subplots(figsize=(min(0.32 * cols + 1, 11), min(0.32 * rows + 1, 9)))
    ax.imshow(grid, cmap="hsv", vmin=0, vmax=NUM_BANKS, alpha=0.55, aspect="equal", interpolation="nearest")
    if numbers and rows * cols <= 1024:
        for m in range(rows):
            for n in range(cols):
                ax.text(n, m, str(grid[m, n]), ha="center", va="center", fontsize=5 if cols > 16 else 7)
    xs, ys = [], []                       # all outlines as one polyline (NaN-separated): fast to draw
    for m, n in cells:
        x, y = n - 0.5, m - 0.5
        xs += [x, x + 1, x + 1, x, x, np.nan]
        ys += [y, y, y + 1, y + 1, y, np.nan]
    if xs:
        ax.plot(xs, ys, color="black", lw=1.4)
    ax.set_xticks([]), ax.set_yticks([])
    ax.set_title(title or f"{layout}: bank of each element ({elem_bytes}-byte elements)", fontsize=9)
    return ax
