"""What each explorer computes, as plain functions of the text in its boxes (standard library only).

The ipywidgets explorers of the notebooks (cutelite.teach.widgets) and the live page (cutelite.teach.live,
in Pyodide) both call these, so the same input shows the same text in both places:

    layout_result("(4,8)", "(1,4)")               -> (text, layout to draw or None)
    algebra_result("composition", "(4,8):(8,1)", "(2,2):(1,4)")
    bank_result("32x32 float (4 B)", "column, 32-bit", 5, 0, 5)
    fragment_result("SM80_16x8x8_F32F16F16F32_TN", "by lane", 13)
    partition_result("local_partition", "(8,24)", "(4,8)", 13)

Input errors never raise: cutelite's error text ("ValueError: composition: ...") becomes the text. Inputs
too large to compute and draw quickly are refused before any work, with the same text in the notebook and
on the live page ("Refused: ..."): at most LIMIT elements (a 64 x 64 tile), MAX_MODES modes, MAX_THREADS
threads, MAX_TEXT characters a box. The live page also stops any computation that runs past its time limit.
"""

from ..atoms import _copy_of, _copy_shift, fragment_of, make_mma_atom, owner_of, tile_shape
from ..bank_conflicts import analyse, byte_addresses, ldmatrix_wavefronts
from ..explain import OPS, UNARY, explain, operand_text
from .. import layout as algebra
from ..int_tuple import fmt, is_int, product_each
from ..layout import (ComposedLayout, Layout, LayoutLeft, LayoutRight, composition, cosize, flatten, get,
                      get_flat_coord, make_layout, rank, right_inverse, size, zipped_divide)
from ..parse import parse_operand
from ..printing import format_layout
from ..swizzle import Swizzle
from .svg import tv_owners

__all__ = ["describe_layout", "layout_result", "algebra_result", "bank_result", "fragment_result",
           "tiled_mma_result", "partition_result", "drawable", "OPS", "bank_case", "BANK_TILES", "BANK_PATTERNS",
           "PARTITIONS", "Refused", "LIMIT", "MAX_MODES", "MAX_THREADS", "MAX_TEXT"]

ERRORS = (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, RecursionError)
LIMIT = 64 * 64        # elements an explorer computes with and draws
MAX_MODES = 64         # modes of a flattened layout
MAX_THREADS = 1024     # threads (a CUDA thread block has at most 1024)
MAX_TEXT = 1000        # characters in one box


class Refused(ValueError):
    """An input too large for an explorer, refused before any work."""


def _error(e):
    return f"{type(e).__name__}: {e}\n"


def _text(box, name):
    """The text of a box, refused when it is longer than MAX_TEXT."""
    box = str(box)
    if len(box) > MAX_TEXT:
        raise Refused(f"{name} is {len(box)} characters long; the explorers read at most {MAX_TEXT}")
    return box


def _int(box, name):
    """A whole number typed in a box (ASCII digits, an optional minus sign)."""
    box = _text(box, name).strip()
    digits = box[1:] if box.startswith("-") else box
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"{name} must be a whole number, got {box!r}")
    if len(digits) > 9:
        raise Refused(f"{name} = {box} has {len(digits)} digits; the explorers take at most 9")
    return int(box)


def _parse(box, name):
    return parse_operand(_text(box, name))


def _elements(x):
    """How many elements x stands for: a layout's size, an int itself, a tuple's product; and its modes."""
    if isinstance(x, (Layout, ComposedLayout)):
        return size(x), rank(flatten(x if isinstance(x, Layout) else x.layout_b))
    if is_int(x):
        return max(int(x), 1), 1
    if isinstance(x, tuple):
        n = modes = 1
        for part in x:
            pn, pm = _elements(part)
            n, modes = n * pn, modes + pm
        return n, modes
    return 1, 1   # _


