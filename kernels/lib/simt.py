"""matmul's SIMT family: chapter 7's float32 kernels (simt_unrolled, simt_warptile), on every GPU.

16-bit inputs are widened to float32 first (exact: every f16 and bf16 value is a float32 value), into a
zero-padded buffer at a multiple of the kernel's tile in the same pass; a float32 operand that is not packed
at such a multiple is copied into one, and C is cropped from the padded result. The kernel and the copies are
launched as prepared launches (one driver call each, kernels.runtime.prepared_launch).
"""

from cutelite.numeric import BFloat16, Float16, Float32

from ..gemm import simt_unrolled, simt_warptile
from ..numeric import storage
from ..runtime import prepared_launch
from . import staging
from .epilogue import PLAIN

__all__ = ["Simt", "SIMT", "SIMT_WARPTILE"]


class Simt:
    """A SIMT step of chapter 7 as a matmul kernel family: `module`'s Numba kernel `kernel`."""
    dtypes = (Float32, Float16, BFloat16)

    def __init__(self, name, module, kernel):
        self.name, self.module, self.kernel = name, module, kernel
        self._kernels = {}

    def can_implement(self, a, b, c, device=None, fused=PLAIN):
        """(whether this family computes a @ b into c, and why not): any float32, float16 or bfloat16 inputs;
        an epilogue only in simt_unrolled ("simt")."""
        if a.dtype not in self.dtypes:
            return False, "%s takes float32, float16 or bfloat16 inputs, got %s" % (self.name, a.dtype.name)
        if not fused.plain and not hasattr(self.module, "make"):
            return False, "%s has no epilogue (use 'simt')" % self.name
        return True, ""

    def launcher(self, epi):
        """The kernel for Epilogue epi (None: the step's own), built once."""
        if epi is None:
            return getattr(self.module, self.kernel)
        if epi not in self._kernels:
            self._kernels[epi] = self.module.make(epi)
        return self._kernels[epi]

    def prepare(self, a, b, c, stream=0, fused=PLAIN):
        """The launchable call computing a @ b (device Operands) into c (an Operand, or None) on `stream`,
        through the epilogue `fused` (the bias read as float32)."""
        T = self.module
        (M, K), N = a.shape, b.shape[1]
        Mp, Np, Kp = staging.ceil_to(M, T.BM), staging.ceil_to(N, T.BN), staging.ceil_to(K, T.BK)
        before, inputs = [], []
        for x, shape in ((a, (Mp, Kp)), (b, (Kp, Np))):
            array = x.array
            if x.dtype is not Float32:          # widened and padded in one pass
                array, copy = staging.widen_to_f32(array, x.dtype is BFloat16, stream, shape)
                before.append(copy)
            elif not x.packed(shape):
                array, copy = staging.staged(array, *shape, stream=stream)
                before.append(copy)
            inputs.append(array)
        C, after, result = staging.written(c, M, N, (Mp, Np), (a, b), stream, storage(fused.epi.out))
        if fused.epi.beta:
            before += staging.seeded(c, C, stream)
        epi, wide = fused.for_kernel(f32_bias=True)
        args, fill = fused.arguments(C, stream, wide)
        (grid, block), kernel = T.grid(Mp, Np), self.launcher(epi)
        run = prepared_launch(kernel, tuple(inputs) + (C,) + args, grid, block, 0, stream)
        if run is None:                         # the simulator: Numba's launch
            launch, (ag, bg) = kernel[grid, block, stream], inputs
            run = lambda: launch(ag, bg, C, *args)  # noqa: E731
        return staging.prepared(before + fill, run, after, result, keep=tuple(inputs) + (C,) + args)


SIMT = Simt("simt", simt_unrolled, "gemm_simt_unrolled")
SIMT_WARPTILE = Simt("simt_warptile", simt_warptile, "gemm_simt_warptile")
