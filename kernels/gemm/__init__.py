"""kernels.gemm: the GEMM ladder of chapter 7 (one module per idea), and matmul().

    import kernels; kernels.setup()
    from kernels.gemm import LADDER, rung
    r = rung("tc sm80 + k-block prefetch")
    r.kernel.launch(A, B, C)         # device arrays: A (M, K), B (K, N) (f16 as uint16 bits), C (M, N) f32

Every rung is a Rung: its name, input dtype, the instructions it needs (kernels.capability names) and
`build()`, which makes its kernel (built once, on first use): an object with `.launch(A, B, C)`,
`.tile` (M, N, K must be multiples of it, unless the kernel was built with edges=True), `.config` and
`.numba` (the compiled Numba kernel: SASS, registers). The tensor-core rungs are written with the CuTe
layer (kernels.cutejit) and also have `.source`, the code it generated. Import after kernels.setup().
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..capability import lacking
from . import (simt_banks, simt_blocking1d, simt_blocking2d, simt_coalesced, simt_naive, simt_smem,
               simt_vectorized, simt_unrolled, simt_warptile, tc_sm75, tc_sm80, tc_sm80_prefetch)

__all__ = ["Rung", "LADDER", "EXPLORE", "rung", "runnable", "SimtKernel"]


class SimtKernel:
    """A SIMT rung's Numba kernel with the rungs' interface: .launch(A, B, C), .tile, .config, .numba."""

    def __init__(self, module, name):
        self.numba, self.module = getattr(module, name), module
        self.tile = (module.BM, module.BN, module.BK)
        self.config = dict(BM=module.BM, BN=module.BN, BK=module.BK, dtype="float32")

    def launch(self, A, B, C, stream=0):
        grid, block = self.module.grid(*C.shape)
        self.numba[grid, block, stream](A, B, C)


@dataclass
class Rung:
    name: str
    dtype: str                 # "f32" or "f16" (the f16 rungs also build bf16 kernels: dtype="bfloat16")
    build: object              # () -> the kernel
    needs: tuple = ()

    @cached_property
    def kernel(self):
        return self.build()

    @property
    def tile(self):
        return self.kernel.tile

    def fits(self, M, N, K):
        return M % self.tile[0] == 0 and N % self.tile[1] == 0 and K % self.tile[2] == 0

    def prepare(self, A, B, C):
        """A no-argument launcher for device arrays (anything with __cuda_array_interface__)."""
        from numba import cuda
        A, B, C = (cuda.as_cuda_array(x) for x in (A, B, C))
        if self.dtype != "f32":
            A, B = A.view(np.uint16), B.view(np.uint16)
        return lambda: self.kernel.launch(A, B, C)


def runnable(r, cc):
    """Whether a GPU of compute capability `cc` runs rung r (cc None: the simulator, which runs every rung;
    kernels.current_cc() is this GPU's or the profile's)."""
    return not lacking(r.needs, cc)


def _simt(module, name, kernel=None):
    return Rung(name, "f32", lambda: SimtKernel(module, kernel or "gemm_" + module.__name__.rsplit(".", 1)[1]))


def _tc(module, name, needs, **cfg):
    return Rung(name, "f16", lambda: module.make(**cfg), needs)


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
    _tc(tc_sm75, "tc sm75 128x128x32", SM75, **tc_sm75.BEST),
    _tc(tc_sm80, "tc sm80 128x128x32 4st", SM80, **tc_sm80.BEST),
    _tc(tc_sm80_prefetch, "tc sm80 + k-block prefetch", SM80, **tc_sm80_prefetch.BEST),
]

EXPLORE = [
    _tc(tc_sm80_prefetch, "tc sm80 pf 128x128x64 3st", SM80, **dict(tc_sm80_prefetch.BEST, BK=64, stages=3)),
    _tc(tc_sm80_prefetch, "tc sm80 pf 128x128x32 3st", SM80, **dict(tc_sm80_prefetch.BEST, stages=3)),
    _tc(tc_sm80_prefetch, "tc sm80 pf 128x128x32 4st 1blk", SM80, **dict(tc_sm80_prefetch.BEST, min_blocks=1)),
    _tc(tc_sm80_prefetch, "tc sm80 pf 128x256x32 4st", SM80, **dict(tc_sm80_prefetch.BEST, BN=256, warps=(2, 4),
                                                                    min_blocks=1)),
    _tc(tc_sm80, "tc sm80 128x128x32 3st", SM80, **dict(tc_sm80.BEST, stages=3)),
]


def rung(name):
    """The Rung of LADDER or EXPLORE called `name`."""
    for r in LADDER + EXPLORE:
        if r.name == name:
            return r
    raise KeyError("kernels.gemm: no rung %r; the rungs are %s" % (name, ", ".join(r.name for r in LADDER + EXPLORE)))


from .matmul import matmul  # noqa: E402,F401  (after the ladder it runs)
