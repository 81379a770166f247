"""CuTe's algorithms on tensors (cute/algorithm: copy, clear, axpby, gemm), as NumPy models, and the
main loop of a tiled GEMM run for every thread of a TiledMMA.

On a GPU each thread runs the same code on its own partition; a tensor-core instruction then works on
the fragments of all the threads of one atom together. Here a warp-wide step is one Python call that
takes every thread's tensors at once (lists indexed by thread), so a whole CTA's tile can be computed
and compared with A @ B.

    copy(src, dst)                    dst(i) = src(i) for every i (same size)
    copy_all(tiled_copy, srcs, dsts)  cute::copy(tiled_copy, src, dst) for every thread at once: each atom
                                      moves values between ITS threads (ldmatrix: lane t reads a row, the
                                      warp shares the 8x8 matrices out)
    clear(t)                          t(i) = 0
    axpby(alpha, x, beta, y)          y(i) = alpha * x(i) + beta * y(i)
    gemm(mma, tCrA, tCrB, tCrC)       for k, m, n: every atom of mma computes
                                      C(_, m, n) += A(_, m, k) @ B(_, n, k) on its threads' fragments
    mainloop(mma, sA, sB, gC, alpha, beta)   the tiled GEMM of NVIDIA's CuTe blog, for every thread
    vectorizes(atom, src, dst)        does C++ compile cute::copy(atom, src, dst)? (copy_unpack's check)
    copy_vectors(tiled_copy, layout)  the offsets each thread's atom moves at once (is it one vector?)
    ldmatrix_for(mma, "A", layout)    the ldmatrix that loads an operand from that layout in the fewest calls

Tensors are cutelite.Tensor views (NumPy is imported only here, for the data).
"""

from .atoms import mma_reference
from .copy_atoms import make_copy_atom
from .errors import quote
from .int_tuple import is_tuple
from .layout import Layout, _, get, size, slice_and_offset, upcast
from .tiled import make_tiled_copy_A, make_tiled_copy_B

__all__ = ["copy", "copy_all", "clear", "axpby", "gemm", "mainloop", "copy_vectors", "vector_report",
           "ldmatrix_for", "vectorizes"]


def _values(t):
    """The values of a tensor in 1-D index order (CuTe's t(i), i = 0 .. size-1)."""
    import numpy as np
    return np.array([t(i) for i in range(size(t.layout))])


def _check_sizes(a, b, what):
    if size(a.layout) != size(b.layout):
        raise ValueError(f"{what}: sizes differ: {a.layout} has {size(a.layout)} elements, "
                         f"{b.layout} has {size(b.layout)}")


def copy(src, dst):
    """dst(i) = src(i) for i in 0 .. size - 1: the element-wise copy of cute::copy(src, dst).

    The shapes may differ (a copy view from retile_D against partition_S); the sizes must agree.
    """
    _check_sizes(src, dst, "copy")
    for i in range(size(src.layout)):
        dst[i] = src(i)
    return dst


