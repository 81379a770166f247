"""Scale-factor layouts: which scale an element of a scaled 8-bit operand is multiplied by, as a layout.

An FP8 GEMM multiplies each element of A (M x K) and B (N x K) by a float scale shared by a block of
elements: one for the whole tensor, one per row, one per 1 x 128 block of A, one per 128 x 128 block of B
(DeepGEMM's blockwise scaling). A layout says it in CuTe's terms: over the operand's (MN, K) coordinates,
((bmn, MN/bmn), (bk, K/bk)) with stride 0 inside a block, so every element of a block maps to the same
index of the scales' array. This is how C++ CUTLASS writes it (cutlass/detail/blockwise_scale_layout.hpp,
Sm90BlockwiseScaleConfig::tile_atom_to_shape_SFA / _SFB, with L = 1).

Post: scale_layout(shape, block, major)(mn, k) is the index, in the scales' array, of the scale of
element (mn, k); size is the operand's (rounded up to whole blocks), cosize the number of scales.
"""

from .atoms import Major
from .errors import quote
from .int_tuple import ceil_div, is_int
from .layout import Layout

__all__ = ["scale_layout"]


def scale_layout(shape, block, major=Major.MN):
    """The layout (mn, k) -> index of the scale of an (MN, K) operand of `shape` with one scale per `block`
    = (bmn, bk) elements; the scales are an (MN/bmn, K/bk) array (rounded up), MN-major (CUTLASS's default:
    consecutive blocks along MN are adjacent) or K-major. The common cases:
      per tensor          block = shape            one scale
      per row of A        block = (1, K)           M scales
      1 x 128 blocks (A)  block = (1, 128)         M x K/128 scales
      128 x 128 (B)       block = (128, 128)       N/128 x K/128 scales
    """
    what = "scale_layout"
    for name, v in (("shape", shape), ("block", block)):
        if not (isinstance(v, tuple) and len(v) == 2 and all(is_int(x) and x > 0 for x in v)):
            raise ValueError(f"{what}: {name} must be (MN, K), two positive ints, got {quote(v)}")
    if major not in (Major.K, Major.MN):
        raise ValueError(f"{what}: major must be 'K' or 'MN' (the scales' contiguous mode), got {quote(major)}")
    (mn, k), (bmn, bk) = shape, block
    blocks_mn, blocks_k = ceil_div(mn, bmn), ceil_div(k, bk)
    stride = ((0, 1), (0, blocks_mn)) if major == Major.MN else ((0, blocks_k), (0, 1))
    return Layout(((bmn, blocks_mn), (bk, blocks_k)), stride)
