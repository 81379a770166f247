"""gemm(tiled_mma, tCrA, tCrB, tCrC): one thread's share of a TiledMMA on register fragments.

tCrA is (MMA, MMA_M, MMA_K), tCrB (MMA, MMA_N, MMA_K), tCrC (MMA, MMA_M, MMA_N), as partition_fragment_A/
B/C make them (a k-block sliced off, (MMA, MMA_M) and (MMA, MMA_N) also do). For every k, m and n the atom's
instruction runs once: mode 0's values, in order, are the instruction's operand registers (16-bit values
two to a register), and C's registers are overwritten with D. A one-thread atom (UniversalFMA) is one
multiply-add of registers: c = a * b + c. n runs back and forth (a serpentine), so
that consecutive instructions share an operand, as CuTe's gemm orders them.
"""

from cutelite import MMA_Atom, _, rank, size

from cutelite.gmma import GMMA_Atom

from .tensor import RTensor
from .tiled import check_operand
from .wgmma import gemm_gmma
from .trace import current

__all__ = ["gemm"]


def _modes(x, what):
    if not isinstance(x, RTensor):
        raise TypeError("cutejit: gemm: %s must be a register fragment, got %r" % (what, x))
    r = rank(x.layout)
    if r not in (2, 3):
        raise ValueError("cutejit: gemm: %s must be (MMA, MMA_M|N[, MMA_K]), got %s" % (what, x.layout))
    return size(x.layout, 1), (size(x.layout, 2) if r == 3 else 1)


def _at(x, i, k):
    return x[(_, i, k)] if rank(x.layout) == 3 else x[(_, i)]


def gemm(tiled_mma, A, B, C, accumulate=True):
    """C += A @ B for this thread's fragments, one MMA instruction per (k, m, n). For a GMMA (wgmma)
    TiledMMA, A and B are descriptor fragments and `accumulate` says whether the first k-block adds to C
    (wgmma.gemm_gmma); warp MMAs always add."""
    from ..instructions import mma_for
    atom = getattr(tiled_mma, "atom", None)
    if not isinstance(atom, MMA_Atom):
        raise TypeError("cutejit: gemm takes a TiledMMA first, got %r" % (tiled_mma,))
    if isinstance(atom, GMMA_Atom):
        return gemm_gmma(atom, A, B, C, accumulate)
    if accumulate is not True:
        raise ValueError("cutejit: gemm: accumulate=%r is for wgmma; %s always adds to C" % (accumulate, atom.name))
    (MM, KA), (NN, KB) = _modes(A, "A"), _modes(B, "B")
    for x, operand in ((A, "A"), (B, "B"), (C, "C")):
        check_operand(atom, operand, x.dtype, getattr(tiled_mma, "name", "the TiledMMA"))
    if rank(C.layout) != 3 or size(C.layout, 1) != MM or size(C.layout, 2) != NN or KA != KB:
        raise ValueError("cutejit: gemm: fragments do not match: A %s, B %s, C %s" % (A.layout, B.layout, C.layout))
    va, vb, vc = (size(getattr(atom, "Layout%s_TV" % op), 1) for op in "ABC")
    t = current()
    if atom.name.startswith("UniversalFMA"):
        return _fma(A, B, C, MM, NN, KA)
    fn = t.use(mma_for(atom).__name__, mma_for(atom))
    for k in range(KA):
        for m in range(MM):
            for j in range(NN):
                n = j if m % 2 == 0 else NN - 1 - j
                a, b = _at(A, m, k).words(0, va), _at(B, n, k).words(0, vb)
                c = C[(_, m, n)].words(0, vc)
                t.emit("%s = %s((%s,), (%s,), (%s,))" % (", ".join(c), fn, ", ".join(a), ", ".join(b), ", ".join(c)))


def _fma(A, B, C, MM, NN, KK):
    """UniversalFMA over (MMA_K, MMA_M, MMA_N): one register multiply-add each (32-bit values)."""
    t = current()
    for k in range(KK):
        for m in range(MM):
            for n in range(NN):
                c, a, b = C[(_, m, n)].element(0)[0], _at(A, m, k).element(0)[0], _at(B, n, k).element(0)[0]
                t.emit("%s = %s + %s * %s" % (c, c, a, b))