def copy_all(tiled_copy, srcs, dsts):
    """cute::copy(tiled_copy, srcs[t], dsts[t]) run by every thread t of the TiledCopy at once.

    srcs[t] is thread t's partition_S (or retile_S) tensor, dsts[t] its partition_D or retile_D one; their
    first mode's first part is one atom call's values, the rest counts calls. For each call, the threads
    of one atom (thread t is lane t % n of atom t // n, n = size(ThrID)) put their source values into the
    atom's matrix at ValLayoutSrc(lane, v) and take their destination values from ValLayoutDst(lane, v).
    For a one-thread atom (UniversalCopy) that is copy(srcs[t], dsts[t]); for ldmatrix the values change
    threads, as the hardware does.

    Refused as C++ refuses to compile it (ValueError): a call whose values do not vectorize into the
    instruction's registers (copy_unpack's static_assert, see `vectorizes`). Alignment is not checked, as
    C++ does not check it: a misaligned ldmatrix row compiles, and the GPU faults when it runs.
    """
    atom = tiled_copy.atom
    n_thr, n_src, n_dst = size(atom.ThrID), atom.num_val_src, atom.num_val_dst
    threads = size(tiled_copy.layout_tv, 0)
    if len(srcs) != threads or len(dsts) != threads:
        raise ValueError(f"copy_all: need one source and one destination tensor per thread ({threads}), "
                         f"got {len(srcs)} and {len(dsts)}")
    for t in range(threads):
        ok, why = vectorizes(atom, srcs[t].layout, dsts[t].layout)
        if not ok:
            raise ValueError(f"copy_all: thread {t}: {why}")
    calls = size(srcs[0].layout) // n_src
    if size(dsts[0].layout) // n_dst != calls:
        raise ValueError(f"copy_all: {srcs[0].layout} holds {calls} calls of {n_src} source values, but "
                         f"{dsts[0].layout} is not {calls} calls of {n_dst} destination values")
    for first in range(0, threads, n_thr):
        group = range(first, first + n_thr)
        for c in range(calls):
            matrix = {}
            for lane, t in enumerate(group):
                for v in range(n_src):
                    matrix[int(atom.ValLayoutSrc(lane, v))] = srcs[t](c * n_src + v)
            for lane, t in enumerate(group):
                for v in range(n_dst):
                    dsts[t][c * n_dst + v] = matrix[int(atom.ValLayoutDst(lane, v))]
    return dsts


def _call_layouts(src, dst, n_src, n_dst):
    """The layouts of one atom call's source and destination values in (V, rest...) layouts, found as
    cute::copy finds them: mode 0, peeled further (Copy_Atom::call recurses into mode 0) until the source
    holds n_src values or the destination n_dst. None where no such mode exists."""
    s, d = get(src, 0), get(dst, 0)
    while size(s) != n_src and size(d) != n_dst:
        if not (is_tuple(s.shape) and is_tuple(d.shape)):
            return None
        s, d = get(s, 0), get(d, 0)
    return s, d


def vectorizes(atom, src, dst):
    """Does C++ compile cute::copy(atom, src, dst) for these (V, rest...) layouts? (True, "") or (False, why).

    Post: as copy_unpack (cute/atom/copy_traits.hpp): each call's source values, recast to the instruction's
    source registers (atom.register_bits), make exactly its number of registers, and so do the destination's;
    recast checks strides only ("doesn't check alignment", cute/tensor_impl.hpp), and a swizzle is left out.
    """
    regs = atom.register_bits
    if regs is None:
        return True, ""
    calls = _call_layouts(src, dst, atom.num_val_src, atom.num_val_dst)
    if calls is None:
        return False, (f"{src} and {dst} have no mode of {atom.num_val_src} source or {atom.num_val_dst} "
                       f"destination values (C++: Src/Dst partitioning does not match the instruction requirement)")
    for side, layout, n, bits in (("src", calls[0], atom.num_val_src, regs[0]),
                                  ("dst", calls[1], atom.num_val_dst, regs[1])):
        if bits < atom.bits:                                       # a downcast: registers narrower than a value
            continue
        layout = getattr(layout, "layout_b", layout)               # the inner layout of a swizzled one
        k, count = bits // atom.bits, n * atom.bits // bits
        try:
            ok = size(upcast(layout, k)) == count
        except ValueError as e:
            return False, f"{atom!r}: {side} values {layout}: {e}"
        if not ok:
            return False, (f"{atom!r}: {side} values {layout} are not {count} {bits}-bit register(s) "
                           f"(C++: {side} failed to vectorize into registers)")
    return True, ""


def clear(t):
    """t(i) = 0 for every i (cute::clear)."""
    for i in range(size(t.layout)):
        t[i] = 0
    return t


def axpby(alpha, x, beta, y):
    """y(i) = alpha * x(i) + beta * y(i) (cute::axpby), computed in float64, stored as y's type."""
    _check_sizes(x, y, "axpby")
    for i in range(size(x.layout)):
        y[i] = alpha * float(x(i)) + beta * float(y(i))
    return y


