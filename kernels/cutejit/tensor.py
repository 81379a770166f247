"""Tensors inside a traced kernel: global, shared and register memory, each a static cutelite layout plus
whatever is left for run time.

    global  mA = (M, K) matrix argument      offset = sum over modes of coordinate * stride
    shared  sA = smem tensor of a layout     offset = layout(coordinate), swizzle included
    regs    rC = a fragment                  one Python variable per 32-bit register

A global tensor's layout maps its coordinates to coordinates of the whole matrix (CuTe's identity layout,
ScaledBasis strides): the matrix's strides are known only at run time, so they are applied last. A
shared tensor's layout maps coordinates to element offsets, and a swizzle, if any, is applied after the
offset of everything sliced away (CuTe's `Sw o offset o L`). Registers are named once and never move.

Slicing with `_` keeps a mode, with an int folds it into a constant, with a run-time value (a Sym: the
thread index, a block coordinate, a loop counter) adds a run-time term, the mode's layout evaluated at it
(kernels.layout_codegen.evaluate, which also writes the layout functions of the kernels written by hand).
A layout evaluated by mode is a sum over its modes, so what a run-time coordinate contributes is computed
once and every static coordinate that follows is a constant away from it.
"""

import itertools

from cutelite import Layout, ScaledBasis, get, rank, size, slice_and_offset
from cutelite.layout import Underscore

from ..expr import is_sym, src
from ..layout_codegen import evaluate
from .trace import current

__all__ = ["GTensor", "STensor", "RTensor", "local_tile", "make_identity_tensor"]


def _free(c):
    return c is None or isinstance(c, Underscore)


# ---- a static layout value as a coordinate of the matrix ------------------------------------------------
def _root(v, nroot):
    """A static layout value (an int, a ScaledBasis, an ArithmeticTuple) as a tuple of nroot ints."""
    if isinstance(v, ScaledBasis):
        out = [0] * nroot
        out[v.modes[0]] = int(v.value)
        return tuple(out)
    if isinstance(v, tuple):
        return tuple(int(x) for x in v) + (0,) * (nroot - len(v))
    if int(v) == 0:
        return (0,) * nroot
    if nroot == 1:
        return (int(v),)
    raise ValueError("cutejit: %r is not a coordinate of a rank-%d matrix" % (v, nroot))


# ---- slicing, shared by the three kinds --------------------------------------------------------------------
def _split_coord(layout, coord):
    """(static coordinate with 0 in place of run-time values, [(mode index, Sym), ...])."""
    if rank(layout) == 1 and not isinstance(coord, tuple):
        coord = (coord,)
    static, dynamic = [], []
    for i, c in enumerate(coord):
        if is_sym(c):
            dynamic.append((i, c))
            static.append(0)
        elif isinstance(c, tuple) and any(is_sym(v) for v in _flat(c)):
            raise NotImplementedError("cutejit: a run-time value inside a nested coordinate %r" % (c,))
        else:
            static.append(c)
    return tuple(static) if len(static) > 1 else static[0], dynamic


def _flat(c):
    return [w for v in c for w in _flat(v)] if isinstance(c, tuple) else [c]


def _mode(layout, i):
    return layout if rank(layout) == 1 and i == 0 and not isinstance(layout.shape, tuple) else get(layout, i)


class _Base:
    """What the three kinds share: a static layout (None for a tensor with only run-time modes)."""

    def __call__(self, *coord):
        return self[coord if len(coord) != 1 else coord[0]]

    @property
    def shape(self):
        return self.layout.shape

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, self.layout)


