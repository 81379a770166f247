"""TiledCopy and TiledMMA inside a traced kernel: a thread's slice, taken with a run-time thread index.

cutelite's TiledCopy and TiledMMA work out, for a whole tile, which thread holds which value. In a kernel
the thread index is known only at run time, so `get_slice(tid)` here keeps it symbolic: a partition is
cutelite's partition with the thread mode sliced at `tid`, which adds one run-time term (what the
thread's coordinate contributes) and leaves every other mode static.

    thr = tiled_copy.get_slice(tid)        # tiled_copy: cutelite's, wrapped by the kernel's arguments
    tAgA, tAsA = thr.partition_S(gA), thr.partition_D(sA)
    thr_mma = tiled_mma.get_slice(tid)
    tCrA = thr_mma.partition_fragment_A(sA[_, _, 0])
"""

from cutelite import TiledCopy, TiledMMA, _, make_layout, make_tensor, rank, size
from cutelite.gmma import GMMA_Atom

from ..expr import is_sym
from .tensor import GTensor, RTensor, STensor
from .registers import make_fragment
from .wgmma import accumulator_fragment, descriptor_fragment, smem_layout_of

__all__ = ["JitTiledCopy", "JitTiledMMA", "wrap", "check_operand"]


def wrap(obj, name="tiled"):
    """A kernel argument (parameter `name`) as the kernel sees it: TiledCopy / TiledMMA get run-time slices."""
    if isinstance(obj, TiledCopy):
        return JitTiledCopy(obj, name)
    if isinstance(obj, TiledMMA):
        return JitTiledMMA(obj, name)
    return obj


def check_operand(atom, operand, dtype, name):
    """dtype, the element type of operand "A", "B" or "C" of an MMA atom (of TiledMMA argument `name`), or a
    TypeError naming both: the instruction reads its registers as its own types."""
    want = atom.types["ABC".index(operand) + 1]
    if dtype != want:
        raise TypeError("cutejit: %s's atom %s takes %s %s; the kernel gives it %s" % (name, atom.name, want,
                                                                                      operand, dtype))
    return dtype


# what a thread's slice of each kind offers: a call of the other kind's method names the argument's mistake
_METHODS = {"TiledCopy": ("partition_S", "partition_D", "retile_D", "retile_S"),
            "TiledMMA": ("partition_A", "partition_B", "partition_C", "partition_fragment_A", "partition_fragment_B",
                         "partition_fragment_C")}


class _JitThr:
    """One thread's share of a TiledCopy or TiledMMA argument (parameter `name`) for a run-time thread index."""

    kind = None

    def __init__(self, tiled, tid, name):
        self.tiled, self.tid, self.name = tiled, tid, name

    def __getattr__(self, attr):
        other = next((k for k, methods in _METHODS.items() if attr in methods and k != self.kind), None)
        if other is None:
            raise AttributeError("%s has no attribute %r" % (type(self).__name__, attr))
        raise TypeError("cutejit: %s is a %s, used as a %s (%s): %r" % (self.name, self.kind, other, attr, self.tiled))


def _flat_coord(layout, idx):
    """get_flat_coord for a run-time idx: per top-level mode of `layout`, the 1-D coordinate at which it
    takes the value idx (each leaf (idx / stride) % shape), as run-time values."""
    def hier(s, d):
        if isinstance(s, tuple):
            return tuple(hier(si, di) for si, di in zip(s, d))
        s, d = int(s), int(d)
        return 0 if s == 1 or d == 0 else (idx // d) % s

    h = hier(layout.shape, layout.stride)
    shape = layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)
    h = h if isinstance(layout.shape, tuple) else (h,)
    return tuple(_colex(c, s) for c, s in zip(h, shape))


def _colex(c, s):
    """crd2idx of a (possibly run-time) hierarchical coordinate into its compact 1-D index."""
    if not isinstance(s, tuple) or not isinstance(c, tuple):
        return c              # already the 1-D index of this mode
    out, p = 0, 1
    for ci, si in zip(c, s):
        out = out + _colex(ci, si) * p
        p *= size(si)
    return out


def _restage(x, layout):
    """x (a kernel tensor) with its static layout replaced by `layout` (a re-tiling of it)."""
    if isinstance(x, GTensor):
        return x._with(layout=layout)
    if isinstance(x, STensor):
        return STensor(x.mem, x.dtype, layout, x.swizzle, x.terms, x.outer)
    if isinstance(x, RTensor):
        return RTensor(layout, x.regs, x.dtype, x.bits, x.base)
    raise TypeError("cutejit: expected a kernel tensor (global, shared or registers), got %r" % (x,))


def _slice_thread(x, frg, thread, rest):
    """Slice the re-tiled tensor at (thread, rest...) and keep x's run-time modes after the static ones."""
    y = _restage(x, frg)
    coord = (thread,) + rest
    if isinstance(x, GTensor):
        coord += (_,) * len(x.dyn)
    return y[coord]


