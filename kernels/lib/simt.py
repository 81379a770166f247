"""matmul's SIMT family: chapter 7's float32 kernels (simt_unrolled, simt_warptile), on every GPU.

16-bit inputs are widened to float32 first (exact: every f16 and bf16 value is a float32 value); an operand
that is not packed at a multiple of the kernel's tile is copied into a zero-padded buffer that is, and C is
cropped from the padded result.
"""

from cutelite.numeric import BFloat16, Float16, Float32

from ..gemm import simt_unrolled, simt_warptile
from . import staging

__all__ = ["Simt", "SIMT", "SIMT_WARPTILE"]


class Simt:
    """A SIMT step of chapter 7 as a matmul kernel family: `module`'s Numba kernel `kernel`."""
    dtypes = (Float32, Float16, BFloat16)

    def __init__(self, name, module, kernel):
        self.name, self.module, self.kernel = name, module, kernel

    def can_implement(self, a, b, c, device=None):
        """(whether this family computes a @ b into c, and why not): any float32, float16 or bfloat16 inputs."""
        if a.dtype not in self.dtypes:
            return False, "%s takes float32, float16 or bfloat16 inputs, got %s" % (self.name, a.dtype.name)
        return True, ""

    def prepare(self, a, b, c, stream=0):
        """The launchable call computing a @ b (device Operands) into c (an Operand, or None) on `stream`."""
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
        C, after, result = staging.written(c, M, N, (Mp, Np), (a, b), stream)
        launch, (ag, bg) = getattr(T, self.kernel)[T.grid(Mp, Np) + (stream,)], inputs
        return staging.prepared(before, lambda: launch(ag, bg, C), after, result, keep=(ag, bg, C))


SIMT = Simt("simt", simt_unrolled, "gemm_simt_unrolled")
SIMT_WARPTILE = Simt("simt_warptile", simt_warptile, "gemm_simt_warptile")