class GTensor(_Base):
    """Global memory (or, with mem=None, a tensor of coordinates: CuTe's identity tensor).

    layout: static layout, coordinate -> coordinate of the whole matrix (basis strides), or None;
    dyn:    run-time modes after the static ones, each (extent, step), step a coordinate of the matrix;
    origin: per matrix mode, the run-time terms added to every coordinate;
    matrix: the MatrixArg (name, dtype, shape and strides of the argument).
    """

    def __init__(self, matrix, layout, dyn, origin, mem=True):
        self.matrix, self.layout, self.dyn, self.origin, self.mem = matrix, layout, tuple(dyn), tuple(origin), mem

    @property
    def shape(self):
        """The static modes' shape, then the run-time modes' extents."""
        static = () if self.layout is None else self.layout.shape if rank(self.layout) > 1 else (self.layout.shape,)
        return tuple(static) + tuple(e for e, _ in self.dyn)

    @property
    def dtype(self):
        return self.matrix.dtype

    @property
    def nroot(self):
        return len(self.matrix.shape)

    def rank(self):
        return (0 if self.layout is None else rank(self.layout)) + len(self.dyn)

    def _with(self, layout=None, dyn=None, origin=None):
        return GTensor(self.matrix, self.layout if layout is None else layout, self.dyn if dyn is None else dyn,
                       self.origin if origin is None else origin, self.mem)

    def __getitem__(self, coord):
        coord = coord if isinstance(coord, tuple) else (coord,)
        ns = 0 if self.layout is None else rank(self.layout)
        if len(coord) != ns + len(self.dyn):
            raise ValueError("cutejit: %r has %d modes, sliced with %d coordinates" % (self, ns + len(self.dyn),
                                                                                   len(coord)))
        origin = [list(o) for o in self.origin]
        dyn = []
        for (extent, step), c in zip(self.dyn, coord[ns:]):
            if _free(c):
                dyn.append((extent, step))
            else:
                for m in range(self.nroot):
                    origin[m].append(c * step[m])
        layout = self.layout
        if ns:
            static, dynamic = _split_coord(self.layout, coord[:ns])
            layout, off = slice_and_offset(static, self.layout)
            off = _root(off, self.nroot)
            for m in range(self.nroot):
                origin[m].append(off[m])
            for i, s in dynamic:
                val = evaluate(_mode(self.layout, i), s, self.nroot)
                for m in range(self.nroot):
                    origin[m].append(val[m])
            if size(layout) == 1 and not dyn:
                layout = Layout(1, 0)
        return self._with(layout, dyn, [[t for t in o if not (isinstance(t, int) and t == 0)] for o in origin])

    # ---- what an element is: a coordinate of the matrix, or an offset into it ----
    def coord(self, c):
        """The coordinate in the matrix of static coordinate c (1-D) of the static modes: a tuple of
        ints/Syms, one per matrix mode."""
        static = _root(self.layout(c), self.nroot) if self.layout is not None else (0,) * self.nroot
        return tuple(sum(self.origin[m], 0) + static[m] for m in range(self.nroot))

    def contiguous(self, first, n, aligned=True):
        """Static coordinates first .. first + n - 1 are n consecutive elements along the matrix's unit-stride
        mode, and (if `aligned`) the first at a multiple of n there (the run-time origins are tile and thread
        offsets, which the kernels keep aligned; the simulator's twins check every access)."""
        unit = [m for m, st in enumerate(self.matrix.strides) if isinstance(st, int) and st == 1]
        if not unit or self.layout is None:
            return n == 1
        c0 = self.coord_static(first)
        want = lambda j: tuple(c0[m] + (j if m == unit[0] else 0) for m in range(self.nroot))
        return (c0[unit[0]] % n == 0 or not aligned) and all(self.coord_static(first + j) == want(j) for j in range(n))

    def coord_static(self, c):
        return _root(self.layout(c), self.nroot)

    def offset(self, c):
        """Element offset of static coordinate c from the matrix's first element (run-time terms that do
        not change inside loops are computed once, at the top of the kernel)."""
        t = current()
        static = self.coord_static(c) if self.layout is not None else (0,) * self.nroot
        inv, var, const = 0, 0, 0
        for m, stride in enumerate(self.matrix.strides):
            for term in self.origin[m]:
                if is_sym(term) and not term.invariant:
                    var = var + term * stride
                else:
                    inv = inv + term * stride
            const = const + static[m] * stride
        if is_sym(const):
            const = t.let(const, "g")
        return t.let(inv, "g") + var + const

    def __repr__(self):
        dyn = "".join(",%s" % src(e) for e, _ in self.dyn)
        return "GTensor(%s, %s%s)" % (self.matrix.name, self.layout, dyn)