def _atoms_of(mma):
    """{(m, n, k) atom coordinate: [thread index of logical thread v of that atom, for v = 0, 1, ...]}."""
    vmnk = mma.thr_layout_vmnk
    nv = size(vmnk, 0)
    atoms = {}
    for t in range(size(vmnk)):
        v, m, n, k = (int(c) for c in mma.get_slice(t).thr_vmnk)
        atoms.setdefault((m, n, k), [None] * nv)[v] = t
    return atoms


def gemm(mma, tCrA, tCrB, tCrC):
    """cute::gemm(mma, tCrA, tCrB, tCrC) for all threads at once: tCrA[t] is thread t's (V, M, K) tensor,
    tCrB[t] its (V, N, K), tCrC[t] its (V, M, N). For each k, m, n every atom takes its threads'
    fragments A(_, m, k), B(_, n, k), C(_, m, n) and computes D = A @ B + C (atoms.mma_reference) into C.

    Post: gathering C's fragments back into the tile gives A @ B + C (with the TiledMMA's partitions).
    """
    import numpy as np
    if size(mma.thr_layout_vmnk, 3) != 1:
        raise ValueError(f"gemm: atoms along K ({mma.thr_layout_vmnk}) would need a reduction of C "
                         "between threads; this model takes ThrK == 1")
    n_thr = size(mma.thr_layout_vmnk)
    for name, frags in (("tCrA", tCrA), ("tCrB", tCrB), ("tCrC", tCrC)):
        if len(frags) != n_thr:
            raise ValueError(f"gemm: {name} must hold one tensor per thread ({n_thr}), got {len(frags)}")
    atoms = _atoms_of(mma)
    a0, c0 = tCrA[0].layout, tCrC[0].layout
    M, N, K = size(c0, 1), size(c0, 2), size(a0, 2)
    for k in range(K):
        for m in range(M):
            for n in range(N):
                for threads in atoms.values():
                    A = np.stack([_values(tCrA[t](_, m, k)) for t in threads])
                    B = np.stack([_values(tCrB[t](_, n, k)) for t in threads])
                    C = np.stack([_values(tCrC[t](_, m, n)) for t in threads])
                    D = mma_reference(mma.atom, A, B, C)
                    for v, t in enumerate(threads):
                        frag = tCrC[t](_, m, n)
                        for i in range(D.shape[1]):
                            frag[i] = D[v, i]
    return tCrC


def mainloop(mma, sA, sB, gC, alpha=1.0, beta=0.0, acc_dtype="float32"):
    """The tiled GEMM of NVIDIA's CuTe blog (CUTLASS 3 / CuTe introduction), run for every thread:
    gC = alpha * sA @ sB^T + beta * gC, with sA (M, K), sB (N, K), gC (M, N) tensors.

    Per thread t (thr_mma = mma.get_slice(t)), as the blog's code:
        tCsA = thr_mma.partition_A(sA); tCsB = thr_mma.partition_B(sB); tCgC = thr_mma.partition_C(gC)
        tCrA, tCrB = fragments like tCsA, tCsB; tCrC = a compact fragment of tCgC's shape
        copy(tCsA, tCrA); copy(tCsB, tCrB); clear(tCrC)
    then for all threads together gemm(mma, tCrA, tCrB, tCrC), and per thread axpby(alpha, tCrC, beta, tCgC).
    Returns {"tCsA", "tCrA", ...: the lists of every thread's tensors}.
    """
    from .tensor import make_fragment_like, make_tensor
    parts = {k: [] for k in ("tCsA", "tCsB", "tCgC", "tCrA", "tCrB", "tCrC")}
    for t in range(size(mma.thr_layout_vmnk)):
        thr_mma = mma.get_slice(t)
        tCsA, tCsB, tCgC = thr_mma.partition_A(sA), thr_mma.partition_B(sB), thr_mma.partition_C(gC)
        tCrA, tCrB = make_fragment_like(tCsA), make_fragment_like(tCsB)      # make_fragment_A/B
        tCrC = make_tensor(tCgC.shape, dtype=acc_dtype)                     # make_fragment_C
        copy(tCsA, tCrA)
        copy(tCsB, tCrB)
        clear(tCrC)
        for k, v in zip(parts, (tCsA, tCsB, tCgC, tCrA, tCrB, tCrC)):
            parts[k].append(v)
    gemm(mma, parts["tCrA"], parts["tCrB"], parts["tCrC"])
    for tCrC, tCgC in zip(parts["tCrC"], parts["tCgC"]):
        axpby(alpha, tCrC, beta, tCgC)
    return parts


