"""Chapter 8's Hopper GEMMs, written with the CuTe layer (kernels.cutejit): wgmma on descriptors of
128-byte-swizzled shared memory, TMA loads on an mbarrier pipeline, a producer warpgroup, persistent tiles.

    objects.py          the CuTe objects every step is compiled from (TiledMMA of GMMA atoms, smem layouts,
                        tensor maps)
    wgmma_cp_async.py   step 1: wgmma fed by cp.async from every thread
    pingpong.py         step 6: two consumers taking tiles in turn, so one stores C while the other computes
    warp_specialized.py steps 2-5: TMA + mbarriers, setmaxnreg, persistent, TMA-store epilogue
    cluster.py          step 5 in clusters (1x1, 2x1, 1x2): TMA multicast, remote releases, a cluster launch
    fp8.py              the warp-specialized body with e4m3 / e5m2 inputs: promotion, per-tensor and blockwise
                        scales, 16-bit out (matmul's FP8 family, kernels.lib.fp8)
    gemm.py             HopperGemm (a step, configured and launched), the ladder's steps, timing against cuBLAS
    variants.py         what `python -m kernels.hopper` checks beside the ladder: clusters, split-K, epilogues

Import after kernels.setup().
"""

from .gemm import (EXPLORE, LADDER, MATMUL_CONFIG, HopperGemm, main, make_step, operand_major,  # noqa: F401
                   row_pitch, step, time_vs_cublas, tma_readable)
