"""attention(q, k, v, causal=False, scale=None, out=None, layout="BSHD", lse=None) -> (O, LSE): forward
attention with chapter 10's kernels, O = softmax(scale Q K^T [+ causal mask]) V and the log-sum-exp of each
row.

  * q (B, S_q, H, D), k and v (B, S_k, H_kv, D) with layout="BSHD", or (B, H, S, D) with layout="BHSD";
    float16 or bfloat16 (all three alike), D 64 or 128, H a multiple of H_kv (grouped-query heads), D
    contiguous. O has q's shape, layout and type; LSE is (B, H, S_q) float32. scale defaults to 1 / sqrt(D);
    with `causal` query i sees key j <= i + S_k - S_q (the diagonal aligned bottom-right), and a row that
    sees no key gets O = 0 and LSE = -inf (kernels/attention/reference.py says the same in NumPy).
  * The kernel: on an sm_90 GPU, fa3_wgmma (TMA, wgmma, warp specialization); elsewhere fa2_mma (mma.sync:
    m16n8k16 and cp.async on sm_80+, m16n8k8 on a T4, which has no bfloat16 mma). Each configuration (D,
    type, mask, scale, kernel) is built once per process; the simulator builds fa2_mma with small tiles.
  * PyTorch, CuPy and Numba device arrays are used in place, and O and LSE come back in q's library (or are
    written into `out`); NumPy arrays are copied to the device and O and LSE come back as NumPy. The work is
    queued on the stream of the arrays' library (PyTorch's or CuPy's current one); the Hopper kernel launches
    on the default stream, so on another stream the host waits for that stream first and for the kernel after.
  * With `out` and `lse` (a (B, H, S_q) float32 array) given as device arrays, a later call on the same
    arrays (addresses, shapes, strides, types), mask, scale, layout and stream is the launch of the call
    before again: one driver call, no checks (as matmul replays its calls with `out`).
"""

import math
from typing import Any, Optional, Tuple

import numpy as np
from numba import cuda

from ..arrays import device_view, is_device_array
from ..capability import CapabilityError
from ..numeric import storage
from ..runtime import device_info, in_simulator, supports
from .operand import _address, shared_stream, stream_of

__all__ = ["attention", "pick", "DTYPES", "HEAD_DIMS", "LAYOUTS"]

DTYPES = ("float16", "bfloat16")
HEAD_DIMS = (64, 128)
LAYOUTS = ("BSHD", "BHSD")
HOPPER_NEEDS = ("wgmma", "setmaxnreg", "cp.async.bulk.tensor", "mbarrier.try_wait", "fence.proxy.async")
SIMULATOR_TILES = dict(BM=32, BN=32, warps=2)       # fa2_mma in the simulator: 64 threads a CTA, not 256
# fa2_mma's tiles where they were timed faster than make()'s defaults (python -m kernels.attention.check
# --variants default,longest_first,fa2_tiles --dims 128, H200, 2026-11-27, fp16, S = 4096): FlashAttention-2's
# own at D = 128 on sm_80+, heaviest q-tiles first when causal: 0.99 / 1.19 of SDPA's flash backend (full /
# causal) against 0.82 / 0.88. Elsewhere (D = 64, a T4) make()'s defaults.
FA2_TILES_AT = {("sm80", 128)}           # (arch, D) where fa2_mma runs fa2_mma.FA2_TILES
# fa3_wgmma's build on sm_90 for each head dim (make's options): the fastest that check_hopper measured
# (benchmarks/attention/RESULTS.md; its --configs times the candidate tiles of each D)
HOPPER_BUILD = {64: dict(pingpong=True, overlap=True), 128: dict(pingpong=True, overlap=True)}
Array = Any     # a NumPy array, or a GPU array of PyTorch, CuPy or Numba (__cuda_array_interface__)


