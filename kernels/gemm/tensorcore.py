"""The tensor-core steps' host objects and the pieces of their kernels that run on the layer.

The CuTe objects every tensor-core step is built from (the TiledMMA, the TiledCopys, the swizzled shared
layouts: `objects`, `swizzle_atom`, `g2s_copy`) are cutelite's, made with cutelite alone
(cutelite.tensorcore), so that chapter 7's explorer reads the very objects the kernels are compiled from.
Here: the kernels' Matrix arguments, the edge predicates and the step's kernel wrapper.
"""

from cutelite import Major, _, rank
from cutelite.tensorcore import ATOMS, TensorCore, g2s_copy, objects, swizzle_atom

from ..cutejit import Matrix, elem_less, local_tile, make_identity_tensor

__all__ = ["TensorCore", "objects", "swizzle_atom", "g2s_copy", "ATOMS", "operand_matrices", "epilogue_arguments",
           "edge_guard", "finish"]


def operand_matrices(o, epi=None):
    """The kernel's Matrix arguments for TensorCore objects o: A (M, K), B seen as (N, K) (the (K, N) array
    transposed, no copy), each with o.majors' mode contiguous; C (M, N) row-major, float32 or the type of
    Epilogue epi's D."""
    a, b = o.majors
    return Matrix(o.dtype, a), Matrix(o.dtype, b, transposed=True), Matrix(epi.out if epi else "float32", Major.K)


def epilogue_arguments(epi):
    """What a step's kernel takes after its own arguments: the Epilogue and the specs of its run-time
    arguments (C, bias, alpha, beta; None where it reads none); five Nones without one."""
    return (epi,) + (epi.matrices() if epi else (None,) * 4)


def edge_guard(partition, mX, tile, coord):
    """Which of a thread's values of mX's tile at `coord` lie inside mX (chapter 3's predication): the same
    `partition` (g2s.partition_S, thr_mma.partition_C, ...) of mX's identity tensor, compared with mX's
    shape by elem_less. Returns guard(*k): the predicate at the tile's run-time modes k (none for C)."""
    coords = partition(local_tile(make_identity_tensor(mX.shape), tile, coord))
    return lambda *k: elem_less(coords[(_,) * rank(coords.layout) + k] if k else coords, mX.shape)


def finish(kernel, o, **config):
    """A built kernel as a step's: .objects, .tile, .config, and a grid of one CTA per C tile, so that
    kernel.launch(A, B, C) runs it (A (M, K) and B (K, N) as uint16 bits, C (M, N) float32)."""
    BM, BN, BK = o.tile
    kernel.objects, kernel.tile = o, o.tile
    kernel.config = dict(config, BM=BM, BN=BN, BK=BK, stages=o.stages, threads=o.threads, dtype=o.dtype,
                         majors=o.majors, smem=kernel.smem_bytes)
    kernel.grid = lambda A, B, C, *epilogue: -(-C.shape[0] // BM) * -(-C.shape[1] // BN)
    return kernel
