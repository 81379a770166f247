"""matmul's mma.sync family: chapter 7's tensor-core steps (tc_sm80_prefetch on sm_80 and newer, tc_sm75 on
a T4), f16 or bf16 in, float32 out.

The kernels read both orders of each operand in place (ldmatrix for K-major, ldmatrix.trans for MN-major)
where its rows are 16-byte multiples at 16-byte-aligned addresses, and predicate the tile edges; any other
operand is copied into zero-padded row-major buffers at multiples of the tile, and C cropped.
"""

from cutelite import Major
from cutelite.numeric import BFloat16, Float16

from ..capability import why_not
from ..gemm import step
from ..runtime import device_info, in_simulator
from ..numeric import storage
from . import staging
from .epilogue import PLAIN

__all__ = ["MmaSync", "TC_SM80", "TC_SM75"]


class MmaSync:
    """A tensor-core step of chapter 7 (its Step named `step_name`) as a matmul kernel family."""

    def __init__(self, name, step_name, dtypes):
        self.name, self.step, self.dtypes = name, step(step_name), dtypes
        self._kernels = {}

    def can_implement(self, a, b, c, device=None, fused=PLAIN):
        """(whether this family computes a @ b into c, and why not): its input types, on a GPU (or profile)
        with the step's instructions; any shape, any order."""
        if a.dtype not in self.dtypes:
            return False, "%s takes %s inputs, got %s (use 'simt')" % (
                self.name, " or ".join(t.name for t in self.dtypes), a.dtype.name)
        device = device or device_info()
        missing = why_not(self.step.needs, device.cc, device.name)
        return (False, "%s %s" % (self.name, missing)) if missing else (True, "")

    def kernel(self, dtype, majors, edges, epi=None):
        """The step's kernel for these operands and Epilogue (None: C = A @ B in float32), in its
        configuration (64x64 CTA tiles in the simulator), built once."""
        key = (dtype, majors, edges, epi, in_simulator())
        if key not in self._kernels:
            config = dict(self.step.config, **(dict(BM=64, BN=64) if in_simulator() else {}))
            self._kernels[key] = self.step.module.make(dtype=dtype.name, majors=majors, edges=edges,
                                                       **config, **({"epi": epi} if epi else {}))
        return self._kernels[key]

    def prepare(self, a, b, c, stream=0, fused=PLAIN):
        """The launchable call computing a @ b (device Operands) into c (an Operand, or None) on `stream`,
        through the epilogue `fused` (kernels.lib.epilogue.Fused)."""
        (M, K), N = a.shape, b.shape[1]
        epi, wide = fused.for_kernel()
        before = []
        if a.in_16_byte_rows and b.in_16_byte_rows:       # read in place, edges predicated
            k = self.kernel(a.dtype, (a.major, b.major), False, epi)
            if M % k.tile[0] or N % k.tile[1] or K % k.tile[2]:
                k = self.kernel(a.dtype, (a.major, b.major), True, epi)
            shape, ag, bg = (M, staging.ceil_to(N, 2)), a.array, b.array     # C's values are stored in pairs
        else:                                              # padded row-major copies, multiples of the tile
            k = self.kernel(a.dtype, (Major.K, Major.MN), False, epi)
            Mp, Np, Kp = (staging.ceil_to(x, t) for x, t in zip((M, N, K), k.tile))
            (ag, pad_a), (bg, pad_b) = (staging.staged(a.array, Mp, Kp, stream),
                                        staging.staged(b.array, Kp, Np, stream))
            shape, before = (Mp, Np), [pad_a, pad_b]
        C, after, result = staging.written(c, M, N, shape, (a, b), stream, storage(fused.epi.out))
        if fused.epi.beta:
            before += staging.seeded(c, C, stream)
        args, fill = fused.arguments(C, stream, wide)
        return staging.prepared(before + fill, k.prepare(ag, bg, C, *args, stream=stream), after, result,
                                keep=(ag, bg, C) + args)


TC_SM80 = MmaSync("tc_sm80", "tc sm80 + k-block prefetch", (Float16, BFloat16))
TC_SM75 = MmaSync("tc_sm75", "tc sm75 128x128x32", (Float16,))      # mma.m16n8k8 on sm_75 has no bf16
