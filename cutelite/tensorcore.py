"""The CuTe objects of chapter 7's tensor-core GEMMs, made on the host with cutelite alone.

For a CTA tile (BM, BN, BK) computed by a grid of warps, `objects(...)` returns what CUTLASS's
sgemm_sm80.cu and the CuTe DSL's tensorop_gemm.py build before launching:

  * mma: a TiledMMA of the atom over the warps, each warp repeating its atom over a 64x64-or-so tile;
  * sA, sB: the shared-memory layouts of one k-tile per pipeline stage, (BM, BK, stages) and (BN, BK,
    stages), swizzled so that the 8 rows an ldmatrix reads fall in 8 different bank groups;
  * g2s_A, g2s_B: TiledCopys global -> shared, 16 bytes (8 halves) a thread and instruction, along the
    operand's contiguous mode (cp.async on sm_80+, or a load into registers and a store on sm_75);
  * s2r_A, s2r_B: TiledCopys shared -> registers with ldmatrix, shaped by the TiledMMA
    (make_tiled_copy_A/B); .trans for an operand whose M (or N) mode is contiguous.

B is seen as CuTe sees it, (N, K): a NumPy (K, N) row-major B is N-major. The kernels (kernels.gemm.tc_sm75,
tc_sm80, tc_sm80_prefetch) are built from these objects; chapter 7's explorer reads the same ones.
"""

from dataclasses import dataclass

from .atoms import Major, make_mma_atom
from .bank_conflicts import _need_count, swizzle_for
from .copy_atoms import make_copy_atom
from .errors import quote
from .layout import Layout, composition, tile_to_shape
from .numeric import numeric
from .tiled import make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B, make_tiled_mma

__all__ = ["TensorCore", "objects", "swizzle_atom", "g2s_copy", "ATOMS"]

ATOMS = {("sm80", "float16"): "SM80_16x8x16_F32F16F16F32_TN", ("sm80", "bfloat16"): "SM80_16x8x16_F32BF16BF16F32_TN",
         ("sm75", "float16"): "SM75_16x8x8_F32F16F16F32_TN"}


@dataclass
class TensorCore:
    """What a tensor-core kernel is compiled from (see the module docstring)."""
    mma: object
    g2s_A: object
    g2s_B: object
    s2r_A: object
    s2r_B: object
    sA: object
    sB: object
    tile: tuple            # (BM, BN, BK)
    stages: int
    threads: int
    dtype: str
    majors: tuple          # (A's, B's) Major


def swizzle_atom(major, bk, dtype="float16"):
    """The swizzled layout atom of an operand tile of `dtype` elements in shared memory, as (MN, K) -> element
    offset: 8 rows of 128 bytes (64 halves), whose 16-byte chunks trade places by the row (bank_conflicts.
    swizzle_for), so that the eight 16-byte rows of one 8x8 ldmatrix land in eight different 16-byte bank
    groups (chapter 4). K-major: rows along K, or of 64 bytes (Sw<2,3,3> for halves) where BK is too short
    for 128; MN-major: rows along MN, 8 of them along K.
    """
    elem = numeric(dtype, "swizzle_atom").bits // 8
    if Major(major) == Major.MN:
        n = 128 // elem
        return composition(swizzle_for(n, elem), Layout((n, 8), (1, n)))
    for n in (128 // elem, 64 // elem):
        if bk % n == 0:
            return composition(swizzle_for(n, elem), Layout((8, n), (n, 1)))
    raise ValueError("swizzle_atom: a K-major tile needs BK a multiple of %d %s elements (64 bytes), got %d"
                     % (64 // elem, numeric(dtype).name, bk))


def g2s_copy(op, mn, bk, threads, major, elem):
    """threads copy an (mn, bk) tile of `elem` elements, one call of `op` a thread (16 bytes: 8 halves), along
    the contiguous mode."""
    atom = make_copy_atom(op, elem)
    v = atom.num_val_src
    if Major(major) == Major.K:
        along = bk // v
        if threads % along:
            raise ValueError("copy: %d threads cannot tile rows of %d vectors" % (threads, along))
        return make_tiled_copy(atom, Layout((threads // along, along), (along, 1)), Layout((1, v)))
    along = mn // v
    if threads % along:
        raise ValueError("copy: %d threads cannot tile columns of %d vectors" % (threads, along))
    return make_tiled_copy(atom, Layout((along, threads // along), (1, along)), Layout((v, 1)))


def objects(BM=128, BN=128, BK=32, stages=3, warps=(2, 2), arch="sm80", dtype="float16",
            majors=(Major.K, Major.MN)):
    """The TensorCore objects of one configuration (arch "sm80": m16n8k16 + cp.async; "sm75": the T4's
    m16n8k8, with copies through registers). `majors`: the contiguous mode of A (M, K) and of B (N, K):
    by default A row-major and B (K, N) row-major, which CuTe sees N-major."""
    if (arch, dtype) not in ATOMS:
        raise ValueError("objects: no %s atom for %s; known: %s" % (quote(arch), quote(dtype), sorted(ATOMS)))
    if not (isinstance(warps, tuple) and len(warps) == 2):
        raise TypeError(f"objects: warps must be a pair (along M, along N), got {quote(warps)}")
    for name, n in (("BM", BM), ("BN", BN), ("BK", BK), ("stages", stages), ("warps along M", warps[0]),
                    ("warps along N", warps[1])):
        _need_count(n, "objects", name, low=1)
    a_major, b_major = Major.pair(majors, "objects")
    wm, wn = warps
    threads = 32 * wm * wn
    mma = make_tiled_mma(make_mma_atom(ATOMS[arch, dtype]), Layout((wm, wn, 1)), (16 * wm, 16 * wn, 16))
    elem = numeric(dtype).cpp
    op = "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>" if arch == "sm80" else "UniversalCopy<uint128_t>"
    ldsm = {Major.K: "SM75_U32x4_LDSM_N", Major.MN: "SM75_U16x8_LDSM_T"}
    return TensorCore(
        mma=mma,
        g2s_A=g2s_copy(op, BM, BK, threads, a_major, elem),
        g2s_B=g2s_copy(op, BN, BK, threads, b_major, elem),
        s2r_A=make_tiled_copy_A(make_copy_atom(ldsm[a_major], elem), mma),
        s2r_B=make_tiled_copy_B(make_copy_atom(ldsm[b_major], elem), mma),
        sA=tile_to_shape(swizzle_atom(a_major, BK, dtype), (BM, BK, stages)),
        sB=tile_to_shape(swizzle_atom(b_major, BK, dtype), (BN, BK, stages)),
        tile=(BM, BN, BK), stages=stages, threads=threads, dtype=dtype, majors=(a_major, b_major))
