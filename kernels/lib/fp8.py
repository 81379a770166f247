"""matmul's FP8 family: kernels.hopper.fp8 on an sm_90 GPU, e4m3 or e5m2 inputs with scales, float32 (or
bfloat16 / float16 into such an `out`) out.

    C = (scale_a * A) @ (scale_b * B)      A (M, K), B (K, N): both float8_e4m3fn or both float8_e5m2

A scale is a number (or a one-element array, on the host or the device) for the whole operand, or blockwise
as DeepGEMM scales: A's an (M, ceil(K / 128)) array, one per 1 x 128 block of a row, and B's a
(ceil(K / 128), ceil(N / 128)) array, one per 128 x 128 block. Both operands are scaled the same way. The
kernel reads them as cutelite.scales' layouts say (MN-major (blocks along MN, blocks along K) matrices): an
array in another order is copied into that one first (a few kilobytes).

8-bit wgmma reads both operands K-major: an A that is column-major, or a B that is row-major (B^T (N, K)
column-major), is copied into K-major buffers with 16-byte rows first (a transposing pass over that operand,
on every call), as is any operand whose rows the tensor maps cannot read in place. The TMA fills the tile
edges with zeros and the kernel's stores are predicated: any M, N, K.

In Numba's simulator the kernel runs with kernels.instructions.hopper_model playing the TMA, mbarriers and
wgmma: correct, and slow (tens of seconds for a 128 x 128 tile); keep it to a few tiles.
"""

import numpy as np
from numba import cuda

from cutelite import Major
from cutelite.numeric import BFloat16, Float8E4M3FN, Float8E5M2, Float16, Float32

from ..arrays import device_view, is_device_array, transposed
from ..hopper import fp8 as kernel_fp8
from ..runtime import device_info, in_simulator, require_shared
from . import staging
from .wgmma import tma_view

__all__ = ["Fp8", "FP8", "CONFIG", "OUT_DTYPES", "scale_matrices"]

CONFIG = dict(BN=128, stages=None, consumers=2, regs=(40, 232), group=16, persistent=True, promote=4)
OUT_DTYPES = (Float32, BFloat16, Float16)


class Fp8:
    """kernels.hopper.fp8 (CONFIG, read at each prepare; blockwise scales promote every k-tile) as a matmul
    kernel family."""
    name = "fp8"
    dtypes = (Float8E4M3FN, Float8E5M2)

    def __init__(self):
        self._kernels = {}

    def can_implement(self, a, b, c, device=None):
        """(whether this family computes a @ b into c, and why not): 8-bit float inputs on an sm_90 GPU, or in the
        simulator (the model plays the Hopper instructions); any shape, any order."""
        if a.dtype not in self.dtypes:
            return False, "fp8 takes float8_e4m3fn or float8_e5m2 inputs, got %s" % a.dtype.name
        device = device or device_info()
        if device.cc is not None and tuple(device.cc[:2]) != (9, 0):
            return False, "fp8 needs an sm_90 GPU (8-bit wgmma, TMA); this is %s" % (device.name or device.sm)
        return True, ""

    def kernel(self, dtype, out, scales):
        """The FP8 kernel for these types and scales in CONFIG, built once (in the simulator: with a fresh model
        each time, returned with it)."""
        config = dict(CONFIG, promote=1) if scales == "blockwise" else dict(CONFIG)
        if in_simulator():
            from ..instructions.hopper_model import HopperModel
            model = HopperModel()
            return kernel_fp8.make(dtype=dtype.name, out=out.name, scales=scales, overrides=model.overrides(),
                                   **config), model
        key = (dtype, out, scales, tuple(sorted(config.items())))
        if key not in self._kernels:
            self._kernels[key] = kernel_fp8.make(dtype=dtype.name, out=out.name, scales=scales, **config)
        return self._kernels[key], None

    def prepare(self, a, b, c, stream=0, scale_a=None, scale_b=None):
        """The launchable call computing (scale_a a) @ (scale_b b) (device Operands) into c (an Operand, or
        None: a new float32 array) on `stream`."""
        from ..cutejit import encode_tensor_map
        (M, K), N = a.shape, b.shape[1]
        out = c.dtype if c is not None else Float32
        scales, (sa, copy_sa), (sb, copy_sb) = scale_matrices(scale_a, scale_b, M, N, K, stream)
        kernel, model = self.kernel(a.dtype, out, scales)
        require_shared(kernel.smem_bytes, "matmul: fp8 (%s)" % ", ".join("%s=%s" % kv for kv in kernel.config.items()
                                                                  if kv[0] != "smem"))
        (av, fill_a), (btv, fill_b) = k_major(a, stream), k_major(b.T, stream)
        # the kernel stores C two elements at a time (an even N, 4- or 8-byte aligned rows): C itself where it
        # can, else a buffer of whole pairs, cropped into C's place
        if c is not None and c.on_device and c.major == Major.K and c.align >= 16 and c.pitch % 16 == 0 \
                and N % 2 == 0 and not c.overlaps(a, b):
            cv, result = c.array, c.array
        else:
            dtype = c.array.dtype if c is not None else np.float32
            cv = cuda.device_array((M, N + N % 2), dtype)
            result = c.array if c is not None and c.on_device else cv if N % 2 == 0 else \
                cuda.device_array((M, N), dtype)
        after = [] if result is cv else [staging.crop(cv, result, stream)]
        o = kernel.objects
        encode = model.tensor_map if model else encode_tensor_map
        run = kernel.prepare(av, btv, cv, sa, sb, encode(av, o.tmA), encode(btv, o.tmB), stream=stream,
                             grid=1 if model else None)         # the simulator: one persistent block
        before = [f for f in (fill_a, fill_b, copy_sa, copy_sb) if f is not None]
        return staging.prepared(before, run, after, result, keep=(av, btv, cv, sa, sb))


