"""What each explorer computes, as plain functions of the text in its boxes (standard library only).

The ipywidgets explorers of the notebooks (cutelite.teach.widgets) and the live page (cutelite.teach.live,
in Pyodide) both call these, so the same input shows the same text in both places:

    layout_result("(4,8)", "(1,4)")               -> (text, layout to draw or None)
    algebra_result("composition", "(4,8):(8,1)", "(2,2):(1,4)")
    bank_result("32x32 float (4 B)", "column, 32-bit", 5, 0, 5)
    fragment_result("SM80_16x8x8_F32F16F16F32_TN", "by lane", 13)
    partition_result("local_partition", "(8,24)", "(4,8)", 13)
    tile_pipeline_result("tc_sm80", "float16", "(128,128,32)", "4", "(2,2)", "2")
    gmma_tma_result("K", "SW128", "half_t", "(128,64)", "MN first", "(4096,4096)", "1")
    online_softmax_result("1.0, 0.5, 2.5, -1.0", "2", "1", "1")

Input errors never raise: cutelite's error text ("ValueError: composition: ...") becomes the text. Inputs
too large to compute and draw quickly are refused before any work, with the same text in the notebook and
on the live page ("Refused: ..."): at most LIMIT elements (a 64 x 64 tile), MAX_MODES modes, MAX_THREADS
threads, MAX_TEXT characters a box. The live page also stops any computation that runs past its time limit.
"""

from ..atoms import Major, _copy_of, _copy_shift, fragment_of, make_mma_atom, owner_of, tile_shape
from ..bank_conflicts import analyse, byte_addresses, ldmatrix_wavefronts
from ..explain import OPS, UNARY, explain, operand_text
from .. import layout as algebra
from ..int_tuple import fmt, is_int, product_each
from ..layout import (ComposedLayout, Layout, LayoutLeft, LayoutRight, composition, cosize, flatten, get,
                      get_flat_coord, make_layout, rank, right_inverse, size, zipped_divide)
from ..numeric import numeric
from ..parse import parse_operand
from ..printing import format_layout
from ..swizzle import Swizzle
from .softmax import LOG2E
from .svg import tv_owners

__all__ = ["describe_layout", "layout_result", "algebra_result", "bank_result", "fragment_result",
           "tiled_mma_result", "partition_result", "tile_pipeline_result", "gmma_tma_result", "online_softmax_result",
           "drawable", "OPS", "ONLINE_SOFTMAX_FIELDS", "MAX_KEYS",
           "bank_case", "BANK_TILES", "BANK_PATTERNS", "PARTITIONS", "TILE_PIPELINE_FIELDS", "GMMA_TMA_FIELDS",
           "Refused", "LIMIT", "MAX_MODES", "MAX_THREADS", "MAX_TEXT"]

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


# ---- chapter 7: a tensor-core kernel's tile, pipeline and what an SM holds of it ------------------------------
GEMM_KERNELS = {"tc_sm80": "cp.async global -> shared, ldmatrix, mma.sync m16n8k16",
                "tc_sm80_prefetch": "as tc_sm80, each k-block's fragments read one k-block ahead",
                "tc_sm75": "ld.global -> registers -> st.shared (2 buffers), ldmatrix, mma.sync m16n8k8"}
GEMM_DTYPES = ("float16", "bfloat16")
A_MAJORS, B_MAJORS = ("K-major", "M-major"), ("N-major", "K-major")
MAX_TILE, MAX_BK, MAX_STAGES = 256, 128, 8


# the explorer's boxes: (name, label, options or None for a text box), in the order of its function's arguments
TILE_PIPELINE_FIELDS = (("kernel", "kernel", tuple(GEMM_KERNELS)), ("dtype", "inputs", GEMM_DTYPES),
                        ("tile", "(BM,BN,BK)", None), ("stages", "stages", None), ("warps", "warps (M,N)", None),
                        ("min_blocks", "min CTAs/SM", None), ("a_major", "A", A_MAJORS), ("b_major", "B", B_MAJORS))


def _ints(box, name, n):
    """A tuple of n positive ints typed in a box: "(128,128,32)"."""
    value = _parse(box, name)
    value = (value,) if is_int(value) else value
    if not (isinstance(value, tuple) and len(value) == n and all(is_int(x) and x > 0 for x in value)):
        raise ValueError(f"{name} must be {n} positive whole numbers, e.g. {'(128,128,32)' if n == 3 else '(2,2)'}; "
                         f"got {box!r}")
    return tuple(int(x) for x in value)


