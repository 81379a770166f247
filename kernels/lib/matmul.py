"""matmul(A, B, out=None, out_dtype=None, alpha=1, beta=0, bias=None, activation=None, kernel="auto"):
D = activation(alpha A @ B + beta C + bias) on the GPU (or in the simulator) with the book's own kernels.

What it is for: a product of f16 / bf16 (or f32) matrices from NumPy, PyTorch, CuPy or Numba arrays, at
cuBLAS's speed on an H100 for sizes from about 2048 up (measured for f32 out, no epilogue, every majorness:
0.92-1.05 of cuBLAS at 2048^3, 4096^3, 8192^3 and 4096x14336x4096; 0.84 or more at 4000x3000x2500;
benchmarks/gemm/RESULTS.md). It has no batch mode. Elsewhere it is
the book's kernels, correct but slower: 0.63-0.72 of cuBLAS at 1024^3 on the H100, and the sm_80 kernel,
timed on the H100, 0.52-0.60.

  * f32 inputs -> SIMT fp32 (simt_unrolled); f16 / bf16 inputs -> f32 through tensor cores: on an H100
    (sm_90), chapter 8's persistent TMA + wgmma kernel (kernels/hopper), else tc_sm80_prefetch on sm_80+,
    tc_sm75 on a T4 (bf16 on sm_75 runs the SIMT kernel on exact f32 copies): the first family of AUTO whose
    can_implement holds. kernel="hopper" / "tc_sm80" / "tc_sm75" / "simt" / "simt_warptile" picks a family
    by name. The sm_80+ path (tc_sm80_prefetch.BEST: 128x128x32, 4 stages) has
    not been measured on the GPUs it serves (A100, L4, ...). On Hopper it is slower than step 10 and than
    sgemm_sm80.cu's 128x128x64 3-stage tile at 4096^3 and 8192^3, but no one change wins at every measured
    size, and an A100's or an L4's SM has less shared memory than Hopper's: it stays until one is measured
    (benchmarks/gemm/RESULTS.md, "What matmul runs on sm_80+ GPUs other than Hopper").
  * Any M, N, K, A and B each row- or column-major. On sm_90 the tensor maps read the operands in place
    wherever their rows (along the unit stride) are 16-byte multiples at 16-byte-aligned addresses; an
    operand that is not so is copied first into a buffer with 128-byte rows (a pass over that operand, on
    every call: 0.04 ms for 4000 x 2500 halves), and the TMA fills the tile edges with zeros and clips the
    stores. The sm_80 / sm_75 kernels
    read both orders in place (ldmatrix or ldmatrix.trans) under the same 16-byte rule and predicate the
    edges; otherwise, and for the SIMT kernel, the operands are padded into copies and the result cropped.
  * NumPy arrays are copied to the device and the result comes back as NumPy; device arrays (Numba,
    CuPy, PyTorch: anything with __cuda_array_interface__) are used in place and a Numba device array
    is returned (or `out`, when given). The work is queued on the stream the device arrays name (PyTorch's
    or CuPy's current stream), in order with the caller's own work and without making the host wait.
  * 8-bit floats (PyTorch's float8_e4m3fn / float8_e5m2, or uint8 arrays of their bits with
    fp8_format="e4m3" / "e5m2"; kernels.numeric.encode and decode convert NumPy arrays to and from them) with
    `scale_a`, `scale_b`: C = (scale_a A) @ (scale_b B) through chapter 8's kernel with FP8 wgmma on sm_90
    (kernels.lib.fp8: per-tensor or blockwise scales; float32 out, or bfloat16 / float16 into such an `out`,
    a NumPy bfloat16 `out` as uint16 bits).
  * The epilogue, fused: D in float32 (default), float16 or bfloat16 (out_dtype, or out's type); C is out's
    values before the call (beta != 0 needs out); bias of shape (N,) / (1, N) (a value per column) or (M, 1)
    (per row), float32, float16 or bfloat16; activation None, "relu" or "gelu" (tanh form, with the GPU's
    tanh.approx.f32). Every kernel family computes it in registers on its float32 accumulators from one
    description (kernels.cutejit.epilogue.Epilogue, a build-time option: with the defaults each kernel is
    the one it was without it); kernels.lib.epilogue reads and checks the options once (Fused). A NumPy
    result of bfloat16 is its bits as uint16; simt_warptile has no epilogue.
  * NumPy's semantics where they matter: an `out` that overlaps A or B gets the product as if computed into a
    temporary (it is); an empty K gives zeros; f16 inputs to the SIMT kernel are converted exactly to f32.
  * What a call costs the host besides the GPU's work (benchmarks/gemm/launch_cost.py, matmul_replay.py,
    staging_replay.py): the first call on a set of arrays converts them, picks the kernel, encodes its
    tensor maps and prepares the launch, and the launch of each copy around it (the first call of a kernel
    in a process also compiles it: seconds). On an H100 a later call on the same device A, B, `out` and
    stream is those launches again, one driver call each: 16-18 us of host time from PyTorch tensors
    without copies, against 42 us for torch.mm.

How it is built: each argument is described once (kernels.lib.operand.Operand); a kernel family (simt.py,
mma_sync.py, wgmma.py, fp8.py) answers `can_implement(a, b, c)` -> (bool, reason) and `prepare(a, b, c, stream)` ->
a launchable call that returns C. matmul checks, picks, prepares, launches, and keeps the prepared call of a
call on device arrays with `out` to launch again.
"""