def attention(q: Array, k: Array, v: Array, causal: bool = False, scale: Optional[float] = None,
              out: Optional[Array] = None, layout: str = "BSHD",
              lse: Optional[Array] = None) -> Tuple[Array, Array]:
    """(O, LSE) of forward attention; see the module's docstring. A TypeError or ValueError naming the
    argument and its value for what the kernels do not take, a CapabilityError for bfloat16 on a T4."""
    key = _call_key(q, k, v, out, lse, causal, scale, layout)
    if key is not None and key in _PREPARED:    # the same arrays and stream as a call before: its launch again
        _PREPARED[key]()
        return out, lse
    if layout not in LAYOUTS:
        raise ValueError("attention: layout must be one of %s, got %r" % (", ".join(LAYOUTS), layout))
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError("attention: causal must be True or False, got %r" % (causal,))
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating, np.integer))
                              or not math.isfinite(scale)):
        raise TypeError("attention: scale must be a finite number or None, got %r" % (scale,))
    args = (("q", q), ("k", k), ("v", v)) + ((("out", out),) if out is not None else ())
    dtype = _check_arrays(args)
    B, S_q, H, D, S_k, H_kv = _check_shapes(q, k, v, out, layout)
    scale = 1.0 / math.sqrt(D) if scale is None else float(scale)
    kernel = pick(dtype)
    on_device = is_device_array(q)
    if on_device:
        for name, x in args:
            _check_device_strides(name, x)
    views = [_bits(x, dtype) if on_device else cuda.to_device(np.ascontiguousarray(_host_bits(x, dtype)))
             for x in (q, k, v)]
    if out is None:
        O = _empty(q if on_device else None, tuple(q.shape), dtype)
    else:
        O = out if on_device else _empty(None, tuple(q.shape), dtype)
    if lse is not None:
        _check_lse(lse, (B, H, S_q), on_device)
    LSE = lse if lse is not None and on_device else _empty(q if on_device else None, (B, H, S_q), "float32")
    o_bits, lse_view = _bits(O, dtype), device_view(LSE)
    stream = shared_stream(*(_Stream(stream_of(x)) for _, x in args)) if on_device and not in_simulator() else 0
    if kernel == "hopper":
        run = _hopper_call(views, o_bits, lse_view, dtype, causal, scale, layout, stream)
    else:
        to_bshd = (0, 1, 2, 3) if layout == "BSHD" else (0, 2, 1, 3)
        fa2 = fa2_kernel(D, dtype, bool(causal), scale)
        run = fa2.prepare(*(_permuted(x, to_bshd) for x in views + [o_bits]), lse_view, stream=stream)
    run()
    if on_device:
        _remember(key, run)
        return O, LSE
    o_host, lse_host = o_bits.copy_to_host().view(np.asarray(q).dtype), lse_view.copy_to_host()
    if lse is not None:
        lse[...], lse_host = lse_host, lse
    if out is None:
        return o_host, lse_host
    out[...] = o_host
    return out, lse_host


def pick(dtype: str, device=None) -> str:
    """The kernel attention runs for `dtype` on `device` (default: this GPU or profile): "hopper" on an sm_90
    GPU whose instructions it has (not the simulator, where its twins take minutes), else "mma_sync"; a
    CapabilityError for bfloat16 on a GPU without sm_80's mma (a T4)."""
    device = device or device_info()
    cc = device.cc
    sm90 = not device.simulator and cc is not None and tuple(cc[:2]) == (9, 0)
    if sm90 and all(supports(n, cc) for n in HOPPER_NEEDS):
        return "hopper"
    if dtype == "bfloat16" and not supports("cp.async", cc):
        raise CapabilityError("attention: bfloat16 needs the mma of sm_80 or newer; this is %s (float16 runs)"
                              % device.name)
    return "mma_sync"


# ---- the checks -------------------------------------------------------------------------------------------
def _dtype_name(x):
    return str(getattr(x, "dtype", type(x).__name__)).replace("torch.", "")


def _check_arrays(args):
    """The element type q, k, v (and out) share; TypeErrors for other arrays, types and mixed places."""
    for name, x in args:
        if not (isinstance(x, np.ndarray) or is_device_array(x)):
            raise TypeError("attention: %s must be a NumPy array or a GPU array (PyTorch, CuPy, Numba), got %s"
                            % (name, type(x).__name__))
        if _dtype_name(x) not in DTYPES:
            raise TypeError("attention: %s has dtype %s; attention takes %s"
                            % (name, _dtype_name(x), " or ".join(DTYPES)))
    dtype = _dtype_name(args[0][1])
    for name, x in args[1:]:
        if _dtype_name(x) != dtype:
            raise TypeError("attention: q and %s must have the same dtype, got %s and %s"
                            % (name, dtype, _dtype_name(x)))
    places = {name: _place(x) for name, x in args}
    if len(set(places.values())) > 1:
        raise TypeError("attention: q, k, v%s must all be NumPy arrays or all on one GPU, got %s" % (
            " and out" if len(args) > 3 else "", ", ".join("%s %s" % kv for kv in places.items())))
    return dtype


