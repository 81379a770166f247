"""Warpgroup MMA (Hopper's wgmma) inside a traced kernel: descriptors of shared-memory operands, a
warpgroup's accumulators, and the asynchronous protocol.

    thr_mma = tiled_mma.get_slice(tid)          # a TiledMMA of GMMA atoms (cutelite.gmma)
    tCrA = thr_mma.partition_fragment_A(sA)      # (1, MMA_M, MMA_K, PIPE) descriptors, not values
    tCrB = thr_mma.partition_fragment_B(sB)      # (1, MMA_N, MMA_K, PIPE)
    acc = thr_mma.partition_fragment_C(gC)       # the thread's share of the accumulators
    warpgroup_arrive(acc)                        # wgmma.fence: the accumulator registers are ready
    gemm(tiled_mma, tCrA[_, _, _, s], tCrB[_, _, _, s], acc, accumulate=...)
    warpgroup_commit()                           # wgmma.commit_group: the wgmmas so far are one group
    warpgroup_wait(1, acc)                       # wgmma.wait_group 1: all but the last group are done

An SS atom reads A and B from shared memory through 64-bit descriptors (PTX ISA, "Matrix Descriptor
Format"). As in C++ CuTe's make_fragment_A, the fragment of a shared-memory partition is a tensor of
descriptors: cutelite's (a GMMA::DescriptorIterator tensor, its descriptor made by make_gmma_desc from
the partition's mode-0 layout, its other modes steps of the start address in 16-byte units), moved here to
the run-time address. The address is the unswizzled one: wgmma applies the swizzle itself.
"""

from cutelite import Swizzle, _, rank, size, slice_and_offset
from cutelite.gmma import GMMA_Atom, GmmaSmemLayout
from cutelite.numeric import numeric

from ..expr import Sym, is_sym, src
from ..layout_codegen import evaluate
from .tensor import RTensor, STensor
from .trace import current

__all__ = ["DescTensor", "Accumulator", "smem_layout_of", "descriptor_fragment", "accumulator_fragment",
           "warpgroup_arrive",
           "warpgroup_commit", "warpgroup_wait", "gemm_gmma"]


def _intrinsic(name):
    from .. import instructions
    return current().use(name, getattr(instructions, name))


def _signed64(x):
    """A 64-bit pattern as the int64 Numba computes with (wgmma reinterprets it as .b64)."""
    return x - (1 << 64) if x >= 1 << 63 else x


class DescTensor:
    """A tensor of wgmma descriptors: `hi` (every field but the start address), a static layout of start
    address steps in 16-byte units, and a run-time base address in 16-byte units."""

    def __init__(self, layout, hi, base):
        self.layout, self.hi, self.base = layout, hi, base

    def __getitem__(self, coord):
        coord = coord if isinstance(coord, tuple) else (coord,)
        if len(coord) != rank(self.layout):
            raise ValueError("cutejit: %r has %d modes, sliced with %d coordinates" % (self, rank(self.layout),
                                                                                   len(coord)))
        static = tuple(0 if is_sym(c) else c for c in coord)
        layout, off = slice_and_offset(static, self.layout)
        base = self.base + int(off)
        for i, c in enumerate(coord):
            if is_sym(c):
                base = base + evaluate(_mode(self.layout, i), c)
        return DescTensor(layout, self.hi, base)

    def value(self, c):
        """The descriptor of static coordinate c (1-D), as run-time source text."""
        return self.base + self.layout(c) + self.hi

    def __repr__(self):
        return "DescTensor(%s)" % (self.layout,)


def _mode(layout, i):
    from cutelite import get
    return layout if rank(layout) == 1 else get(layout, i)


