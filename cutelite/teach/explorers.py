"""What each explorer computes, as plain functions of the text in its boxes (standard library only).

The ipywidgets explorers of the notebooks (cutelite.teach.widgets) and the live page (cutelite.teach.live,
in Pyodide) both call these, so the same input shows the same text in both places:

    layout_result("(4,8)", "(1,4)")               -> (text, layout to draw or None)
    algebra_result("composition", "(4,8):(8,1)", "(2,2):(1,4)")
    bank_result("32x32 float (4 B)", "column, 32-bit", 5, 0, 5)
    fragment_result("SM80_16x8x8_F32F16F16F32_TN", "by lane", 13)

Input errors never raise: cutelite's error text ("ValueError: composition: ...") becomes the text.
"""

from ..atoms import _copy_of, _copy_shift, fragment_of, make_mma_atom, owner_of, tile_shape
from ..bank_conflicts import analyse, byte_addresses, ldmatrix_wavefronts
from ..explain import OPS, UNARY, explain, operand_text
from ..int_tuple import fmt
from ..layout import Layout, LayoutLeft, LayoutRight, composition, cosize, make_layout, rank, size
from ..parse import parse_operand
from ..printing import format_layout
from ..layout import ComposedLayout
from ..swizzle import Swizzle

__all__ = ["describe_layout", "layout_result", "algebra_result", "bank_result", "fragment_result",
           "tiled_mma_result", "drawable", "OPS", "bank_case", "BANK_TILES", "BANK_PATTERNS"]

ERRORS = (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError)


def _error(e):
    return f"{type(e).__name__}: {e}\n"


def describe_layout(layout):
    """The text a widget shows for a layout: print_layout's grid for rank 2, else the layout, size, cosize."""
    head = f"size {size(layout)}, cosize {cosize(layout)}, rank {rank(layout)}\n"
    if rank(layout) == 2:
        return head + format_layout(layout)
    return head + str(layout) + "\n"


def drawable(x):
    """x itself when it is a layout of rank 1 or 2 (plain or swizzled), which the pictures draw; else None."""
    return x if isinstance(x, (Layout, ComposedLayout)) and rank(x) <= 2 else None


def make_layout_from_text(shape, stride="", major="LayoutLeft"):
    """The layout explorer's layout: `shape` alone may be a whole layout ("(4,8):(1,4)"); an empty stride
    gives the compact layout, column-major (LayoutLeft) or row-major (LayoutRight)."""
    value = parse_operand(shape)
    if isinstance(value, (Layout, ComposedLayout)):
        return value
    if stride.strip():
        return make_layout(value, parse_operand(stride))
    return make_layout(value, LayoutLeft if major == "LayoutLeft" else LayoutRight)


def layout_result(shape, stride="", major="LayoutLeft"):
    """(text, layout to draw or None) for the layout explorer's boxes."""
    try:
        layout = make_layout_from_text(shape, stride, major)
        return describe_layout(layout), drawable(layout)
    except ERRORS as e:
        return _error(e), None


def algebra_result(op, a, b=""):
    """(text, result to draw or None) for the algebra explorer: the call, its result, the derivation."""
    try:
        left = parse_operand(a)
        if not isinstance(left, Layout):
            left = Layout(left)  # a shape alone: the compact column-major layout
        right = None if op in UNARY or (op == "complement" and not b.strip()) else parse_operand(b)
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
        layout, eb, access, rep = bank_case(tile, pattern, int(B), int(M), int(S))
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
        lane, row, col = int(lane), int(row), int(col)
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
        thr = parse_operand(thr_layout)
        p = parse_operand(perm) if perm.strip() else None
        tiled = make_tiled_mma(make_mma_atom(atom_name), thr if isinstance(thr, Layout) else Layout(thr), p)
        t = int(thread)
        n = size(tiled.thr_layout_vmnk)
        if not 0 <= t < n:
            raise ValueError(f"thread {t} is out of range for {n} threads")
        M, N, K = (tiled.tile_size_mnk(i) for i in range(3))
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