def k_major(x, stream=0):
    """(Operand x (MN, K) as the tensor maps read it, K-major; the copy that makes it, or None): x itself where
    it is K-major with 16-byte rows at a 16-byte-aligned address, else a K-major buffer of 128-byte rows
    (wgmma.tma_view)."""
    return tma_view(x, not (x.major == Major.K and x.tma_readable), stream, Major.K)


def scale_matrices(scale_a, scale_b, M, N, K, stream=0):
    """("tensor" or "blockwise", (A's scales, the copy that refreshes them or None), (B's ...)) as the kernel
    reads them: float32 device matrices in the shapes and order of kernels.hopper.fp8.scale_shapes' layouts
    (cutelite.scales). A ValueError or TypeError naming matmul, the argument and the value for anything else."""
    kinds = [_kind(s, name) for s, name in ((scale_a, "scale_a"), (scale_b, "scale_b"))]
    scales = "blockwise" if "blockwise" in kinds else "tensor"     # one array of one block is either
    if scales == "blockwise" and "number" in kinds:
        raise ValueError("matmul: scale_a and scale_b must both be per tensor or both blockwise (arrays), got scale_a "
                         "%s and scale_b %s" % tuple("a number" if k == "number" else "an array" for k in kinds))
    layouts = kernel_fp8.scale_shapes(M, N, K, scales)
    # the (MN blocks, K blocks) matrix of each layout; matmul's B is (K, N): its scales come (K blocks, N blocks)
    want = [(lay.shape[0][1], lay.shape[1][1]) for lay in layouts]
    given = [want[0], want[1][::-1]]
    return (scales, _scale_matrix(scale_a, "scale_a", given[0], False, stream),
            _scale_matrix(scale_b, "scale_b", given[1], True, stream))


def _kind(s, name):
    """"number" (or None), "one" (an array of one scale) or "blockwise" (an array of several)."""
    if s is None or isinstance(s, (int, float, np.floating, np.integer)) and not isinstance(s, bool):
        return "number"
    if hasattr(s, "shape") and hasattr(s, "dtype"):
        return "one" if int(np.prod(s.shape)) == 1 else "blockwise"
    raise TypeError("matmul: %s must be a number or an array of float32 scales, got %r" % (name, type(s).__name__))


def _scale_matrix(s, name, shape, transpose, stream):
    """(The device float32 matrix the kernel reads for scale `s` given as `shape` (transposed: the kernel's is
    shape[::-1]), MN-major; the copy that refreshes it from a device `s` in another order, or None)."""
    if s is None or not hasattr(s, "shape"):
        value = 1.0 if s is None else float(s)
        return cuda.to_device(np.full((1, 1), value, np.float32)), None
    if tuple(s.shape) != shape and not (int(np.prod(s.shape)) == 1 and shape == (1, 1)):
        raise ValueError("matmul: %s must have shape %s for this product (%s), got %s" % (
            name, shape, "one scale" if shape == (1, 1) else "a scale per 128 x 128 block" if transpose
            else "a scale per 1 x 128 block", tuple(s.shape)))
    if str(s.dtype) not in ("float32", "torch.float32"):
        raise TypeError("matmul: %s must hold float32 scales, got %s" % (name, s.dtype))
    if not is_device_array(s):
        host = np.asarray(s, np.float32).reshape(shape)
        return cuda.to_device(np.ascontiguousarray(host).T if transpose else np.asfortranarray(host)), None
    d = device_view(s)
    d = d.reshape(shape) if d.shape != shape else d
    kernel_view = transposed(d) if transpose else d            # (MN blocks, K blocks)
    if kernel_view.shape[0] == 1 or kernel_view.strides[0] == 4:
        return kernel_view, None
    buf = transposed(cuda.device_array(kernel_view.shape[::-1], np.float32))     # MN-major
    return buf, staging.crop(kernel_view, buf, stream)


FP8 = Fp8()