def smem_layout_of(x):
    """The GMMA shared-memory layout of a kernel's shared tensor x (its swizzle back on bytes), for cutelite."""
    if not isinstance(x, STensor):
        raise TypeError("cutejit: a GMMA operand is a shared-memory tensor, got %r" % (x,))
    bits = numeric(x.dtype).bits
    shift = (bits // 8).bit_length() - 1                   # log2(bytes per element)
    sw = x.swizzle or Swizzle(0, 4 - shift, 3)
    return GmmaSmemLayout(Swizzle(sw.bits, sw.base + shift, sw.shift), bits, x.layout)


def descriptor_fragment(x, fragment0):
    """make_fragment_A/B of a GMMA SS atom on this thread's shared-memory partition x (MMA, MMA_M|N, MMA_K[,
    PIPE]): cutelite's descriptor fragment of thread 0 (`fragment0`, over the same layout at byte 0: its
    descriptor and its layout of steps in 16-byte units), moved to x's run-time start (the shared memory's
    address, the tensor's place in it, this thread's tile)."""
    if not isinstance(x, STensor):
        raise TypeError("cutejit: a descriptor fragment is made from a shared-memory partition, got %r" % (x,))
    t = current()
    desc = fragment0.engine.desc
    byte = x.start() * (numeric(x.dtype).bits // 8)        # the partition's first element, unswizzled (wgmma swizzles)
    if isinstance(byte, int) and byte % 16:
        raise ValueError("cutejit: descriptor fragment: %r starts %d bytes in, not at a 16-byte boundary" % (x, byte))
    addr16 = t.memo(("saddr16", x.mem), lambda: _hoist_address(t, x.mem))
    base = addr16 + byte // 16 - desc.start_address
    if is_sym(base) and base.invariant:
        base = t.let(base, "dsc")
    return DescTensor(fragment0.layout, _signed64(desc.desc), base)


def _hoist_address(t, mem):
    """The shared-memory address of the array `mem`, in 16-byte units (a descriptor's start address)."""
    import numba
    fn = _intrinsic("shared_address")
    t.use("int64", numba.int64)
    name = "saddr16_" + mem
    t.hoist("%s = int64(%s(%s, 0)) >> 4" % (name, fn, mem))
    return Sym(name, True)


class Accumulator(RTensor):
    """A warpgroup's wgmma accumulators: one Numba tuple of float32 per (m, n) atom of the thread's
    partition (what wgmma reads and writes whole), its element e the tuple's value e % V (V = the atom's
    values per thread, in wgmma's register order, which is the atom's LayoutC_TV value order)."""

    def __init__(self, layout, names, per_atom):
        regs = ["%s[%d]" % (n, v) for n in names for v in range(per_atom)]
        super().__init__(layout, regs, "float32", 32)
        self.names, self.per_atom = names, per_atom


def accumulator_fragment(layout, atom):
    """partition_fragment_C of a GMMA TiledMMA: `layout` is the compact (MMA, MMA_M, MMA_N) fragment; the
    tuples start uninitialised (the first wgmma of a tile runs with accumulate=False)."""
    t = current()
    v = size(layout, 0)
    atoms = size(layout) // v
    n = atom.Shape_MNK[1]
    fn = _intrinsic("wgmma_uninit")
    names = []
    for _ in range(atoms):
        name = t.fresh("acc")
        t.emit("%s = %s(%d)" % (name, fn, n))
        names.append(name)
    return Accumulator(layout, names, v)


def _check_acc(acc, what):
    if not isinstance(acc, Accumulator):
        raise TypeError("cutejit: %s takes the accumulator of partition_fragment_C (a GMMA TiledMMA), got %r"
                        % (what, acc))


def warpgroup_arrive(acc):
    """wgmma.fence (CuTe's name; a fence, not an arrival): the warpgroup's accesses to the accumulator
    registers before it are ordered before the wgmmas after it. Shared memory written by the threads needs
    fence.proxy.async instead (PTX ISA, wgmma.fence)."""
    _check_acc(acc, "warpgroup_arrive")
    t = current()
    fn = _intrinsic("wgmma_fence")
    for name in acc.names:
        t.emit("%s = %s(%s)" % (name, fn, name))


def warpgroup_commit():
    """wgmma.commit_group: the wgmmas issued since the last commit form one group."""
    current().emit("%s()" % _intrinsic("wgmma_commit"))


def warpgroup_wait(n, acc):
    """wgmma.wait_group n: wait until at most n groups are pending (n known when the kernel is built);
    the accumulators may be read, and the shared memory of the finished groups reused, after it."""
    if not isinstance(n, int) or not 0 <= n <= 7:
        raise ValueError("cutejit: warpgroup_wait takes 0..7 groups, known at build time, got %r" % (n,))
    _check_acc(acc, "warpgroup_wait")
    t = current()
    fn = _intrinsic("wgmma_wait")
    for name in acc.names:
        t.emit("%s = %s(%s, %d)" % (name, fn, name, n))


def gemm_gmma(atom, A, B, C, accumulate=True):
    """C (+)= A @ B with one wgmma per (k, m, n): A, B descriptor fragments (1, MMA_M|N, MMA_K), C the
    accumulator; an RS atom's A is a register fragment (MMA, MMA_M, MMA_K) of 16-bit values instead. accumulate: whether the first k-block adds to C (a run-time condition, or a bool); the
    later k-blocks always do."""
    if not isinstance(atom, GMMA_Atom):
        raise TypeError("cutejit: gemm_gmma takes a GMMA atom, got %r" % (atom,))
    rs = atom.source == "RS"
    if rs and (not isinstance(A, RTensor) or A.bits != 16 or rank(A.layout) != 3):
        raise TypeError("cutejit: gemm with %s: A must be a register fragment (MMA, MMA_M, MMA_K) of 16-bit values "
                        "(partition_fragment_A), got %r" % (atom.name, A))
    for x, what in ((B, "B"),) if rs else ((A, "A"), (B, "B")):
        if not isinstance(x, DescTensor) or rank(x.layout) != 3:
            raise TypeError("cutejit: gemm with %s: %s must be a descriptor fragment (1, MMA_%s, MMA_K), got %r"
                            % (atom.name, what, "M" if what == "A" else "N", x))
    _check_acc(C, "gemm")
    MM, K = size(A.layout, 1), size(A.layout, 2)
    NN = size(B.layout, 1)
    if size(B.layout, 2) != K or size(C.layout, 1) != MM or size(C.layout, 2) != NN:
        raise ValueError("cutejit: gemm: fragments do not match: A %s, B %s, C %s" % (A.layout, B.layout, C.layout))
    t = current()
    fn = _intrinsic("wgmma_rs" if rs else "wgmma")
    types_ = ".".join(atom.ptx.split(".")[-3:])
    trans = int(atom.major_b == "MN") if rs else int(atom.major_a == "MN") | int(atom.major_b == "MN") << 1
    values = size(atom.LayoutA_TV, 1)
    a = (lambda m, k: "(%s,)" % ", ".join(A[(_, m, k)].words(0, values))) if rs else \
        (lambda m, k: src(A.value((0, m, k))))
    first = accumulate if is_sym(accumulate) else bool(accumulate)
    scale = t.let(first, "acc_in") if is_sym(first) else int(first)
    for k in range(K):
        for m in range(MM):
            for n in range(NN):
                acc = C.names[m + MM * n]
                t.emit("%s = %s(%s, %s, %s, %s, %r, %d)" % (
                    acc, fn, acc, a(m, k), src(B.value((0, n, k))),
                    src(scale) if k == 0 else "1", types_, trans))