def _needs(o):
    """The compute capability the kernel's atoms need: the highest SMxy_ prefix of their CuTe names."""
    names = [o.mma.atom.name] + [c.atom.op for c in (o.g2s_A, o.g2s_B, o.s2r_A, o.s2r_B)]
    return max((n[2] + "." + n[3] for n in names if n[:2] == "SM" and n[2:4].isdigit()), default="7.5"), \
        sorted({n for n in names if n.startswith("SM80")})


def tile_pipeline_config(kernel, dtype, tile, stages, warps, min_blocks, a_major="K-major", b_major="N-major"):
    """The explorer's boxes read and checked: (kernel, dtype, (BM, BN, BK), stages, (wm, wn), min_blocks,
    (A's, B's) Major). Sizes beyond what the explorer draws quickly are refused before any work."""
    if kernel not in GEMM_KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {', '.join(GEMM_KERNELS)}")
    if dtype not in GEMM_DTYPES or a_major not in A_MAJORS or b_major not in B_MAJORS:
        raise ValueError(f"dtype must be one of {', '.join(GEMM_DTYPES)}, A {' or '.join(A_MAJORS)}, "
                         f"B {' or '.join(B_MAJORS)}; got {dtype!r}, {a_major!r}, {b_major!r}")
    BM, BN, BK = _ints(tile, "the tile (BM, BN, BK)", 3)
    wm, wn = _ints(warps, "the warps (along M, along N)", 2)
    stages, min_blocks = _int(stages, "stages"), _int(min_blocks, "min CTAs per SM")
    if max(BM, BN) > MAX_TILE or BK > MAX_BK or not 1 <= stages <= MAX_STAGES or 32 * wm * wn > MAX_THREADS:
        raise Refused(f"a {BM} x {BN} x {BK} tile, {stages} stages, {wm} x {wn} warps: the explorer takes BM and BN "
                      f"up to {MAX_TILE}, BK up to {MAX_BK}, 1 to {MAX_STAGES} stages and at most {MAX_THREADS} "
                      "threads")
    if not 1 <= min_blocks <= 32:
        raise ValueError(f"min CTAs per SM (the launch bounds) must be from 1 to 32, got {min_blocks}")
    if kernel != "tc_sm75" and stages < 2:
        raise ValueError(f"{kernel}: a cp.async pipeline needs 2 stages or more (it waits with "
                         f"cp.async.wait_group stages - 2), got {stages}")
    if kernel == "tc_sm80_prefetch" and BK < 32:
        raise ValueError(f"{kernel}: BK must hold two k-blocks of 16 or more, got {BK}")
    return (kernel, dtype, (BM, BN, BK), 2 if kernel == "tc_sm75" else stages, (wm, wn), min_blocks,
            tuple(Major.K if m == "K-major" else Major.MN for m in (a_major, b_major)))


def _occupancy_lines(regs, threads, smem, cc, sm80):
    """The table of CTAs per SM on each GPU of SM_LIMITS, limit by limit ("-": the GPU cannot run the kernel)."""
    from .gemm import SM_LIMITS, cta_limits
    limits = {g: cta_limits(regs, threads, smem, g) for g in SM_LIMITS}
    runs = {g: SM_LIMITS[g]["cc"] >= cc for g in SM_LIMITS}
    lines = ["CTAs per SM          " + "".join(f"{g + ' (' + SM_LIMITS[g]['cc'] + ')':>14s}" for g in SM_LIMITS)]
    for what in limits["H100"]:
        lines.append(f"  by {what:17s}" + "".join(f"{limits[g][what] if runs[g] else '-':>14}" for g in SM_LIMITS))
    held = [min(limits[g].values()) for g in SM_LIMITS]
    lines.append(f"  {'resident CTAs' if regs else 'at most':20s}" + "".join(
        f"{(f'{n} ({n * threads // 32} warps)' if n else '0') if runs[g] else '-':>14s}" for g, n in zip(SM_LIMITS, held)))
    if sm80:
        lines.append(f"  (-: {', '.join(sm80)} need{'s' if len(sm80) == 1 else ''} sm_80; a T4 is sm_75)")
    if regs is None:
        lines.append("  (registers not recorded: the register limit is left out)")
    return lines