def _small(x, name, elements=True):
    """x itself, refused when it has more than MAX_MODES modes or (where `elements`) stands for more than
    LIMIT elements: what the explorers can compute with, check and draw in a blink."""
    n, modes = _elements(x)
    if modes > MAX_MODES:
        raise Refused(f"{name} has {modes} modes; the explorers work with at most {MAX_MODES}")
    if elements and n > LIMIT:
        raise Refused(f"{name} has {n} elements; the explorers compute and draw at most {LIMIT} "
                      "(a 64 x 64 tile)")
    return x


def describe_layout(layout):
    """The text a widget shows for a layout: print_layout's grid for rank 2, else the layout, size, cosize.
    A layout of more than LIMIT elements gets no grid (and no picture: see drawable)."""
    head = f"size {size(layout)}, cosize {cosize(layout)}, rank {rank(layout)}\n"
    if size(layout) > LIMIT:
        return head + f"{layout}\n(no grid and no picture: {size(layout)} elements; the explorers draw at most " \
                      f"{LIMIT}, a 64 x 64 tile)\n"
    if rank(layout) == 2:
        return head + format_layout(layout)
    return head + str(layout) + "\n"


def drawable(x):
    """x itself when it is a layout of rank 1 or 2 (plain or swizzled) of at most LIMIT elements, which the
    pictures draw; else None."""
    return x if isinstance(x, (Layout, ComposedLayout)) and rank(x) <= 2 and size(x) <= LIMIT else None


def make_layout_from_text(shape, stride="", major="LayoutLeft"):
    """The layout explorer's layout: `shape` alone may be a whole layout ("(4,8):(1,4)"); an empty stride
    gives the compact layout, column-major (LayoutLeft) or row-major (LayoutRight)."""
    value = _parse(shape, "shape")
    if isinstance(value, (Layout, ComposedLayout)):
        return value
    if stride.strip():
        return make_layout(value, _parse(stride, "stride"))
    return make_layout(value, LayoutLeft if major == "LayoutLeft" else LayoutRight)


def layout_result(shape, stride="", major="LayoutLeft"):
    """(text, layout to draw or None) for the layout explorer's boxes."""
    try:
        layout = _small(make_layout_from_text(shape, stride, major), "the layout", elements=False)
        return describe_layout(layout), drawable(layout)
    except ERRORS as e:
        return _error(e), None


def algebra_result(op, a, b=""):
    """(text, result to draw or None) for the algebra explorer: the call, its result, the derivation.
    Operands and results of more than LIMIT elements are refused (the derivation checks every element)."""
    try:
        left = _parse(a, "A")
        if not isinstance(left, Layout):
            left = Layout(left)  # a shape alone: the compact column-major layout
        right = None if op in UNARY or (op == "complement" and not b.strip()) else _parse(b, "B")
        _small(left, f"A = {left}")
        if right is not None:
            _small(right, f"B = {operand_text(right)}")
        if op not in OPS:
            raise ValueError(f"explain: unknown operation {op!r}; choose one of {', '.join(OPS)}")
        fn = getattr(algebra, op)
        _small(fn(left) if right is None else fn(left, right), f"the result of {op}")
        result, steps = explain(op, left, right)
    except ERRORS as e:
        return _error(e), None
    call = f"{op}({left})" if right is None else f"{op}({left}, {operand_text(right)})"
    text = f"{call}\n  = {result}\n\nHow:\n" + "\n".join(f"  {s}" for s in steps) + "\n"
    picture = drawable(result)
    if picture is None:
        text += f"\n(no picture: rank {rank(result)}; pictures are for rank 1 and 2)\n"
    return text, picture


def bank_result(tile, pattern, B, M, S):
    """(text, (layout, elem_bytes, access) or None) for the swizzle/bank explorer (B = 0: no swizzle)."""
    try:
        B, M, S = _int(B, "B"), _int(M, "M"), _int(S, "S")
        if not (0 <= B <= 16 and 0 <= M <= 16 and -16 <= S <= 16):
            raise Refused(f"B = {B}, M = {M}, S = {S}: the bank explorer takes B and M from 0 to 16, "
                          "S from -16 to 16")
        layout, eb, access, rep = bank_case(tile, pattern, B, M, S)
    except ERRORS as e:  # |S| < B, or a vector the swizzle splits
        return _error(e), None
    return f"{layout}\n{pattern}: {rep}", (layout, eb, access)