import warnings
from typing import Any, Callable, Optional

import numpy as np
from numba import cuda

from cutelite.numeric import BFloat16, Float8E4M3FN, Float8E5M2, Float16, Float32

from ..arrays import is_device_array
from ..capability import CapabilityError
from ..cutejit.epilogue import Epilogue
from ..numeric import storage
from . import staging
from .epilogue import OUT_DTYPES, PLAIN, Fused, fuse, out_type
from .fp8 import FP8
from .mma_sync import TC_SM75, TC_SM80
from .operand import Operand, describe, shared_stream, stream_of
from .simt import SIMT, SIMT_WARPTILE
from .wgmma import WGMMA

__all__ = ["matmul", "pick", "FAMILIES", "AUTO", "KERNELS", "INPUTS"]

FAMILIES = {f.name: f for f in (WGMMA, TC_SM80, TC_SM75, SIMT, SIMT_WARPTILE, FP8)}
AUTO = {Float32: ("simt",),                          # kernel="auto": the first family that can implement it
        Float16: ("hopper", "tc_sm80", "tc_sm75"),
        BFloat16: ("hopper", "tc_sm80", "simt"),     # sm_75 has no bf16 mma: bf16 -> f32 is exact
        Float8E4M3FN: ("fp8",), Float8E5M2: ("fp8",)}
FP8_FORMATS = {"e4m3": Float8E4M3FN, "e5m2": Float8E5M2}     # fp8_format: what a uint8 array's bits are
KERNELS = ("auto",) + tuple(FAMILIES)
INPUTS = tuple(AUTO)
Array = Any         # a NumPy array, or a GPU array of Numba, CuPy or PyTorch (__cuda_array_interface__)


def matmul(A: Array, B: Array, out: Optional[Array] = None, kernel: str = "auto", *, out_dtype=None, alpha=1, beta=0,
           bias: Optional[Array] = None, activation: Optional[str] = None, scale_a=None, scale_b=None,
           fp8_format: Optional[str] = None) -> Array:
    """D = activation(alpha A @ B + beta C + bias): A (M, K), B (K, N) -> D (M, N) of out_dtype (float32,
    float16 or bfloat16; default: out's type, else float32). C is `out`'s values before the call (beta != 0
    needs `out`); bias has shape (N,) or (1, N) (a value per column) or (M, 1) (per row); activation None,
    "relu" or "gelu" (tanh form). `out` (if given) is D and is returned, else a new array (NumPy for NumPy
    inputs, bfloat16 as its bits in uint16; else a Numba device array). 8-bit float inputs: D = (scale_a A) @
    (scale_b B), A and B uint8 bits of `fp8_format` ("e4m3" or "e5m2") or PyTorch float8 tensors, with no
    alpha, beta, bias or activation. See the module docstring."""
    scales, options = (scale_a, scale_b), (out_dtype, alpha, beta, bias, activation)
    run = _PREPARED.get(_call_key(A, B, out, kernel, scales, options)) if _PREPARED else None
    if run is not None:              # the same arrays, options and stream as a call before: its launch again
        run()
        return out
    with warnings.catch_warnings():  # small grids are small matrices here, not a mistake to warn about
        warnings.filterwarnings("ignore", message=".*GPU under-utilization")
        return _matmul(A, B, out, kernel, scales, fp8_format, options)


