"""FP8 GEMM on Hopper: chapter 8's warp-specialized kernel with e4m3 / e5m2 inputs and scales.

    C = (scale_a * A) @ (scale_b * Bt).T        A (M, K), Bt (N, K): 8-bit floats, both K-major

The body is chapter 8's (a producer warpgroup's TMA loads on an mbarrier pipeline, wgmma consumers) built
from the same objects with the 8-bit type: a 128-byte swizzle row is 128 elements, so BK = 128 and each
stage takes four k32 wgmmas. What FP8 adds is in the consumers:
  * promotion: the tensor cores add FP8 products into float32 with fewer mantissa bits than float32 (about
    14, DeepSeek-V3's report measured, section 3.3.2), so every `promote` k-tiles the wgmma accumulator is
    added (in full float32, by the CUDA cores) into a second accumulator and the wgmmas start again from
    zero (`promote=0`: no promotion; 1: every 128 elements of K, the report's and DeepGEMM's interval);
  * scales, as layouts of cutelite.scales: per tensor (one float each for A and B, applied once in the
    epilogue) or blockwise (A one per 1 x 128 block, B one per 128 x 128 block, as DeepGEMM: a k-tile is
    one block of K, so its products are scaled as they are promoted, every k-tile);
  * the epilogue: float32, bfloat16 or float16 out, rounded in registers and stored with st.global,
    predicated at the matrix's edges (any M, N; TMA fills the loads' edges with zeros).
"""

from cutelite import Major, _, size
from cutelite.numeric import numeric
from cutelite.scales import scale_layout

from ..cutejit import (
    Matrix, PipelineState, copy, elem_less, fill, gemm, if_, kernel, local_tile, make_fragment_like,
    make_identity_tensor, min_, range_, thread_idx, warpgroup_arrive, warpgroup_commit, warpgroup_wait,
)
from ..cutejit.elementwise import axpy, convert, load_scalar, multiply
from ..capability import max_shared_per_block
from . import objects as hopper
from .warp_specialized import consumers_after_producer, setup

__all__ = ["gemm_fp8", "make", "scale_shapes", "SCALE_BLOCKS", "OUT_DTYPES"]

OUT_DTYPES = ("float32", "bfloat16", "float16")
SM90 = (9, 0)                     # the only GPU of 8-bit wgmma: its shared memory sets the stages
SCALE_BLOCKS = {"tensor": None, "blockwise": ((1, 128), (128, 128))}   # (A's block, B's block) of (MN, K)


@kernel
def gemm_fp8(mA, mB, mC, mSA, mSB, tmA, tmB, mma, sA_layout, sB_layout, regs, group, persistent, promote,
             blockwise):
    tid = thread_idx()
    BM, BN, BK, consumers, sA, sB, pipe, sched, k_tiles = setup(mA, mB, mC, tmA, tmB, mma, sA_layout, sB_layout,
                                                                group, persistent)
    cA = local_tile(make_identity_tensor(mA.shape), (BM, BK), (_, _))
    cB = local_tile(make_identity_tensor(mB.shape), (BN, BK), (_, _))
    with consumers_after_producer(tid, regs, pipe, sched, k_tiles, tmA, cA, sA, tmB, cB, sB):   # as in chapter 8
        thr_mma = mma.get_slice(tid - 128)
        tCrA = thr_mma.partition_fragment_A(sA)          # (1, MMA_M, MMA_K, stages): descriptors
        tCrB = thr_mma.partition_fragment_B(sB)
        state, release = PipelineState(pipe.stages), PipelineState(pipe.stages)
        per_tensor = None if blockwise else multiply(load_scalar(mSA, 0, 0), load_scalar(mSB, 0, 0))
        for tile in sched.tiles():
            m, n = tile.coords
            gC = local_tile(mC, (BM, BN), (m, n))
            tCcC = thr_mma.partition_C(local_tile(make_identity_tensor(mC.shape), (BM, BN), (m, n)))
            acc = thr_mma.partition_fragment_C(gC)       # the wgmmas' accumulators, 64 x BN a warpgroup
            total = acc
            if promote:
                total = make_fragment_like(acc, "float32", "total")   # the promoted sum, in full float32
                fill(total, 0.0)
            for kt in range_(k_tiles):
                pipe.consumer_wait(state)                # the stage is full
                warpgroup_arrive(acc)
                gemm(mma, tCrA[_, _, _, state.index], tCrB[_, _, _, state.index], acc,
                     accumulate=kt % promote > 0 if promote else kt > 0)   # a promoted k-tile starts from zero
                warpgroup_commit()
                scale = block_scales(mSA, mSB, tCcC, m, n, kt, BN) if blockwise else (lambda c: None)
                warpgroup_wait(1, acc)                   # k-tile kt - 1's wgmmas are done:
                with if_(kt > 0):
                    pipe.consumer_release(release)       # ... free its stage
                    release.advance()
                state.advance()
                if promote:
                    with if_((kt + 1) % promote < 1):    # every promote-th k-tile:
                        warpgroup_wait(0, acc)           # this k-tile's wgmmas are done too
                        axpy(total, acc, scale)          # total += acc (x its blocks' scales)
            warpgroup_wait(0, acc)
            pipe.consumer_release(release)               # the tile's last stage
            release.advance()
            if promote:
                with if_(k_tiles % promote > 0):         # the k-tiles since the last promotion
                    axpy(total, acc)
            out = convert(total, mC.dtype, lambda c: per_tensor)     # x scale_a x scale_b, rounded to C's type
            copy(out, thr_mma.partition_C(gC), pred=elem_less(tCcC, mC.shape))