def _pipeline_lines(kernel, stages, k_tiles):
    """What the kernel's main loop does with its stages, and how to read the picture of it."""
    if kernel == "tc_sm75":
        return ["pipeline: 2 buffers (the stages box is for the cp.async kernels). Iteration kt loads k-tile kt + 1 "
                "into registers (ld.global) before its math on buffer kt % 2, then stores it into the other buffer "
                "(st.shared) and waits at a barrier.",
                f"picture: what each buffer holds in the first {k_tiles} iterations (pre: before the loop); blue: read "
                "by this iteration's ldmatrix, orange: stored from registers at the iteration's end, purple: in "
                "registers (ld.global in flight)"]
    first = "k-tile 0 is" if stages == 2 else f"k-tiles 0..{stages - 2} are"
    pending = {0: "none may stay in flight", 1: "the newest group may still be in flight"}.get(
        stages - 2, f"the {stages - 2} newest groups may still be in flight")
    return [f"pipeline: {stages} stages; {first} issued before the loop. Iteration kt waits with "
            f"cp.async.wait_group {stages - 2} (k-tile kt has landed; {pending}) and a barrier, refills the stage "
            f"k-tile kt - 1 was read from with k-tile kt + {stages - 1}, and computes k-tile kt from stage "
            f"kt % {stages}." + (" (tc_sm80_prefetch waits for k-tile kt at the last k-block of iteration kt - 1, so "
                                 "as to read its first k-block ahead.)" if kernel == "tc_sm80_prefetch" else ""),
            f"picture: what each stage holds in the first {k_tiles} iterations (pre: before the loop); blue: read by "
            "this iteration's ldmatrix, orange: its copy issued, light orange: in flight"]


