"""Between two GEMMs: an accumulator fragment's rows, reductions over them, float math, and its values
converted to 16 bits and re-laid as the A operand of the next mma (what attention does to S = Q K^T).

Each thread of a TiledMMA holds values of a few rows of the C tile; the rest of each row sits in other lanes
of its warp. Which lanes is a fact of the C layout, so `AccRows` reads it from the TiledMMA (cutelite's
partitions of an identity tensor, thread by thread): the (ROW, COL) view of a thread's accumulators (CuTe
FlashAttention's `make_acc_tensor_mn_view`), and the xor masks that join the lanes of one row (a butterfly of
`shfl.bfly`, one step per mask). `retile_C_as_A` finds, the same way, the A-operand layout of registers that
hold a C fragment: the values of P that one thread holds as C are the values it needs as A (CuTe's
`make_tensor(rP.data(), convert_layout_acc_Aregs(...))`), so no value moves between threads.

Float math is written with `F`, a float32 expression of the generated code: `val(x)` reads a register,
`store(x, f)` writes one, `bind(f)` computes one into a variable, `exp2`, `log`, `fmax` and `where` build
expressions.
"""

import math

import numpy as np

from cutelite import Layout, ScaledBasis, make_identity_tensor, make_layout, rank, size
from cutelite.layout import flatten

from ..expr import src
from .registers import element_type, make_fragment
from .tensor import GTensor, RTensor
from .trace import current

__all__ = ["F", "val", "store", "bind", "exp2", "log", "fmax", "where", "AccRows", "row_reduce", "convert",
           "retile_C_as_A"]


# ---- float32 expressions ----------------------------------------------------------------------------------
class F:
    """A float32 value of the generated code (its source text). Python numbers become float32 constants, so
    no operation is promoted to float64."""

    def __init__(self, text):
        self.text = text

    def _bin(self, op, other, swap=False):
        a, b = (_f(other), self) if swap else (self, _f(other))
        return F("(%s %s %s)" % (a.text, op, b.text))

    def __add__(self, o):
        return self._bin("+", o)

    def __radd__(self, o):
        return self._bin("+", o, True)

    def __sub__(self, o):
        return self._bin("-", o)

    def __rsub__(self, o):
        return self._bin("-", o, True)

    def __mul__(self, o):
        return self._bin("*", o)

    def __rmul__(self, o):
        return self._bin("*", o, True)

    def __truediv__(self, o):
        return self._bin("/", o)

    def __rtruediv__(self, o):
        return self._bin("/", o, True)

    def __eq__(self, o):
        return self._bin("==", o)

    __hash__ = None

    def __repr__(self):
        return "F(%r)" % self.text


_NEG_INF, _POS_INF = np.float32(-np.inf), np.float32(np.inf)


def _f(x):
    if isinstance(x, F):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        t = current()
        t.use("float32", np.float32)
        if math.isinf(x):
            return F(t.use("NEG_INF", _NEG_INF) if x < 0 else t.use("POS_INF", _POS_INF))
        return F("float32(%r)" % float(x))
    raise TypeError("cutejit: float math takes float32 expressions or numbers, got %r" % (x,))


def _scalar(x, op):
    if not isinstance(x, RTensor) or size(x.layout) != 1 or x.dtype != "float32":
        raise TypeError("cutejit: %s takes one float32 register (a fragment sliced to one value), got %r" % (op, x))
    return x.element(0)[0]


def val(x):
    """The value of a one-element float32 fragment, as an expression."""
    return F(_scalar(x, "val"))


def store(x, value):
    """x = value, for a one-element float32 fragment, or one float32 element of global memory (a matrix
    argument sliced to one element at run-time indices: mLSE[b, h, i])."""
    if isinstance(x, GTensor) and x.mem and x.dtype == "float32" and x.layout is None and not x.dyn:
        from .. import instructions
        t = current()
        st = t.use("st_global_v1_f32", instructions.st_global_v1_f32)
        t.emit("%s(%s, %s, %s)" % (st, x.matrix.name, src(x.offset(0)), _f(value).text))
        return
    current().emit("%s = %s" % (_scalar(x, "store"), _f(value).text))


def bind(x, hint="f"):
    """x computed once, into a new variable of the generated code: its value as of this line."""
    t = current()
    name = t.fresh(hint)
    t.emit("%s = %s" % (name, _f(x).text))
    return F(name)


def exp2(x):
    """2**x with ex2.approx.ftz.f32 (fast math: about 2 ulp, subnormals flushed)."""
    from .. import instructions
    return F("%s(%s)" % (current().use("exp2_approx", instructions.exp2_approx), _f(x).text))


def log(x):
    """The natural logarithm (logf: once per row, not in the loop)."""
    return F("%s.log(%s)" % (current().use("math", math), _f(x).text))


def fmax(a, b):
    return F("max(%s, %s)" % (_f(a).text, _f(b).text))


def where(cond, a, b):
    """a where the run-time condition holds (a Sym, or an F comparison), else b."""
    c = cond.text if isinstance(cond, F) else src(cond)
    return F("(%s if %s else %s)" % (_f(a).text, c, _f(b).text))