class JitThrCopy(_JitThr):
    """One thread's share of a TiledCopy (CuTe's ThrCopy) for a run-time thread index."""

    kind = "TiledCopy"

    def _partition(self, x, tidfrg):
        frg = tidfrg(x.layout)
        return _slice_thread(x, frg, self.tid, (_, (_,) * rank(x.layout) if rank(x.layout) > 1 else _))

    def partition_S(self, x):
        """(CPY, CPY_M, CPY_N, ...): this thread's source values, CPY = (atom values, atoms)."""
        return self._partition(x, self.tiled.tidfrg_S)

    def partition_D(self, x):
        return self._partition(x, self.tiled.tidfrg_D)

    def retile_D(self, x):
        """A register fragment made by someone else (partition_fragment_A) regrouped as the copy's values."""
        if not isinstance(x, RTensor):
            raise TypeError("cutejit: retile_D takes a register fragment, got %r" % (x,))
        return RTensor(self.tiled.retile(x.layout), x.regs, x.dtype, x.bits, x.base)

    retile_S = retile_D


class _JitTiled:
    """A cutelite TiledCopy or TiledMMA (the kernel's parameter `name`) whose get_slice takes a run-time
    thread index."""

    slice_class = None

    def __init__(self, tiled, name):
        self.tiled, self.name = tiled, name
        self.atom = tiled.atom

    def get_slice(self, tid):
        if not (is_sym(tid) or isinstance(tid, int)):
            raise TypeError("cutejit: %s.get_slice takes the thread index, got %r" % (self.name, tid))
        return self.slice_class(self.tiled, tid, self.name)

    def __getattr__(self, name):
        return getattr(self.tiled, name)

    def __repr__(self):
        return "%s (%r)" % (self.name, self.tiled)


class JitTiledCopy(_JitTiled):
    """cutelite's TiledCopy with get_slice(run-time thread index)."""
    slice_class = JitThrCopy


class JitThrMMA(_JitThr):
    """One thread's share of a TiledMMA (CuTe's ThrMMA) for a run-time thread index."""

    kind = "TiledMMA"

    def __init__(self, tiled, tid, name):
        super().__init__(tiled, tid, name)
        v, m, n, k = _flat_coord(tiled.thr_layout_vmnk, tid)
        self.vmnk = (v, m, n, k)
        self._static = tiled.get_slice(0)

    def _partition(self, x, thrfrg, modes):
        frg = thrfrg(x.layout)
        thr_shape = frg.shape[0]
        v = self.vmnk[0]
        i, j = (self.vmnk[m] for m in modes)
        # mode 0 of the thrfrg layout is (ThrV, (ThrI, ThrJ)): its 1-D index at this thread
        idx = _colex((v, (i, j)), thr_shape)
        rest = (_, (_,) * (rank(frg, 1, 1)) if rank(frg, 1, 1) > 1 else _)
        return _slice_thread(x, frg, idx, (rest,))

    def partition_A(self, x):
        """(MMA, MMA_M, MMA_K): this thread's values of A's tile."""
        return self._partition(x, self.tiled.thrfrg_A, (1, 3))

    def partition_B(self, x):
        """(MMA, MMA_N, MMA_K)."""
        return self._partition(x, self.tiled.thrfrg_B, (2, 3))

    def partition_C(self, x):
        """(MMA, MMA_M, MMA_N)."""
        return self._partition(x, self.tiled.thrfrg_C, (1, 2))

    def _fragment(self, x, op, name, dtype):
        # a global tensor's layout counts coordinates: its registers are those of a column-major tile
        like = make_layout(x.layout.shape) if isinstance(x, GTensor) else x.layout
        layout = getattr(self._static, "partition_fragment_" + op)(like)
        return make_fragment(layout, check_operand(self.tiled.atom, op, dtype or x.dtype, self.name), name)

    def _gmma_smem(self, operand):
        atom = self.tiled.atom
        return isinstance(atom, GMMA_Atom) and (operand == "B" or atom.source == "SS")

    def partition_fragment_A(self, x, dtype=None):
        """Registers for A's partition (make_fragment_like): the same shape, compact. For a GMMA atom that
        reads A from shared memory: the partition's descriptors (wgmma.descriptor_fragment)."""
        if self._gmma_smem("A"):
            check_operand(self.tiled.atom, "A", x.dtype, self.name)
            return descriptor_fragment(self.partition_A(x),
                                       self._static.partition_fragment_A(make_tensor(smem_layout_of(x))))
        return self._fragment(x, "A", "rA", dtype)

    def partition_fragment_B(self, x, dtype=None):
        if self._gmma_smem("B"):
            check_operand(self.tiled.atom, "B", x.dtype, self.name)
            return descriptor_fragment(self.partition_B(x),
                                       self._static.partition_fragment_B(make_tensor(smem_layout_of(x))))
        return self._fragment(x, "B", "rB", dtype)

    def partition_fragment_C(self, x, dtype=None):
        """Accumulators for C's partition, compact column-major, of the atom's C type unless dtype says
        otherwise; for a GMMA atom, wgmma's accumulator tuples (wgmma.accumulator_fragment)."""
        if isinstance(self.tiled.atom, GMMA_Atom):
            like = make_layout(x.layout.shape) if isinstance(x, GTensor) else x.layout
            return accumulator_fragment(self._static.partition_fragment_C(like), self.tiled.atom)
        return self._fragment(x, "C", "rC", dtype or self.tiled.atom.types[3])


class JitTiledMMA(_JitTiled):
    """cutelite's TiledMMA with get_slice(run-time thread index)."""
    slice_class = JitThrMMA