def fragment_grid(atom, operand, lane=None, element=None):
    """(labels, marked): labels[r][c] = "T{lane}.{v}", the owner of element (r, c) of the operand (as
    atoms.fragment_grids: within the product of `lane`'s copy of the atom), and the set of cells to
    highlight: those `lane` holds, or the one element = (row, col)."""
    rows, cols = tile_shape(atom, operand)
    shift = 0 if lane is None else _copy_shift(atom, _copy_of(atom, lane))
    labels = [["" for _ in range(cols)] for _ in range(rows)]
    marked = set()
    for t in range(size(atom.ThrID)):
        ln = atom.ThrID(t) + shift
        for v, (r, c) in fragment_of(atom, operand, ln):
            labels[r][c] = f"T{ln}.{v}"
            if ln == lane:
                marked.add((r, c))
    if element is not None:
        marked = {tuple(element)}
    return labels, marked


def fragment_result(atom_name, mode="by lane", lane=0, operand="A", row=0, col=0):
    """(text, {operand: (labels, marked)} or None) for the MMA fragment explorer: the elements a lane
    holds, or who holds one element."""
    try:
        atom = make_mma_atom(atom_name)
        lane, row, col = _int(lane, "lane"), _int(row, "row"), _int(col, "col")
        if mode == "by lane":
            text = "\n".join(f"lane {lane} holds {o}: " + ", ".join(f"v{v}={rc}" for v, rc in
                                                                   fragment_of(atom, o, lane))
                             for o in "ABC")
            return text + "\n", {o: fragment_grid(atom, o, lane=lane) for o in "ABC"}
        rows, cols = tile_shape(atom, operand)
        r, c = min(row, rows - 1), min(col, cols - 1)
        ln, v = owner_of(atom, operand, r, c)
        grids = {o: fragment_grid(atom, o, element=(r, c) if o == operand else None) for o in "ABC"}
        for o in "ABC":
            if o != operand:
                grids[o] = (grids[o][0], set())
        return f"{operand}({r}, {c}) is held by lane {ln}, register v{v}\n", grids
    except ERRORS as e:
        return _error(e), None


def tiled_mma_result(atom_name, thr_layout="(2,2,1)", perm="(32,32,16)", thread="0"):
    """(text, (TiledMMA, thread) or None) for the TiledMMA explorer: str(TiledMMA) of
    make_tiled_mma(make_mma_atom(atom), atom layout, permutation), its thread count and tile, the three
    TV layouts, and thread `thread`'s coordinate and partitions of column-major A, B, C tiles twice the
    TiledMMA's tile in M, N and K. An empty permutation means none (each mode: atom x atoms)."""
    from ..tiled import make_tiled_mma
    try:
        atom = make_mma_atom(atom_name)
        thr = _parse(thr_layout, "the atom layout")
        thr = thr if isinstance(thr, Layout) else Layout(thr)
        n = size(thr) * size(atom.ThrID)
        if n > MAX_THREADS:
            raise Refused(f"{n} threads; a thread block has at most {MAX_THREADS}")
        p = _parse(perm, "the permutation") if perm.strip() else None
        tiled = make_tiled_mma(atom, thr, p)
        t = _int(thread, "thread")
        if not 0 <= t < n:
            raise ValueError(f"thread {t} is out of range for {n} threads")
        M, N, K = (tiled.tile_size_mnk(i) for i in range(3))
        for what, cells in (("A", M * K), ("B", N * K), ("C", M * N)):
            if cells > LIMIT:
                raise Refused(f"a {M} x {N} x {K} tile: {what} has {cells} elements; the explorers draw at "
                              f"most {LIMIT} (a 64 x 64 tile)")
        tv = {op: getattr(tiled, f"get_layout{op}_TV")() for op in "ABC"}
        thr_mma = tiled.get_slice(t)
        parts = (("A", "(MMA,MMA_M,MMA_K)", thr_mma.partition_A(make_layout((2 * M, 2 * K))), f"{2 * M}x{2 * K}"),
                 ("B", "(MMA,MMA_N,MMA_K)", thr_mma.partition_B(make_layout((2 * N, 2 * K))), f"{2 * N}x{2 * K}"),
                 ("C", "(MMA,MMA_M,MMA_N)", thr_mma.partition_C(make_layout((2 * M, 2 * N))), f"{2 * M}x{2 * N}"))
    except ERRORS as e:
        return _error(e), None
    text = (f"{tiled}\n{n} threads, tile M x N x K = {M} x {N} x {K}\n"
            + "".join(f"Layout{op}_TV: {tv[op]}\n" for op in "ABC")
            + f"\nthread {t}: (V,M,N,K) coordinate {fmt(thr_mma.thr_vmnk)} (outlined)\n"
            + "".join(f"  partition_{op} of a {tile} tile {modes}: {lay}\n" for op, modes, lay, tile in parts))
    return text, (tiled, t)