def _matmul(A, B, out, kernel, scales=(None, None), fp8_format=None, options=(None, 1, 0, None, None)):
    if kernel not in KERNELS:
        raise ValueError("matmul: kernel must be one of %s, got %r" % (", ".join(KERNELS), kernel))
    out_dtype, alpha, beta, bias, activation = options
    fp8 = _fp8_format(fp8_format, A, B)
    a, b = describe(A, "A", dtype=fp8), describe(B, "B", k=0, dtype=fp8)   # describe
    (M, K), N = a.shape, b.shape[1]
    _check(a, b, scales)                                            # check
    c = _describe_out(out, M, N, out_dtype)
    t = c.dtype if c is not None else Float32 if out_dtype is None else out_type(out_dtype)
    on_device = a.on_device or b.on_device
    fused = fuse(t, alpha, beta, bias, activation, M, N, out, on_device)
    if a.dtype in FP8.dtypes and (fused.epi != Epilogue(out=t.name) or (c is None and t is not Float32)):
        raise TypeError("matmul: 8-bit float inputs take no alpha, beta, bias or activation, and write float16 or "
                        "bfloat16 only into an `out` (kernels.lib.fp8); got %r" % (fused.epi,))
    stream = shared_stream(a, b, c)
    if 0 in (M, N) or (K == 0 and fused.plain):   # an empty product: C is all zeros (or has no elements)
        return _zeros(M, N, out, c, on_device, stream, t)
    if K == 0:                               # the epilogue of a zero product: one zero column of A and row of B
        a, b = (describe(cuda.to_device(np.zeros(shape, storage(a.dtype))), x.name, k=x.k, dtype=a.dtype)
                for x, shape in ((a, (M, 8)), (b, (8, N))))
    family = pick(kernel, a, b, c, fused=fused)                     # pick
    if family is FP8:
        call = family.prepare(a.to_device(), b.to_device(), c, stream, scale_a=scales[0], scale_b=scales[1])
    else:
        call = family.prepare(a.to_device(), b.to_device(), c, stream, fused)   # allocate
    C = call()                                                      # launch
    if c is not None and c.on_device:
        _remember(A, B, out, kernel, scales, options, call)
        return out
    if out is None and on_device:
        return C
    if stream:
        stream.synchronize()
    D = C.copy_to_host()
    D = D.view(np.float16) if t is Float16 else D
    if out is None:
        return D
    out[...] = D
    return out


def _fp8_format(fp8_format, A, B):
    """The 8-bit float type that uint8 arrays A and B hold (fp8_format), or None without one."""
    if fp8_format is None:
        return None
    if fp8_format not in FP8_FORMATS:
        raise ValueError("matmul: fp8_format must be %s, got %r" % (" or ".join(map(repr, FP8_FORMATS)), fp8_format))
    for x, name in ((A, "A"), (B, "B")):
        if str(getattr(x, "dtype", None)) not in ("uint8", "torch.uint8"):
            raise TypeError("matmul: fp8_format=%r says A and B hold the bits of 8-bit floats as uint8; %s has dtype %s"
                            % (fp8_format, name, getattr(x, "dtype", type(x).__name__)))
    return FP8_FORMATS[fp8_format]


def _check(a: Operand, b: Operand, scales=(None, None)):
    for x in (a, b):
        if x.dtype not in INPUTS:
            raise TypeError("matmul: %s has dtype %s; supported: float32 (SIMT), float16 and bfloat16 (tensor "
                            "cores, f32 result), 8-bit floats (float8_e4m3fn, float8_e5m2, or uint8 with "
                            "fp8_format)" % (x.name, x.dtype.name))
    if a.dtype not in FP8.dtypes and any(s is not None for s in scales):
        raise TypeError("matmul: scale_a and scale_b scale 8-bit float inputs; A is %s" % a.dtype.name)
    if a.dtype is not b.dtype:
        raise TypeError("matmul: A and B must have the same dtype, got %s and %s" % (a.dtype.name, b.dtype.name))
    if a.shape[1] != b.shape[0]:
        raise ValueError("matmul: A is %dx%d and B is %dx%d: A's columns (%d) must equal B's rows (%d)"
                         % (a.shape + b.shape + (a.shape[1], b.shape[0])))