class STensor(_Base):
    """Shared memory: a static layout (element offsets), an optional swizzle applied after the run-time
    terms, those terms, and an offset added outside the swizzle (e.g. the pipeline stage)."""

    def __init__(self, mem, dtype, layout, swizzle=None, terms=(), outer=0):
        self.mem, self.dtype, self.layout, self.swizzle = mem, dtype, layout, swizzle
        self.terms, self.outer = tuple(terms), outer

    def __getitem__(self, coord):
        coord = coord if isinstance(coord, tuple) else (coord,)
        if len(coord) != rank(self.layout):
            raise ValueError("cutejit: %r has %d modes, sliced with %d coordinates" % (self, rank(self.layout),
                                                                                   len(coord)))
        static, dynamic = _split_coord(self.layout, coord)
        layout, off = slice_and_offset(static, self.layout)
        terms, outer = list(self.terms), self.outer
        if off:
            terms.append((None, int(off)))
        for i, s in dynamic:
            mode = _mode(self.layout, i)
            if s.invariant:
                terms.append((mode, s))
            else:   # a loop variable (the stage): added outside the swizzle, where it must commute with it
                self._check_outside(mode)
                outer = outer + evaluate(mode, s)
        return STensor(self.mem, self.dtype, layout, self.swizzle, terms, outer)

    def _check_outside(self, mode):
        if self.swizzle is None:
            return
        P = self.swizzle.period
        bad = [mode(i) for i in range(size(mode)) if mode(i) % P]
        if bad:
            raise ValueError("cutejit: slicing %r with a run-time index: offset %d is not a multiple of %d, the "
                             "period of %s, so it cannot be added after the swizzle" % (self, bad[0], P, self.swizzle))

    def compose(self, layout):
        """The same shared memory seen through `layout` (CuTe's make_tensor(s.data(), composition(s.layout(),
        layout))): V's (BN, D) tile read as (D, BN), say."""
        from cutelite import composition
        return STensor(self.mem, self.dtype, composition(self.layout, layout), self.swizzle, self.terms, self.outer)

    def start(self):
        """The offset of element 0 as a run-time value, for an instruction that takes a whole tile's start
        (a TMA box, a wgmma descriptor): its run-time terms must commute with the swizzle."""
        total = self.outer
        for m, s in self.terms:
            if m is None:
                if self.swizzle is not None and s % self.swizzle.period:
                    raise ValueError("cutejit: %r starts at offset %d, inside a swizzle period: no tile starts "
                                     "there" % (self, s))
                total = total + s
            else:
                self._check_outside(m)
                total = total + evaluate(m, s)
        return total

    def _values(self):
        """Every value the run-time terms can take together (they are functions of thread coordinates)."""
        ranges = [[m(i) for i in range(size(m))] if m is not None else [s] for m, s in self.terms]
        return [sum(v) for v in itertools.product(*ranges)] if ranges else [0]

    def _key(self):
        return (self.mem, self.swizzle, tuple((m, s.src if is_sym(s) else s) for m, s in self.terms))

    def contiguous(self, first, n, aligned=True):
        """Values first .. first + n - 1 are n consecutive elements, and (if `aligned`) the first a multiple of
        n, for every value the run-time terms (thread coordinates) can take."""
        t = current()
        values = t.memo(("smem values",) + self._key(), self._values)
        sw = self.swizzle or (lambda x: x)
        inner = [self.layout(first + j) for j in range(n)]
        if aligned and isinstance(self.outer, int) and self.outer % n:
            return False
        return all((sw(v + inner[0]) % n == 0 or not aligned) and
                   all(sw(v + inner[j]) == sw(v + inner[0]) + j for j in range(n)) for v in values)

    def offset(self, c):
        """Element offset of static coordinate c (1-D) of the layout, as cheap as the layouts allow: one
        run-time base per class of offsets that differ by a constant for every thread."""
        t = current()
        inner = self.layout(c)
        if not self.terms:
            return (self.swizzle(inner) if self.swizzle else inner) + self.outer
        key = self._key()
        reps = t.memo(("smem classes",) + key, list)
        sw = self.swizzle or (lambda x: x)
        values = t.memo(("smem values",) + key, self._values)
        for r, base in reps:
            D = sw(values[0] + inner) - sw(values[0] + r)
            if all(sw(v + inner) - sw(v + r) == D for v in values):
                return base + D + self.outer
        total = inner
        for m, s in self.terms:
            total = total + (evaluate(m, s) if m is not None else s)
        base = t.let(self.swizzle(total) if self.swizzle else total, "s")   # cutelite's formula, on run-time values
        reps.append((inner, base))
        return base + self.outer

    def __repr__(self):
        return "STensor(%s, %s%s)" % (self.mem, "%s o " % self.swizzle if self.swizzle else "", self.layout)


