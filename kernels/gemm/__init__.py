"""kernels.gemm: the GEMM ladder of chapter 7 (one module per idea), and matmul().

    import kernels; kernels.setup()
    from kernels.gemm import matmul
    C = matmul(A, B)          # f32 -> SIMT; f16 / bf16 -> f32 on tensor cores; NumPy or device arrays

LADDER lists every rung as a Rung: its name, input dtype, kernel, the instructions it needs
(kernels.capability names) and `prepare(A, B, C)`, which returns a no-argument launcher for device
arrays (anything with __cuda_array_interface__). Import after kernels.setup().
"""

from dataclasses import dataclass, field

import numpy as np
from numba import cuda

from ..capability import supports
from .matmul import matmul  # noqa: F401
from . import (simt_banks, simt_blocking1d, simt_blocking2d, simt_coalesced, simt_naive, simt_smem,
               simt_vectorized, simt_unrolled, simt_warptile, tc_sm75, tc_sm75_large, tc_sm80, tc_sm80_large,
               tc_sm80_lean)


@dataclass
class Rung:
    name: str
    dtype: str                 # "f32" or "f16" (bf16 runs the f16 rungs' bf16 twins)
    kernel: object
    launch: object             # launch(A, B, C) on Numba device arrays (f16 as uint16 bits)
    tile: tuple = (1, 1, 1)    # (M, N, K) must be multiples of this
    needs: tuple = ()
    notes: str = ""
    extra: dict = field(default_factory=dict)

    def fits(self, M, N, K):
        return M % self.tile[0] == 0 and N % self.tile[1] == 0 and K % self.tile[2] == 0

    def prepare(self, A, B, C):
        A, B, C = (cuda.as_cuda_array(x) for x in (A, B, C))
        if self.dtype != "f32":
            A, B = A.view(np.uint16), B.view(np.uint16)
        return lambda: self.launch(A, B, C)


def runnable(rung, cc):
    return cc is None or all(supports(n, cc) for n in rung.needs)


def _tc(module, name, needs, **cfg):
    k = module.make_kernel(**cfg)
    c = k.config

    def launch(A, B, C):
        M, N = C.shape
        k[(M // c["BM"]) * (N // c["BN"]), c["threads"]](A, B, C)
    return Rung(name, "f16", k, launch, (c["BM"], c["BN"], c["BK"]), needs)


def _tc_large(module, name, needs, **cfg):
    k = module.make_kernel(**cfg)
    c = k.config
    return Rung(name, "f16", k, lambda A, B, C: module.launch(k, A, B, C), (c["BM"], c["BN"], c["BK"]), needs)


def _simt(module, name, kernel=None):
    k = getattr(module, kernel or "gemm_" + module.__name__.rsplit(".", 1)[1])

    def launch(A, B, C):
        grid, block = module.grid(*C.shape)
        k[grid, block](A, B, C)
    return Rung(name, "f32", k, launch, (module.BM, module.BN, module.BK))


SM75 = ("mma.m16n8k8.f16", "ldmatrix")
SM80 = ("mma.m16n8k16.f16", "ldmatrix", "cp.async")

LADDER = [
    _simt(simt_naive, "simt 1: naive"),
    _simt(simt_coalesced, "simt 2: coalesced"),
    _simt(simt_smem, "simt 3: smem tiles"),
    _simt(simt_blocking1d, "simt 4: 1-D blocking"),
    _simt(simt_blocking2d, "simt 5: 2-D blocking 8x8"),
    _simt(simt_vectorized, "simt 6: 128-bit loads"),
    _simt(simt_banks, "simt 6b: padded smem", "gemm_simt_padded"),
    _simt(simt_banks, "simt 6b: swizzled smem", "gemm_simt_swizzled"),
    _simt(simt_warptile, "simt 7: dbuf + warp tiles"),
    _simt(simt_unrolled, "simt 8: unrolled k, padded A^T"),
    _tc(tc_sm75, "tc sm75 128x128x32", SM75),
    _tc(tc_sm75_large, "tc sm75 large 128x128x32", SM75, **tc_sm75_large.BEST),
    _tc(tc_sm80, "tc sm80 128x128x32 3st", SM80, prefetch=False),
    _tc(tc_sm80, "tc sm80 + frag prefetch", SM80),
    _tc_large(tc_sm80_large, "tc sm80 large 128x128x32 4st", SM80, **tc_sm80_large.BEST),
]

EXPLORE = [
    _tc(tc_sm80, "tc sm80 prefetch 4st", SM80, prefetch=True, STAGES=4),
    _tc(tc_sm80, "tc sm80 BK64 2st", SM80, BK=64, STAGES=2),
    _tc(tc_sm80, "tc sm80 BK64 3st pf", SM80, BK=64, STAGES=3, prefetch=True),
    _tc(tc_sm80, "tc sm80 w4x2 pf", SM80, WARPS_M=4, WARPS_N=2, prefetch=True),
    _tc(tc_sm80, "tc sm80 1blk pf", SM80, min_blocks=1, prefetch=True),
    _tc(tc_sm75, "tc sm75 w4x2", SM75, WARPS_M=4, WARPS_N=2),
    _tc_large(tc_sm80_large, "tc sm80 large 128x256 4st", SM80, STAGES=4),
    _tc_large(tc_sm80_large, "tc sm80 large 128x256 5st", SM80, STAGES=5),
    _tc_large(tc_sm80_large, "tc sm80 large 256x128 4st", SM80, BM=256, BN=128, WARPS_M=4, WARPS_N=2, STAGES=4),
    _tc_large(tc_sm80_large, "tc sm80 large BK64 4st", SM80, BK=64, STAGES=4, dbuf=False),
    _tc(tc_sm75_large, "tc sm75 large 128x256x32", SM75),
    _tc_large(tc_sm80_lean, "tc sm80 lean 128x128 4st 3blk", SM80, **tc_sm80_lean.BEST),
    _tc_large(tc_sm80_lean, "tc sm80 lean 128x128 3st 3blk", SM80, **dict(tc_sm80_lean.BEST, STAGES=3)),
    _tc_large(tc_sm80_large, "tc sm80 large 128x128x64 3st", SM80, **dict(tc_sm80_large.BEST, BK=64, STAGES=3)),
]