# ---- the rows of an accumulator ------------------------------------------------------------------------------
def _leaves(layout):
    flat = flatten(layout)
    shape = flat.shape if isinstance(flat.shape, tuple) else (flat.shape,)
    stride = flat.stride if isinstance(flat.shape, tuple) else (flat.stride,)
    return list(zip(shape, stride))


def _layout(leaves):
    """A layout of these (shape, stride) leaves as one mode."""
    if not leaves:
        return Layout(1, 0)
    if len(leaves) == 1:
        return Layout(*leaves[0])
    return Layout(tuple(s for s, _ in leaves), tuple(d for _, d in leaves))


class AccRows:
    """The rows of the C fragment that partition_fragment_C(tile) makes, for every thread of `tiled_mma`.

    layout: (ROW, COL) -> register index of the fragment: row r of the view is the r-th row (in increasing
            order) the thread holds, column c its c-th value there.
    masks:  the xor masks that reach, from a lane, every other lane holding the same rows (a butterfly).
    A ValueError where the layout has no such rows: a mode that mixes rows and columns, lanes that share some
    rows but not all, lanes of a row that no butterfly joins, or rows shared across warps (a reduction
    through shared memory, which this does not do).
    """

    def __init__(self, tiled_mma, tile):
        tiled = getattr(tiled_mma, "tiled", tiled_mma)
        self.tile = tuple(tile)
        ident = make_identity_tensor(self.tile)
        thr0 = tiled.get_slice(0)
        frag = thr0.partition_fragment_C(make_layout(self.tile))
        coords = thr0.partition_C(ident).layout
        rows, cols = [], []
        for (s, f), (_, c) in zip(_leaves(frag), _leaves(coords)):
            if s == 1:
                continue
            if not isinstance(c, ScaledBasis) or len(c.modes) != 1:
                raise ValueError("cutejit: AccRows: a mode of %d values of %s maps to %s, not to one mode of the tile"
                                 % (s, coords, c))
            (rows if c.modes[0] == 0 else cols).append((int(c.value), s, f))
        self.layout = make_layout(_layout([(s, f) for _, s, f in sorted(rows)]),
                                  _layout([(s, f) for _, s, f in sorted(cols)]))
        self.threads = size(tiled.thr_layout_vmnk)
        self.masks = self._masks(tiled, ident)

    def _masks(self, tiled, ident):
        held = [frozenset(r for r, _ in coords) for coords in _thread_coords(tiled, "C", ident)]
        groups = set()
        for t in range(self.threads):
            mates = [u for u in range(self.threads) if held[u] & held[t]]
            if any(held[u] != held[t] for u in mates):
                raise ValueError("cutejit: AccRows: threads %s hold overlapping but different rows of %s"
                                 % (mates, self.tile))
            if any(u // 32 != t // 32 for u in mates):
                raise ValueError("cutejit: AccRows: rows of thread %d are shared with threads %s of other warps"
                                 % (t, mates))
            groups.add(frozenset(t ^ u for u in mates))
        if len(groups) != 1:
            raise ValueError("cutejit: AccRows: the lanes sharing a row differ from thread to thread: %s"
                             % sorted(map(sorted, groups)))
        xors = next(iter(groups))
        masks = tuple(sorted(m for m in xors if m & (m - 1) == 0 and m))
        span = {0}
        for m in masks:
            span |= {x ^ m for x in span}
        if span != set(xors):
            raise ValueError("cutejit: AccRows: lanes joined by xors %s are not reached by a butterfly"
                             % sorted(xors))
        return masks

    def view(self, acc):
        """The accumulator fragment seen as (ROW, COL)."""
        if not isinstance(acc, RTensor) or size(acc.layout) != size(self.layout):
            raise ValueError("cutejit: AccRows.view: expected the %d-value C fragment of a %s tile, got %r"
                             % (size(self.layout), self.tile, acc))
        return RTensor(self.layout, acc.regs, acc.dtype, acc.bits, acc.base)


def row_reduce(x, op, masks, init=None):
    """Per row of x (ROW, COL) float32 (or (ROW,): one value a row): op ("max" or "sum") over its values, then
    over the lanes that the xor `masks` join (AccRows.masks; () for this thread's part alone), one shfl.bfly a
    mask. init: a (ROW,) fragment folded in first. Returns a new (ROW,) float32 fragment."""
    if op not in ("max", "sum"):
        raise ValueError("cutejit: row_reduce: op must be 'max' or 'sum', got %r" % (op,))
    from .. import instructions
    t = current()
    comb = (lambda a, b: fmax(a, b)) if op == "max" else (lambda a, b: _f(a) + b)
    nrow, ncol = size(x.layout, 0), (size(x.layout, 1) if rank(x.layout) > 1 else 1)
    at = (lambda r, c: x[r, c]) if rank(x.layout) > 1 else (lambda r, c: x[r])
    out = make_fragment(Layout(nrow), "float32", "red")
    shfl = t.use("shfl_xor_sync", instructions.shfl_xor_sync)
    for r in range(nrow):
        acc = val(init[r]) if init is not None else val(at(r, 0))
        for c in range(0 if init is not None else 1, ncol):
            acc = comb(acc, val(at(r, c)))
        store(out[r], acc)
        for m in masks:
            store(out[r], comb(val(out[r]), F("%s(0xFFFFFFFF, %s, %d)" % (shfl, _scalar(out[r], "row_reduce"), m))))
    return out


# ---- to 16 bits, as the next mma's A ---------------------------------------------------------------------
def convert(acc, dtype):
    """A new fragment of the same layout holding acc's float32 values rounded to `dtype` (float16 or bfloat16),
    two to a register."""
    e = element_type(dtype, "convert")
    if acc.dtype != "float32" or e.bits != 16:
        raise TypeError("cutejit: convert: float32 accumulators to a 16-bit type, got %s to %s" % (acc.dtype, e.name))
    from .. import instructions
    t = current()
    pack = "pack_half2" if e.name == "float16" else "pack_bf16x2"
    fn = t.use(pack, getattr(instructions, pack))
    n = size(acc.layout)
    out = make_fragment(Layout(n), e.name, "p")
    out = RTensor(acc.layout, out.regs, out.dtype, out.bits)
    for k in range(n // 2):
        t.emit("%s = %s(%s, %s)" % (out.regs[k], fn, acc.regs[acc.base + 2 * k], acc.regs[acc.base + 2 * k + 1]))
    return out


def _thread_coords(tiled, operand, ident):
    """For every thread, the (m, n) (or (m, k)) coordinate of each value of its partition of the identity
    tensor `ident`: thread 0's partition's layout (the same for every thread) plus each thread's origin."""
    part = lambda t: getattr(tiled.get_slice(t), "partition_" + operand)(ident)     # noqa: E731
    layout = part(0).layout
    rel = [tuple(int(x) for x in _as_pair(layout(i))) for i in range(size(layout))]
    out = []
    for t in range(size(tiled.thr_layout_vmnk)):
        m0, n0 = (int(x) for x in part(t)(0))
        out.append([(m0 + m, n0 + n) for m, n in rel])
    return out


def _as_pair(v):
    """A coordinate layout's value (0, a ScaledBasis or an arithmetic tuple) as (m, n)."""
    if isinstance(v, ScaledBasis):
        return tuple(int(v.value) if v.modes[0] == k else 0 for k in range(2))
    return (0, 0) if not isinstance(v, tuple) and int(v) == 0 else tuple(v)


def retile_C_as_A(tiled_mma, frag, tile):
    """frag, a fragment laid out as partition_fragment_C of an (M, N) `tile`, seen as partition_fragment_A of the
    same tile read as (M, K): each A value is the register of the C value at the same (m, n) coordinate. The
    layout is found for thread 0 and checked for every thread (no value changes hands)."""
    tiled = getattr(tiled_mma, "tiled", tiled_mma)
    ident = make_identity_tensor(tuple(tile))
    thr0 = tiled.get_slice(0)
    a_frag = thr0.partition_fragment_A(make_layout(tuple(tile)))
    c_frag = thr0.partition_fragment_C(make_layout(tuple(tile)))
    if size(frag.layout) != size(c_frag):
        raise ValueError("cutejit: retile_C_as_A: %r is not the C fragment of a %s tile (%s)" % (frag, tile, c_frag))
    n = size(a_frag)
    table = None
    for t, (ca, cc) in enumerate(zip(_thread_coords(tiled, "A", ident), _thread_coords(tiled, "C", ident))):
        where_c = {c: c_frag(j) for j, c in enumerate(cc)}
        mine = [where_c.get(c) for c in ca]
        if None in mine:
            raise ValueError("cutejit: retile_C_as_A: thread %d needs as A values it does not hold as C" % t)
        if table is None:
            table = mine
        elif mine != table:
            raise ValueError("cutejit: retile_C_as_A: thread %d's A values sit elsewhere in its C fragment" % t)
    layout = _fit(a_frag.shape, table)
    return RTensor(layout, frag.regs, frag.dtype, frag.bits, frag.base)


def _fit(shape, table):
    """The layout of `shape` with table[i] == layout(i) for every 1-D index i (a ValueError if none has)."""
    probe = make_layout(shape)
    strides, p = [], 1
    for s, _ in _leaves(probe):
        strides.append(table[p] - table[0] if s > 1 else 0)
        p *= s
    flat = Layout(tuple(s for s, _ in _leaves(probe)), tuple(strides))
    if table[0] != 0 or any(flat(i) != table[i] for i in range(len(table))):
        raise ValueError("cutejit: retile_C_as_A: the A values' registers %s follow no layout of %s" % (table, shape))
    return _unflatten(flat, shape)


def _unflatten(flat, shape):
    """flat's strides regrouped into `shape`'s nesting."""
    strides = iter(flat.stride)

    def nest(s):
        return tuple(nest(x) for x in s) if isinstance(s, tuple) else next(strides)

    return Layout(shape, nest(shape))
