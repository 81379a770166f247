"""matmul's SIMT family: chapter 7's float32 kernels (simt_unrolled, simt_warptile), on every GPU.

16-bit inputs are widened to float32 first (exact: every f16 and bf16 value is a float32 value); an operand
that is not packed at a multiple of the kernel's tile is copied into a zero-padded buffer that is, and C is
cropped from the padded result.
"""

from cutelite.numeric import BFloat16, Float16, Float32

from ..gemm import simt_unrolled, simt_warptile
from ..numeric import storage
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
            array, packed = x.array, x.packed(shape)
            if x.dtype is not Float32:
                array, widen = staging.widen_to_f32(array, x.dtype is BFloat16, stream)
                before.append(widen)
                packed = array.shape == shape and (shape[1] * 4) % 16 == 0
            if not packed:
                array, pad = staging.staged(array, *shape, stream=stream)
                before.append(pad)
            inputs.append(array)
        C, after, result = staging.written(c, M, N, (Mp, Np), (a, b), stream, storage(fused.epi.out))
        if fused.epi.beta:
            before += staging.seeded(c, C, stream)
        epi, wide = fused.for_kernel(f32_bias=True)
        args, fill = fused.arguments(C, stream, wide)
        launch, (ag, bg) = self.launcher(epi)[T.grid(Mp, Np) + (stream,)], inputs
        return staging.prepared(before + fill, lambda: launch(ag, bg, C, *args), after, result,
                                keep=(ag, bg, C) + args)


SIMT = Simt("simt", simt_unrolled, "gemm_simt_unrolled")
SIMT_WARPTILE = Simt("simt_warptile", simt_warptile, "gemm_simt_warptile")