def _place(x):
    """"host", or the GPU x is on (PyTorch's and CuPy's device index; "GPU" where the array does not say)."""
    if not is_device_array(x):
        return "host"
    library = type(x).__module__.split(".")[0]
    index = x.device.index if library == "torch" else x.device.id if library == "cupy" else None
    return "GPU" if index is None else "cuda:%d" % index


def _check_shapes(q, k, v, out, layout):
    """(B, S_q, H, D, S_k, H_kv); ValueErrors naming the argument and its shape otherwise."""
    for name, x in (("q", q), ("k", k), ("v", v)) + ((("out", out),) if out is not None else ()):
        if len(x.shape) != 4:
            raise ValueError("attention: %s must have 4 modes (%s), got shape %s" % (name, layout, tuple(x.shape)))
    to_bshd = (0, 1, 2, 3) if layout == "BSHD" else (0, 2, 1, 3)
    (B, S_q, H, D), (Bk, S_k, H_kv, Dk) = ([int(x.shape[i]) for i in to_bshd] for x in (q, k))
    if D not in HEAD_DIMS:
        raise ValueError("attention: the head dimension D must be one of %s, got q of shape %s (D = %d)"
                         % (HEAD_DIMS, tuple(q.shape), D))
    if tuple(v.shape) != tuple(k.shape):
        raise ValueError("attention: k and v must have the same shape, got %s and %s"
                         % (tuple(k.shape), tuple(v.shape)))
    if Bk != B:
        raise ValueError("attention: q and k must have the same batch, got %d (q %s) and %d (k %s)"
                         % (B, tuple(q.shape), Bk, tuple(k.shape)))
    if Dk != D:
        raise ValueError("attention: q and k must have the same head dimension, got %d and %d" % (D, Dk))
    if H_kv == 0 or H % H_kv:
        raise ValueError("attention: the query heads H = %d must be a multiple of k's heads H_kv = %d" % (H, H_kv))
    if 0 in (B, S_q, H, S_k):
        raise ValueError("attention: every mode must be nonempty, got q %s and k %s" % (tuple(q.shape), tuple(k.shape)))
    if out is not None and tuple(out.shape) != tuple(q.shape):
        raise ValueError("attention: out must have q's shape %s, got %s" % (tuple(q.shape), tuple(out.shape)))
    return B, S_q, H, D, S_k, H_kv


def _check_lse(lse, shape, on_device):
    """A TypeError or ValueError unless `lse` can take the LSE: float32 of `shape`, where q is (device or host),
    contiguous on the device."""
    if is_device_array(lse) != on_device or _dtype_name(lse) != "float32":
        raise TypeError("attention: lse must be a float32 %s array like q, got %s %s" % (
            "device" if on_device else "NumPy", "device" if is_device_array(lse) else type(lse).__name__,
            _dtype_name(lse)))
    if tuple(lse.shape) != shape:
        raise ValueError("attention: lse must have shape (B, H, S_q) = %s, got %s" % (shape, tuple(lse.shape)))
    strides = tuple(device_view(lse).strides) if on_device else None
    if on_device and strides != (4 * shape[1] * shape[2], 4 * shape[2], 4):
        raise ValueError("attention: lse must be contiguous, got strides %s (bytes)" % (strides,))


def _check_device_strides(name, x):
    """A ValueError unless the kernels can read device array x in place: D contiguous (unit stride), the other
    strides and the address multiples of 16 bytes (the kernels load 16 bytes at a time)."""
    a = device_view(x)
    shape, strides, address = tuple(a.shape), tuple(a.strides), _address(a)
    if shape[3] > 1 and strides[3] != 2:
        raise ValueError("attention: %s must be contiguous along D (its last mode), got strides %s (bytes)"
                         % (name, strides))
    if address % 16 or any(s % 16 for s, n in zip(strides[:3], shape[:3]) if n > 1):
        raise ValueError("attention: %s's address (%#x) and strides %s (bytes) must be multiples of 16"
                         % (name, address, strides))


# ---- arrays -----------------------------------------------------------------------------------------------
class _Stream:
    """What shared_stream reads of an argument: its stream, on the device."""
    on_device = True

    def __init__(self, stream):
        self.stream = stream


