"""kernels.gemm: the GEMM ladder of chapter 7 (one module per idea); kernels.lib.matmul runs its best steps.

    import kernels; kernels.setup()
    from kernels.gemm import LADDER, step, prepare
    s = step("tc sm80 + k-block prefetch")
    s.kernel.launch(A, B, C)         # A (M, K), B (K, N) (f16 as uint16 bits), C (M, N) f32
    prepare(s, A, B, C)()            # the same on any device arrays (f16 viewed as uint16 here)

Every step is a kernels.ladder.Step: its name, module, quoted source, input dtype, the instructions it needs
(kernels.capability names) and its kernel (built once, on first use): an object with `.launch(A, B, C)`,
`.tile` (M, N, K must be multiples of it, unless the kernel was built with edges=True), `.config` and
`.numba` (the compiled Numba kernel: SASS, registers). The tensor-core steps are written with the CuTe
layer (kernels.cutejit) and also have `.source`, the code it generated. Import after kernels.setup().
"""

import numpy as np

from ..ladder import Step, find
from . import (simt_banks, simt_blocking1d, simt_blocking2d, simt_coalesced, simt_naive, simt_smem,
               simt_vectorized, simt_unrolled, simt_warptile, tc_sm75, tc_sm80, tc_sm80_prefetch)

__all__ = ["Step", "LADDER", "EXPLORE", "step", "prepare", "SimtKernel"]


class SimtKernel:
    """A SIMT step's Numba kernel with the steps' interface: .launch(A, B, C), .tile, .config, .numba."""

    def __init__(self, module, name):
        self.numba, self.module = getattr(module, name), module
        self.tile = (module.BM, module.BN, module.BK)
        self.config = dict(BM=module.BM, BN=module.BN, BK=module.BK, dtype="float32")

    def launch(self, A, B, C, stream=0):
        grid, block = self.module.grid(*C.shape)
        self.numba[grid, block, stream](A, B, C)


def prepare(s, A, B, C):
    """A no-argument launcher of step s's kernel on device arrays (anything with __cuda_array_interface__):
    A (M, K), B (K, N), C (M, N) float32, the 16-bit inputs seen as their uint16 bits."""
    from numba import cuda
    A, B, C = (cuda.as_cuda_array(x) for x in (A, B, C))
    if s.dtype != "f32":
        A, B = A.view(np.uint16), B.view(np.uint16)
    return lambda: s.kernel.launch(A, B, C)


def _simt(module, name, kernel=None, thread_tile=(8, 8), **quote):
    """A SIMT step: the Numba kernel `kernel` of `module` (default gemm_<module>); the chapter quotes `quoted`
    (default: that kernel) over `span`."""
    kernel = kernel or _gemm(module)
    return Step(name, module, build=lambda s: SimtKernel(module, kernel), dtype="f32", thread_tile=thread_tile,
                **{"quoted": kernel, **quote})


def _tc(module, name, needs, **config):
    """A tensor-core step: module.make(**config), its @kernel function quoted whole, one warp a 64x64 tile."""
    return Step(name, module, quoted=_gemm(module), build=lambda s: s.module.make(**s.config), config=config,
                needs=needs, thread_tile=(64, 64))


def _gemm(module):
    return "gemm_" + module.__name__.rsplit(".", 1)[1]


SM75 = ("mma.m16n8k8.f16", "ldmatrix")
SM80 = ("mma.m16n8k16.f16", "ldmatrix", "cp.async")

LADDER = [
    _simt(simt_naive, "simt 1: naive", thread_tile=(1, 1)),
    _simt(simt_coalesced, "simt 2: coalesced", thread_tile=(1, 1)),
    _simt(simt_smem, "simt 3: smem tiles", thread_tile=(1, 1)),
    _simt(simt_blocking1d, "simt 4: 1-D blocking", span=("for k0 in range", "cuda.syncthreads()"),
          thread_tile=(8, 1)),
    _simt(simt_blocking2d, "simt 5: 2-D blocking 8x8", span=("for k in range(BK)", "acc[TN * i + j] +=")),
    _simt(simt_vectorized, "simt 6: 128-bit loads", quoted="make_kernel",
          span=("for k0 in range", "acc[TN * i + j] +=")),
    _simt(simt_banks, "simt 6b: padded smem", "gemm_simt_padded", quoted=None, span=("PADDED = (", "PADDED = (")),
    _simt(simt_banks, "simt 6b: swizzled smem", "gemm_simt_swizzled", quoted=None,
          span=("SWIZZLED = (", "Swizzle(1, 2, 3)")),
    _simt(simt_warptile, "simt 7: dbuf + warp tiles", span=("for kt in range", "# one barrier")),
    _simt(simt_unrolled, "simt 8: unrolled k, padded A^T", span=("for kt in range", "# one barrier")),
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


def step(name):
    """The step of LADDER or EXPLORE called `name`."""
    return find(LADDER + EXPLORE, name, "kernels.gemm")