BANK_TILES = {"32x32 float (4 B)": (32, 32, 4), "8x64 half (2 B)": (8, 64, 2), "16x16 float (4 B)": (16, 16, 4)}
BANK_PATTERNS = ("column, 32-bit", "row, 32-bit", "column, 128-bit", "ldmatrix.x4 (8 rows x 4 chunks)")


def bank_case(tile, pattern, B, M, S):
    """The bank explorer's case: (layout, element bytes, the warp's accesses, the BankReport)."""
    rows, cols, eb = BANK_TILES[tile]
    layout = Layout((rows, cols), (cols, 1))
    if B > 0:
        layout = composition(Swizzle(B, M, S), layout)
    if pattern == "column, 32-bit":
        access = [(i % rows, i // rows) for i in range(32)]
        rep = analyse(layout, access, eb)
    elif pattern == "row, 32-bit":
        access = [(i // cols, i % cols) for i in range(32)]
        rep = analyse(layout, access, eb)
    else:
        per = 16 // eb
        if pattern == "column, 128-bit":
            access = [[(i % rows, (i // rows) * per + k) for k in range(per)] for i in range(32)]
            access = [a if a[-1][1] < cols else None for a in access]
            rep = analyse(layout, access, eb)
        else:  # ldmatrix.x4: matrix j = rows 0..7, 16-byte chunk j
            access = [[(i % 8 % rows, (i // 8) * per + k) for k in range(per)] for i in range(32)]
            rep = ldmatrix_wavefronts(byte_addresses(layout, access, eb)[0])
    return layout, eb, access, rep


# ---- chapter 3: which thread owns which element ------------------------------------------------------------
PARTITIONS = ("local_partition", "TV layout")


def partition_tv(kind, tile, layout):
    """The TV layout, (thread, value) -> column-major index in the M x N `tile`, that `kind` hands out.
    "TV layout": `layout` itself. "local_partition": `layout` is the thread layout (thread coordinate ->
    thread index, numbering its threads 0..n-1 once each); zipped_divide of the tile by its shape is
    ((tile), (rest)), and thread t owns the element at its coordinate of every tile, so the TV layout is
    (composition(tile mode, right_inverse(thread layout)), rest mode).
    Post: for local_partition, {TV(t, v) for all v} == the indices of local_partition(tile, layout, t)."""
    M, N = tile
    if kind == "TV layout":
        return layout
    if kind != "local_partition":
        raise ValueError(f"partition: unknown kind {kind!r}; choose one of {', '.join(PARTITIONS)}")
    n = size(layout)
    if sorted(layout(i) for i in range(n)) != list(range(n)):
        raise ValueError(f"local_partition: the thread layout {layout} must number its {n} threads 0..{n - 1}, "
                         "each once (a compact layout such as (4,8) or (4,8):(8,1))")
    threads = product_each(layout.shape) if rank(layout) > 1 else (size(layout),)
    if len(threads) > 2 or any(e % t for e, t in zip((M, N), threads)):
        raise ValueError(f"local_partition: the {M} x {N} tile is not a whole number of {fmt(threads)} "
                         "thread tiles")
    tiled = zipped_divide(make_layout((M, N)), threads)
    return make_layout(composition(get(tiled, 0), right_inverse(layout)), get(tiled, 1))


def _tile_shape(text):
    tile = _parse(text, "the tile")
    tile = (tile, 1) if is_int(tile) else tile
    if not (isinstance(tile, tuple) and len(tile) == 2 and all(is_int(x) and x > 0 for x in tile)):
        raise ValueError(f"the tile must be a shape (M, N) of two positive ints, got {text!r}")
    if tile[0] * tile[1] > LIMIT:
        raise Refused(f"the {tile[0]} x {tile[1]} tile has {tile[0] * tile[1]} elements; the explorers draw "
                      f"at most {LIMIT} (a 64 x 64 tile)")
    return tile


def partition_result(kind="local_partition", tile="(8,24)", layout="(4,8)", thread="13"):
    """(text, (TV layout, (M, N), thread) or None) for the partition explorer: who owns each element of an
    M x N tile (column-major indices) under local_partition by a thread layout, or under a TV layout; what
    thread `thread` holds."""
    try:
        M, N = _tile_shape(tile)
        lay = _parse(layout, "the layout")
        lay = lay if isinstance(lay, Layout) else Layout(lay)
        if size(lay, 0) > MAX_THREADS or (kind == "TV layout" and size(lay) > LIMIT):
            raise Refused(f"{lay} has {size(lay, 0)} threads and {size(lay)} elements; the explorers take at "
                          f"most {MAX_THREADS} threads and {LIMIT} elements")
        tv = partition_tv(kind, (M, N), lay)
        threads = size(tv, 0) if rank(tv) > 1 else size(tv)
        t = _int(thread, "thread")
        if not 0 <= t < threads:
            raise ValueError(f"thread {t} is out of range for {threads} threads")
        owners = tv_owners(tv, (M, N), what="partition")
    except ERRORS as e:
        return _error(e), None
    values = size(tv) // threads
    held = [(tv(t, v) % M, tv(t, v) // M) for v in range(values)]
    lines = []
    if kind == "local_partition":
        crd = get_flat_coord(lay, t)
        tiled = zipped_divide(make_layout((M, N)), product_each(lay.shape) if rank(lay) > 1 else (size(lay),))
        lines += [f"local_partition of a {M} x {N} tile (column-major) among the {threads} threads of {lay}:",
                  f"zipped_divide by the threads' shape: {tiled}, ((thread's place in a tile), (which tile))",
                  f"thread {t} sits at {tuple(int(c) for c in crd)} of the thread layout: it gets that element of "
                  "every tile, "
                  f"{get(tiled, 1)} from offset {get(tiled, 0)(crd)}",
                  f"as a TV layout, (thread, value) -> index: {tv}"]
    else:
        lines.append(f"TV layout {tv} on a {M} x {N} tile (column-major): {threads} threads x {values} values")
    lines.append(f"thread {t} holds (m, n): " + ", ".join(f"v{v}={rc}" for v, rc in enumerate(held)))
    unowned = M * N - len(owners)
    shared = sum(1 for _, _, count in owners.values() if count > 1)
    if unowned:
        lines.append(f"{unowned} element(s) of the tile are held by no thread (white)")
    if shared:
        lines.append(f"{shared} element(s) are held by more than one (thread, value): the picture shows the "
                     "first, marked +")
    return "\n".join(lines) + "\n", (tv, (M, N), t)