def _bits(x, dtype):
    """Device array x as the Numba device array the kernels read: float16, or bfloat16 as its uint16 bits."""
    if type(x).__module__.startswith("torch") and dtype == "bfloat16":
        import torch
        x = x.view(torch.int16)
    x = device_view(x)
    bits = np.dtype(storage(dtype))
    return x if np.dtype(x.dtype) == bits else x.view(bits)


def _host_bits(x, dtype):
    return x if dtype == "float16" else x.view(np.uint16)


def _empty(like, shape, dtype):
    """A new array of `shape`: in like's library (PyTorch, CuPy) on its device, a Numba device array (bfloat16
    as uint16 bits) for other device arrays, and a device array where like is None (NumPy inputs)."""
    library = type(like).__module__.split(".")[0] if like is not None else None
    if library == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if library == "cupy" and dtype != "bfloat16":
        import cupy
        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype=dtype)
    return cuda.device_array(shape, dtype=storage(dtype) if dtype == "bfloat16" else dtype)


def _permuted(x, perm):
    """Numba device array x with its modes permuted, a view (Numba's own transpose takes 2-D arrays only)."""
    if perm == (0, 1, 2, 3):
        return x
    if in_simulator():
        return x.transpose(perm)
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    return DeviceNDArray(tuple(x.shape[i] for i in perm), tuple(x.strides[i] for i in perm), x.dtype,
                         gpu_data=x.gpu_data)


# ---- the kernels ------------------------------------------------------------------------------------------
_FA2 = {}


def fa2_kernel(D, dtype, causal, scale):
    """fa2_mma as attention() builds it for this configuration and the current GPU (or profile), built once."""
    from ..attention import fa2_mma
    arch = fa2_mma.default_arch()
    if in_simulator():
        options = SIMULATOR_TILES
    elif (arch, D) in FA2_TILES_AT:
        options = dict(fa2_mma.FA2_TILES[D], longest_first=causal)
    else:
        options = {}
    key = (D, dtype, causal, scale, arch, in_simulator())
    if key not in _FA2:
        _FA2[key] = fa2_mma.make(D=D, dtype=dtype, causal=causal, scale=scale, arch=arch, **options)
    return _FA2[key]


class _Typed:
    """A device array of 16-bit bits that says its element type (what fa3_wgmma.prepare reads: shape, dtype,
    __cuda_array_interface__)."""

    def __init__(self, bits, dtype):
        self.shape, self.dtype = tuple(bits.shape), dtype
        self.__cuda_array_interface__ = bits.__cuda_array_interface__


def _hopper_call(views, o_bits, lse, dtype, causal, scale, layout, stream):
    """fa3_wgmma's launch on these arrays, prepared (its tensor maps encoded once): a zero-argument callable."""
    from ..attention import fa3_wgmma
    q, k, v, o = (_Typed(x, dtype) for x in views + [o_bits])
    go = fa3_wgmma.prepare(q, k, v, o, lse, bool(causal), scale, layout, **HOPPER_BUILD[q.shape[-1]])
    if not stream:
        return go

    def on_stream():             # the kernel runs on the default stream: wait for `stream` before, the kernel after
        stream.synchronize()
        go()
        cuda.default_stream().synchronize()
    return on_stream


# ---- the prepared launches --------------------------------------------------------------------------------
_PREPARED = {}     # (what q, k, v, out, lse, the options and the stream are) -> the launch of that call


def _call_key(q, k, v, out, lse, causal, scale, layout):
    """The key of a call that can be replayed (device q, k, v, out and lse, of one stream), or None."""
    from .matmul import _identity
    if out is None or lse is None:
        return None
    arrays = (q, k, v, out, lse)
    ids = tuple(_identity(x) for x in arrays)
    if None in ids:
        return None
    streams = {stream_of(x) for x in arrays}
    if len(streams) != 1:                 # arrays of several streams: attention synchronizes them each time
        return None
    builds = tuple((D, tuple(sorted(b.items()))) for D, b in sorted(HOPPER_BUILD.items()))
    return ids + (bool(causal), scale, layout, streams.pop(), builds)


def _remember(key, run):
    if key is not None:
        if len(_PREPARED) > 64:
            _PREPARED.clear()
        _PREPARED[key] = run