class RTensor(_Base):
    """Registers: a static layout (element index), `offset` into a list of register variables `regs`
    (one per 32-bit register) holding `bits`-wide elements."""

    def __init__(self, layout, regs, dtype, bits, offset=0):
        self.layout, self.regs, self.dtype, self.bits, self.base = layout, regs, dtype, bits, offset

    def __getitem__(self, coord):
        coord = coord if isinstance(coord, tuple) else (coord,)
        if any(is_sym(c) for c in _flat(coord)):
            raise ValueError("cutejit: registers cannot be indexed by a run-time value (%r)" % (coord,))
        layout, off = slice_and_offset(coord if len(coord) > 1 else coord[0], self.layout)
        return RTensor(layout, self.regs, self.dtype, self.bits, self.base + int(off))

    def element(self, c):
        """(register name, which part) of static coordinate c (1-D): part is 0 for 32-bit elements,
        0/1 for the low/high half of a register of two 16-bit elements."""
        e = self.base + self.layout(c)
        per = 32 // self.bits
        return self.regs[e // per], e % per

    def words(self, first, n):
        """The registers of elements first .. first + n - 1 (n * bits a multiple of 32), checking that
        they fill whole registers in order (16-bit pairs travel packed)."""
        per = 32 // self.bits
        out = []
        for w in range(0, n, per):
            reg, part = self.element(first + w)
            if part != 0 or any(self.element(first + w + j) != (reg, j) for j in range(per)):
                raise ValueError("cutejit: elements %d..%d of %r do not fill one register in order"
                                 % (first + w, first + w + per - 1, self))
            out.append(reg)
        return out


# ---- tiles of a whole matrix -------------------------------------------------------------------------------
class _Shape:
    """The matrix an identity tensor counts the coordinates of: only a shape."""

    def __init__(self, shape):
        self.name, self.shape, self.dtype, self.strides = "coords", tuple(shape), "int32", None


def make_identity_tensor(shape):
    """The tensor whose element at (m, k) is the coordinate (m, k) itself (CuTe's identity tensor), for a
    run-time shape: partition it as the data is partitioned, and elem_less(...) predicates the copies."""
    n = len(shape)
    unit = [tuple(1 if j == m else 0 for j in range(n)) for m in range(n)]
    return GTensor(_Shape(shape), None, list(zip(shape, unit)), [[] for _ in range(n)], mem=False)


def _matrix_modes(x):
    """Which mode of its matrix each of x's modes is (x may have sliced some away: mQ[b, _, h, _])."""
    return [step.index(1) for _, step in x.dyn]


def _per_matrix_mode(x, tiler):
    """A tiler of x's modes as one of its matrix's modes (1 in the modes sliced away)."""
    full = [1] * x.nroot
    for m, t in zip(_matrix_modes(x), tiler):
        full[m] = t
    return tuple(full)


def local_tile(x, tiler, coord):
    """The tile of the whole matrix x (a kernel argument, one with modes sliced away at run-time indices, as
    mQ[b, _, h, _], or an identity tensor) at `coord`: CuTe's local_tile.
    tiler gives the tile's extent per mode; coord per mode an index (int or run-time) or _ to keep every
    tile (a run-time mode). Result: the tile's modes (static), then the kept modes."""
    if not isinstance(x, GTensor) or x.layout is not None:
        raise TypeError("cutejit: local_tile takes a whole matrix (a Matrix argument or identity tensor), got %r"
                        % (x,))
    n = len(x.dyn)
    if len(tiler) != n or len(coord) != n:
        raise ValueError("cutejit: local_tile of a rank-%d matrix needs %d tile extents and coordinates, got %r, %r"
                         % (n, n, tiler, coord))
    if x.mem:                             # what the kernel assumes of the matrix, asked at launch
        x.matrix.tiled_by(_per_matrix_mode(x, tiler))
    origin = [list(o) for o in x.origin]
    dyn = []
    for (extent, step), t, c in zip(x.dyn, tiler, coord):
        if _free(c):
            dyn.append(((extent + (t - 1)) // t, tuple(t * s for s in step)))
        else:
            origin[step.index(1)].append(c * t)
    layout = Layout(tuple(tiler), tuple(ScaledBasis(1, (m,)) for m in _matrix_modes(x)))   # coordinates of the matrix
    return x._with(layout=layout, dyn=dyn, origin=origin)