def tile_pipeline_result(kernel="tc_sm80", dtype="float16", tile="(128,128,32)", stages="4", warps="(2,2)",
                         min_blocks="2", a_major="K-major", b_major="N-major"):
    """(text, (timeline rows, title) or None) for the tile and pipeline explorer: the objects chapter 7's
    kernel is built from (cutelite.tensorcore.objects), its shared memory per CTA, its registers per thread
    where the H100 record has them, CTAs per SM on a T4, an A100 and an H100 (cutelite.teach.gemm.cta_limits),
    the bank wavefronts of its own copies (smem_wavefronts) and what each stage holds, k-tile by k-tile."""
    from ..tensorcore import objects
    from .gemm import SM_LIMITS, recorded_registers, smem_wavefronts, stage_timeline
    try:
        kernel, dtype, (BM, BN, BK), stages, warps, min_blocks, majors = tile_pipeline_config(
            kernel, dtype, tile, stages, warps, min_blocks, a_major, b_major)
        o = objects(BM, BN, BK, stages, warps, "sm75" if kernel == "tc_sm75" else "sm80", dtype, majors)
        frg = o.mma.get_slice(0).partition_fragment_C(make_layout((BM, BN)))
        cost, plain = smem_wavefronts(o), smem_wavefronts(o, swizzled=False)
        k_tiles = min(2 * stages + 2, 12)
        rows = stage_timeline(kernel, stages, k_tiles)
    except ERRORS as e:
        return _error(e), None
    bytes_A, bytes_B = (cosize(x) * numeric(dtype).bits // 8 for x in (o.sA, o.sB))
    smem = -(-bytes_A // 1024) * 1024 + bytes_B          # sB starts on a 1024-byte boundary, as the kernels place it
    cc, sm80 = _needs(o)
    regs = recorded_registers(kernel, BM, BN, BK, stages, warps, min_blocks) \
        if dtype == "float16" and majors == (Major.K, Major.MN) else None
    acc, most = size(frg), SM_LIMITS["H100"]["max_regs"]
    buffers = "buffers" if kernel == "tc_sm75" else "stages"
    lines = [f"{kernel}: {GEMM_KERNELS[kernel]} (needs sm_{cc.replace('.', '')})",
             f"  mma   = {o.mma!r}",
             f"  g2s_A = {o.g2s_A!r}", f"  g2s_B = {o.g2s_B!r}",
             f"  s2r_A = {o.s2r_A!r}", f"  s2r_B = {o.s2r_B!r}",
             f"  sA    = {o.sA}   (BM, BK, stages)", f"  sB    = {o.sB}   (BN, BK, stages)",
             f"{o.threads} threads; a thread's accumulators (MMA, MMA_M, MMA_N): {frg}, {acc} f32 registers", "",
             f"shared memory per CTA: sA {bytes_A} + sB {bytes_B} = {smem} bytes ({stages} {buffers} of "
             f"{BM} x {BK} + {BN} x {BK} {dtype} elements)",
             "registers per thread: " + (
                 f"{regs} (recorded: the H100's SASS in chapter 7's record; a T4 or A100 compile may differ)" if regs
                 else f"not recorded for this configuration (the accumulators alone take {acc}"
                      + (f", more than the {most} a thread may have: the kernel would spill)" if acc > most else ")")),
             ""]
    lines += _occupancy_lines(regs, o.threads, smem, cc, sm80)
    lines += ["", "shared-memory cost per k-tile of warp 0, its own partitions (chapter 4's bank model):",
              f"  {'':18s} {'instructions':>12s} {'wavefronts':>11s} {'unswizzled':>11s} {'ideal':>6s}"]
    lines += [f"  {what:18s} {n:12d} {w:11d} {plain[what][1]:11d} {ideal:6d}" for what, (n, w, ideal) in cost.items()]
    lines += [""] + _pipeline_lines(kernel, stages, k_tiles)
    return "\n".join(lines) + "\n", (rows, f"{kernel}: k-tile per {buffers[:-1]}")


# ---- chapter 8: a GMMA operand's stage in shared memory, its descriptors and its TMA boxes -------------------
GMMA_MAJORS = ("K", "MN")
GMMA_SWIZZLES = ("SW128", "SW64", "SW32", "INTER")
GMMA_TYPES = ("half_t", "bfloat16_t", "tfloat32_t", "float_e4m3_t", "int8_t")
TILE_ORDERS = {"MN first": None, "K first": (1, 0)}    # tile_to_shape's order of the atoms (None: LayoutLeft)
MAX_BOXES = 8                                         # boxes listed one by one


GMMA_TMA_FIELDS = (("major", "major", GMMA_MAJORS), ("swizzle", "swizzle", GMMA_SWIZZLES),
                   ("dtype", "type", GMMA_TYPES), ("tile", "tile (MN,K)", None), ("order", "atoms", tuple(TILE_ORDERS)),
                   ("gmem", "global (MN,K)", None), ("k_tile", "k-tile", None))


def _stage_chunks(stage, major, bits):
    """rows[c][x]: the 16-byte chunk of shared memory (address / 16) that holds chunk c of line x of the stage,
    a line being the elements along the contiguous mode (K for a K-major stage: line x is row m = x; MN for an
    MN-major one: line x is column k = x) and c counting its 16-byte chunks."""
    per = 128 // bits                                     # elements in 16 bytes
    lay = stage.element_layout()
    MN, K = size(stage, 0), size(stage, 1)
    if major == "K":
        return [[lay(m, c * per) // per for m in range(MN)] for c in range(K // per)]
    return [[lay(c * per, k) // per for k in range(K)] for c in range(MN // per)]


def gmma_tma_result(major="K", swizzle="SW128", dtype="half_t", tile="(128,64)", order="MN first",
                    gmem="(4096,4096)", k_tile="1"):
    """(text, (chunks, k-block 0's chunks, title) or None) for the GMMA descriptor and TMA box explorer: the
    GMMA layout atom (cutelite.gmma), tile_to_shape's stage of (MN, K) elements (the atoms MN first, as C++'s
    default LayoutLeft, or K first, as chapter 8's kernels tile an MN-major operand), the descriptor of each
    k-block a wgmma reads (gmma_desc_blocks), and the TMA atom that loads the stage from an (MN, K) global
    tensor of the same major (cutelite.tma): its box, its tensor map, and the boxes of k-tile `k_tile`."""
    from ..gmma import LAYOUT_TYPES, gmma_desc_blocks, make_gmma_layout_atom, tile_to_smem
    from ..layout import _, group
    from ..tensor import local_tile
    from ..tma import make_tma_atom, tensor_map_params, tma_partition, SWIZZLES
    try:
        if major not in GMMA_MAJORS or swizzle not in GMMA_SWIZZLES or dtype not in GMMA_TYPES \
                or order not in TILE_ORDERS:
            raise ValueError(f"major must be one of {', '.join(GMMA_MAJORS)}, swizzle one of "
                             f"{', '.join(GMMA_SWIZZLES)}, type one of {', '.join(GMMA_TYPES)}, order one of "
                             f"{', '.join(TILE_ORDERS)}; got {major!r}, {swizzle!r}, {dtype!r}, {order!r}")
        MN, K = _ints(tile, "the tile (MN, K)", 2)
        gMN, gK = _ints(gmem, "the global tensor (MN, K)", 2)
        kt = _int(k_tile, "k-tile")
        atom = make_gmma_layout_atom(f"GMMA::Layout_{major}_{swizzle}_Atom<{dtype}>")
        bits = atom.bits
        if MN > 256 or K > 256 or MN * K * bits // 128 > LIMIT:
            raise Refused(f"a {MN} x {K} tile of {bits}-bit elements: the explorer takes MN and K up to 256 and "
                          f"draws at most {LIMIT} 16-byte chunks")
        stage = tile_to_smem(atom, (MN, K), *[TILE_ORDERS[order]] if TILE_ORDERS[order] else [])
        kblock = 256 // bits                              # one wgmma reads 32 bytes of K
        if K % kblock:
            raise ValueError(f"the tile's K = {K} is not a whole number of wgmma k-blocks of {kblock} {dtype} "
                             "(32 bytes)")
        descs = gmma_desc_blocks(major, stage, (MN, kblock))
        g = Layout((gMN, gK), (gK, 1) if major == "K" else (1, gMN))
        tma = make_tma_atom("SM90_TMA_LOAD", g, stage, (MN, K), value_type=dtype)
        params = tensor_map_params(tma)
        if gMN % MN or gK % K:
            raise ValueError(f"the global tensor ({gMN}, {gK}) is not a whole number of ({MN}, {K}) tiles")
        if not 0 <= kt < gK // K:
            raise ValueError(f"k-tile {kt} is out of range: the global tensor has {gK // K} k-tiles of {K}")
        tiles = local_tile(tma.get_tma_tensor(g.shape), (MN, K), (_, _))
        tiles = tiles.view(group(tiles.layout, 0, 2))
        gpart, spart = tma_partition(tma, 0, Layout(1), group(stage.layout_b, 0, 2), tiles)
        boxes = [(tuple(int(x) for x in gpart((0, i), 0, kt)), int(spart(((0, i),))) * bits // 8)
                 for i in range(tma.num_tma)]
        chunks = _stage_chunks(stage, major, bits)
    except ERRORS as e:
        return _error(e), None
    name = f"GMMA::Layout_{major}_{swizzle}_Atom<{dtype}>"
    lines = [f"layout atom {name}:", f"  {atom}",
             f"tile_to_shape(atom, ({MN},{K}){'' if order == 'MN first' else ', (1,0)'}), one stage (the atoms "
             f"{order}):", f"  {stage}",
             f"  in elements (what cp.async would index): {stage.element_layout()}",
             "",
             f"a wgmma reads K in k-blocks of {kblock} {dtype} (32 bytes): {K // kblock} descriptors of ({MN},{kblock}) "
             "slices, start address 0 (a kernel adds the stage's address, in 16-byte units):",
             "  k-block  start  LBO  SBO  base  layout type   64-bit descriptor"]
    lines += [f"  {b:7d} {d.start_address:6d} {d.leading_byte_offset:4d} {d.stride_byte_offset:4d} {d.base_offset:5d}"
              f"  {d.layout_type} {LAYOUT_TYPES[d.layout_type]:11s} 0x{d.desc:016x}" for b, d in enumerate(descs)]
    order = "(MN, K):(K, 1), K-major" if major == "K" else "(MN, K):(1, MN), MN-major"
    lines += ["", f"TMA: SM90_TMA_LOAD of a ({gMN}, {gK}) {dtype} tensor {order}, one ({MN},{K}) tile a stage:",
              f"  box {tma.box} (innermost dimension first), {tma.tma_bytes} bytes; {tma.num_tma} box"
              f"{'es' if tma.num_tma > 1 else ''} a stage; expect_tx {tma.transaction_bytes} bytes",
              f"  tensor map: dims {params.dims}, strides {params.strides} bytes, box {params.box}, swizzle "
              f"{SWIZZLES[params.swizzle][0]}",
              f"  k-tile {kt} of tile row 0:"]
    lines += [f"    box {i}: TMA coordinate {c} -> byte {b} of the stage" for i, (c, b) in enumerate(boxes[:MAX_BOXES])]
    if len(boxes) > MAX_BOXES:
        lines.append(f"    ... {len(boxes) - MAX_BOXES} more, to box {len(boxes) - 1}: TMA coordinate {boxes[-1][0]} -> "
                     f"byte {boxes[-1][1]}")
    per = 128 // bits
    line = "row x of the tile (m = x), its K" if major == "K" else "column x of the tile (k = x), its MN"
    lines.append(f"picture: the stage in 16-byte chunks: column x is {line} in 16-byte chunks downwards; each chunk coloured by the group of 4 banks it lands in (address / 16 "
                 "mod 8; numbered by its address / 16 where the labels fit); k-block 0's chunks outlined")
    first = [(c, x) for c in range(len(chunks)) for x in range(len(chunks[0]))
             if (c < kblock // per if major == "K" else x < kblock)]
    return "\n".join(lines) + "\n", (chunks, first)


# ---- chapter 10: one row of the online softmax, block by block -----------------------------------------------
MAX_KEYS = 64                                         # scores an online-softmax row may have
ONLINE_SOFTMAX_FIELDS = (("scores", "scores", None), ("block", "block", None), ("step", "after block", None),
                         ("scale", "scale", None))


def _scores(box):
    """The scores typed in a box: numbers separated by commas or spaces (brackets allowed), -inf for a masked
    key; read with float(), nothing evaluated."""
    words = _text(box, "scores").replace("[", " ").replace("]", " ").replace("(", " ").replace(")", " ")
    words = words.replace(",", " ").split()
    if len(words) > MAX_KEYS:
        raise Refused(f"{len(words)} scores; the explorer walks at most {MAX_KEYS} keys")
    try:
        return [float(w) for w in words]
    except ValueError:
        raise ValueError(f"scores must be numbers separated by commas (-inf for a masked key), got {box!r}") from None


def _number(x):
    return "-inf" if x == -float("inf") else f"{x:.4g}"


def online_softmax_result(scores="1.0, 0.5, 2.5, -1.0, 3.0, 0.0, 4.5, 1.5", block="3", step="1", scale="1"):
    """(text, (x, weights now, final weights, keys seen, block) or None) for the online softmax explorer: the
    row walked `block` keys at a time (cutelite.teach.softmax.online_softmax) up to block `step` (from 0): each
    block's running max, rescale factor and running sum, and the weight each key seen so far has in the output
    if the row ended there (exp2(x - m) / l), beside the softmax of the whole row."""
    from .softmax import direct_softmax, online_softmax
    try:
        row = _scores(scores)
        b, k = _int(block, "block"), _int(step, "after block")
        try:
            a = float(_text(scale, "scale"))
        except ValueError:
            raise ValueError(f"scale must be a number, got {scale!r}") from None
        steps = online_softmax(row, b, scale=a)
        if not 0 <= k < len(steps):
            raise ValueError(f"after block {k}: the row has blocks 0 to {len(steps) - 1}")
    except ERRORS as e:
        return _error(e), None
    now = steps[k]
    seen = now.keys[1]
    final = direct_softmax(row, a)
    weights = [0.0 if now.l == 0 else 2.0 ** (x - (now.m_new if now.m_new > -float("inf") else 0.0)) / now.l
               for x in (s * a * LOG2E for s in row[:seen])]
    lines = [f"{len(row)} scores in blocks of {b}: x = s * scale * log2(e), scale = {a:g}",
             f"{'block':>5s} {'keys':>7s} {'max(x)':>9s} {'m_old':>9s} {'m_new':>9s} {'rescale':>9s} {'l':>9s}"]
    for st in steps[:k + 1]:
        lines.append(f"{st.block:5d} {f'{st.keys[0]}..{st.keys[1] - 1}':>7s} {_number(max(st.x)):>9s} "
                     f"{_number(st.m_old):>9s} {_number(st.m_new):>9s} {_number(st.rescale):>9s} {_number(st.l):>9s}")
    lines += ["", f"after block {k}: the weights exp2(x - m) / l of keys 0..{seen - 1} (the output if the row "
                  "ended here) and the softmax of the whole row:",
              "key    " + " ".join(f"{j:>6d}" for j in range(len(row))),
              "now    " + " ".join(f"{w:6.3f}" for w in weights) + "       -" * (len(row) - seen),
              "final  " + " ".join(f"{w:6.3f}" for w in final)]
    if k == len(steps) - 1:
        same = all(abs(w - f) <= 1e-12 for w, f in zip(weights, final))
        lines.append("last block: the online weights " + ("are the softmax (every one within 1e-12)" if same else
                                                          "differ from the softmax by more than 1e-12"))
    x = [s * a * LOG2E for s in row]
    return "\n".join(lines) + "\n", (x, weights, final, b)