def copy_vectors(tiled_copy, layout, side="S"):
    """What each copy instruction of a TiledCopy touches in a tile laid out by `layout`: a list over
    threads of lists (one per atom call) of the element offsets the atom moves at once, in its value order.

    side "S" partitions as partition_S (the source), "D" as partition_D.
    """
    tidfrg = tiled_copy.tidfrg_S(layout) if side == "S" else tiled_copy.tidfrg_D(layout)
    n_atom = tiled_copy.atom.num_val_src if side == "S" else tiled_copy.atom.num_val_dst
    out = []
    for t in range(size(tidfrg, 0)):
        thr, base = slice_and_offset((t, _, _), tidfrg)        # ((atom values, atoms), rest...)
        per = size(thr) // n_atom
        offs = [int(base) + int(thr(i)) for i in range(size(thr))]
        out.append([offs[j * n_atom:(j + 1) * n_atom] for j in range(per)])
    return out


def vector_report(tiled_copy, layout, elem_bits, side="S"):
    """Can each atom call of `tiled_copy` on `layout` be one vector access? A dict:
    contiguous (each call's offsets are consecutive), aligned (each call starts at a multiple of its own
    width, the tile starting at a multiple too), bits (the width of one call), and the first offending
    (thread, offsets) or None.
    ldmatrix's 16-byte rows and a 128-bit UniversalCopy need both, at different times: C++ CuTe compiles the
    copy only where the values are contiguous (copy_unpack's check, see `vectorizes`), and does not check
    alignment; the PTX ISA requires each ldmatrix row address to be 16-byte aligned, so a misaligned row
    compiles and fails only when the instruction runs."""
    calls = copy_vectors(tiled_copy, layout, side)
    n = len(calls[0][0])
    first = None
    contiguous = aligned = True
    for t, per in enumerate(calls):
        for offs in per:
            ok_c = offs == list(range(offs[0], offs[0] + n))
            ok_a = offs[0] % n == 0
            if not (ok_c and ok_a) and first is None:
                first = (t, offs)
            contiguous &= ok_c
            aligned &= ok_a
    return {"contiguous": contiguous, "aligned": aligned, "bits": n * elem_bits, "first_bad": first}


LDMATRIX_OPS = ("SM75_U16x8_LDSM_T", "SM75_U32x4_LDSM_N", "SM75_U16x4_LDSM_T", "SM75_U32x2_LDSM_N",
                "SM75_U16x2_LDSM_T", "SM75_U32x1_LDSM_N")   # four 8x8 matrices a call, then two, then one


def ldmatrix_for(tiled_mma, operand, layout):
    """The ldmatrix op (CuTe's name) that copies operand "A" or "B" of `tiled_mma` from shared memory laid
    out by `layout` (16-bit elements) into the threads' registers in the fewest calls: the first of
    LDMATRIX_OPS that make_tiled_copy_A/B accepts (C++ refuses an atom that moves more values than a
    thread holds) and whose every row is 16 contiguous, aligned bytes (vector_report). Raises ValueError
    if none can."""
    if operand not in ("A", "B"):
        raise ValueError(f"ldmatrix_for: operand must be 'A' or 'B', got {quote(operand)}")
    if not isinstance(layout, Layout):
        raise TypeError(f"ldmatrix_for: the shared-memory layout must be a Layout, got {quote(layout)}")
    make = make_tiled_copy_A if operand == "A" else make_tiled_copy_B
    for op in LDMATRIX_OPS:
        try:
            report = vector_report(make(make_copy_atom(op, "half_t"), tiled_mma), layout, 16)
        except ValueError:
            continue
        if report["contiguous"] and report["aligned"]:
            return op
    raise ValueError(f"ldmatrix_for: no ldmatrix loads operand {operand} of this TiledMMA from {layout}: "
                     "its rows are not 16 contiguous, aligned bytes")