def block_scales(mSA, mSB, tCcC, m, n, kt, BN):
    """scale(c) of this thread's accumulator c for k-tile kt: A's scale of its row times B's of its 128 columns,
    each loaded once (rows past M read row M - 1's scale: their products are zero)."""
    loaded, scale = {}, {}

    def once(key, load):
        if key not in loaded:
            loaded[key] = load()
        return loaded[key]

    for c in range(size(tCcC.layout)):
        row = min_(tCcC.coord(c)[0], mSA.shape[0] - 1)
        block = n * (BN // 128) + tCcC.coord_static(c)[1] // 128    # a thread's columns stay in one block
        sa = once(("a", row.src), lambda: load_scalar(mSA, row, kt, "sa"))
        sb = once(("b", block.src), lambda: load_scalar(mSB, min_(block, mSB.shape[0] - 1), kt, "sb"))
        scale[c] = once((sa, sb), lambda: multiply(sa, sb))
    return scale.__getitem__


def scale_shapes(M, N, K, scales):
    """The layouts (cutelite.scales) of A's and B's scales for an (M, N, K) GEMM: `scales` "tensor" (one each)
    or "blockwise" (SCALE_BLOCKS). The kernel reads them as (MN blocks, K blocks) matrices, MN-major."""
    if scales not in SCALE_BLOCKS:
        raise ValueError("scale_shapes: scales must be one of %s, got %r" % (", ".join(SCALE_BLOCKS), scales))
    blocks = SCALE_BLOCKS[scales] or ((M, K), (N, K))
    return tuple(scale_layout((mn, K), block, Major.MN) for mn, block in zip((M, N), blocks))


def make(BN=128, stages=None, consumers=2, regs=(40, 232), group=16, persistent=True, dtype="float8_e4m3fn",
         dtype_b=None, out="bfloat16", promote=4, scales="tensor", overrides=None):
    """The FP8 kernel for one configuration, launched as kernel.launch(A, Bt, C, SA, SB, mapA, mapB) (SA, SB:
    float32 matrices of the scales, scale_shapes' layouts; the tensor maps from encode_tensor_map and the
    objects' TensorMaps). dtype / dtype_b: A's and B's 8-bit type; out: C's type; promote: the k-tiles
    (BK = 128) between promotions, 0 for none; scales: "tensor" or "blockwise" (which promotes every k-tile);
    overrides: instructions played by a model in the simulator (kernels.instructions.hopper_model); stages: None
    for the most that fit in an sm_90 block's shared memory (objects.most_stages)."""
    dtype_b = dtype_b or dtype
    for t in (dtype, dtype_b):
        if numeric(t, "kernels.hopper.fp8").name not in [x.name for x in hopper.FP8]:
            raise ValueError("kernels.hopper.fp8: A and B are float8_e4m3fn or float8_e5m2, got %r" % (t,))
    if out not in OUT_DTYPES:
        raise ValueError("kernels.hopper.fp8: out must be one of %s, got %r" % (", ".join(OUT_DTYPES), out))
    if scales not in SCALE_BLOCKS:
        raise ValueError("kernels.hopper.fp8: scales must be one of %s, got %r" % (", ".join(SCALE_BLOCKS), scales))
    if scales == "blockwise" and (promote != 1 or BN % 128):
        raise ValueError("kernels.hopper.fp8: blockwise scales change every 128 of K, one k-tile: they need "
                         "promote=1 and BN a multiple of 128, got promote=%r, BN=%r" % (promote, BN))
    if not isinstance(promote, int) or promote < 0:
        raise ValueError("kernels.hopper.fp8: promote is a number of k-tiles >= 0, got %r" % (promote,))
    if stages is None:
        stages = hopper.most_stages(64 * consumers, BN, max_shared_per_block(SM90))
    o = hopper.objects(64 * consumers, BN, stages, consumers, dtype, majors=("K", "K"))
    if dtype_b != dtype:
        raise NotImplementedError("kernels.hopper.fp8: A and B of different 8-bit types")
    matrices = (Matrix(dtype, Major.K), Matrix(dtype, Major.K), Matrix(out, Major.K),
                Matrix("float32", Major.MN), Matrix("float32", Major.MN))
    k = gemm_fp8.build(*matrices, o.tmA, o.tmB, o.mma, o.sA, o.sB, regs, group, persistent, promote,
                       scales == "blockwise", threads=128 * (1 + consumers),
                       max_registers=65536 // (128 * (1 + consumers)) // 8 * 8 if regs else None, overrides=overrides)
    return hopper.finish(k, o, regs=regs, group=group, persistent=persistent, out=out, promote=promote,
                         scales=scales)