def _describe_out(out, M, N, out_dtype) -> Optional[Operand]:
    """out's Operand (None without one): a (M, N) array of out_dtype (if given), of float32, float16 or
    bfloat16; a uint16 array (NumPy, Numba, CuPy) holds bfloat16 as its bits."""
    if out is None:
        return None
    t = None if out_dtype is None else out_type(out_dtype)
    if not (isinstance(out, np.ndarray) or is_device_array(out)):
        raise TypeError("matmul: out must be a %s (%d, %d) NumPy or device array, got %r"
                        % ((t or Float32).name, M, N, type(out).__name__))
    bits = t in (None, BFloat16) and str(getattr(out, "dtype", "")) == "uint16"    # bfloat16 held as its bits
    c = describe(out, "out", dtype=BFloat16 if bits else None)
    if c.shape != (M, N) or c.dtype not in OUT_DTYPES or (t is not None and c.dtype is not t):
        raise ValueError("matmul: out must be a %s (%d, %d) array, got %s %s%s" % (
            (t or Float32).name, M, N, c.dtype.name, c.shape, "" if t else " (float16 and bfloat16 serve too)"))
    return c


def pick(kernel: str, a: Operand, b: Operand, c: Optional[Operand], device=None, fused: Fused = PLAIN):
    """The kernel family that computes a @ b into c through the epilogue `fused`: the one named `kernel`, or
    for "auto" the first of AUTO[dtype] that can implement it on `device` (default: this GPU or profile).
    A TypeError where the family takes no such inputs, a CapabilityError where the GPU lacks what it needs."""
    names = AUTO[a.dtype] if kernel == "auto" else (kernel,)
    reasons = []
    for name in names:
        family = FAMILIES[name]       # FP8 has no fused epilogue (_matmul refuses its options for 8-bit inputs)
        ok, why = family.can_implement(a, b, c, device) if family is FP8 else family.can_implement(a, b, c, device, fused)
        if ok:
            return family
        reasons.append(why)
    error = TypeError if kernel != "auto" and a.dtype not in FAMILIES[kernel].dtypes else CapabilityError
    raise error("matmul: kernel=%r cannot compute a %s product here: %s" % (kernel, a.dtype.name, "; ".join(reasons)))


def _zeros(M, N, out, c, on_device, stream, t=Float32):
    """The product when M, N or K is 0: zeros of type t, in `out` if given."""
    if out is None:
        C = np.zeros((M, N), np.float16 if t is Float16 else storage(t))
        return cuda.to_device(C.view(storage(t))) if on_device and M * N else C
    if isinstance(out, np.ndarray):
        out[...] = 0
    else:
        staging.fill_zero(c.array, stream)
    return out


_PREPARED = {}     # (what A, B, out and the stream are) -> the launch that computed that call


def _identity(x):
    """What a prepared call depends on for a device array: address, shape, strides, dtype (None otherwise)."""
    if type(x).__module__.startswith("torch"):
        return (x.data_ptr(), x.shape, x.stride(), x.dtype) if x.is_cuda else None
    cai = getattr(x, "__cuda_array_interface__", None)
    return None if cai is None else (cai["data"][0], cai["shape"], cai["strides"], cai["typestr"])


def _scale_key(s):
    """What a prepared call depends on for a scale: a number's value, a device array's identity; None where it
    cannot be prepared (a host array, whose values may change)."""
    if s is None or isinstance(s, (int, float, np.floating, np.integer)):
        return ("value", s)
    ident = _identity(s)
    return None if ident is None else ("array", ident)


def _call_key(A, B, out, kernel, scales=(None, None), options=(None, 1, 0, None, None)):
    """The key of a call that can be prepared (device A, B, out and bias, queued on one stream), or None."""
    if out is None:
        return None
    scale_keys = tuple(_scale_key(s) for s in scales)
    if None in scale_keys:
        return None
    out_dtype, alpha, beta, bias, activation = options
    ids = (_identity(A), _identity(B), _identity(out)) + ((_identity(bias),) if bias is not None else ())
    if None in ids:
        return None
    arrays = (A, B, out) + ((bias,) if bias is not None else ())
    if all(type(x).__module__.startswith("torch") for x in arrays) and all(
            x.get_device() == A.get_device() for x in arrays):
        stream = stream_of(A)                 # one device: one current stream
    else:
        streams = {stream_of(x) for x in arrays}
        if len(streams) != 1:                 # operands of several streams: matmul synchronizes them each time
            return None
        stream = streams.pop()
    try:
        hash(out_dtype)
    except TypeError:
        return None
    return ids + (kernel, stream, str(out_dtype), alpha, beta, activation) + scale_keys


def _remember(A, B, out, kernel, scales, options, run: Callable):
    key = _call_key(A, B, out, kernel, scales, options)
    if key is not None:
        if len(_PREPARED) > 64:
            _PREPARED.clear()
        _PREPARED[key] = run
