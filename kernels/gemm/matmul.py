"""matmul(A, B, out=None, kernel="auto"): C = A @ B on the GPU (or in the simulator) with the ladder's
best kernels.

  * f32 inputs -> SIMT fp32 (simt_unrolled); f16 / bf16 inputs -> f32 through tensor cores: on an H100
    (sm_90), chapter 8's persistent TMA + wgmma kernel (kernels/hopper, 0.88-0.91 of cuBLAS at 4096^3 with
    either majorness of B), else tc_sm80_prefetch on sm_80+, tc_sm75 on a T4 (bf16 on sm_75 runs the SIMT
    kernel on exact f32 copies). kernel="tc_sm80" / "tc_sm75" / "simt_warptile" pick a rung by name.
  * Any M, N, K. The tensor-core kernels read A and B in place, row- or column-major (ldmatrix or
    ldmatrix.trans), and predicate the copies at the matrix edges, as long as each operand's contiguous
    rows are 16-byte aligned (a multiple of 8 halves long) and C's rows hold an even number of floats;
    otherwise, and for the SIMT kernel, the operands are padded (zeros) into device copies and the result
    is cropped.
  * NumPy arrays are copied to the device and the result comes back as NumPy; device arrays (Numba,
    CuPy, PyTorch: anything with __cuda_array_interface__) are used in place and a Numba device array
    is returned (or `out`, when given). The work is queued on the stream the device arrays name (PyTorch's
    or CuPy's current stream), in order with the caller's own work and without making the host wait.
  * NumPy's semantics where they matter: an `out` that overlaps A or B gets the product as if computed into a
    temporary (it is); an empty K gives zeros; f16 inputs to the SIMT kernel are converted exactly to f32.
  * A call costs the host time besides the GPU's (benchmarks/gemm/launch_cost.py): the first call on a
    set of arrays converts them, picks and prepares the kernel. On an H100, a call on the same device
    arrays, `out` and stream as an earlier Hopper-path call is that call's launch again (its arguments
    converted once, one driver call).
"""

import numpy as np
from numba import cuda

from ..capability import CapabilityError, require
from ..arrays import device_view, is_device_array, on_device
from ..runtime import device_info, in_simulator
from . import simt_unrolled, simt_warptile, tc_sm75, tc_sm80_prefetch

KERNELS = ("auto", "simt", "tc_sm75", "tc_sm80", "simt_warptile")
SM80_PATH, SM75_PATH = ("tc_sm80",), ("tc_sm75",)
RUNGS = {"tc_sm80": tc_sm80_prefetch, "tc_sm75": tc_sm75}
_CACHE = {}


def _bf16_dtype(x):
    return getattr(getattr(x, "dtype", None), "name", str(getattr(x, "dtype", ""))).endswith("bfloat16")


def _as_operand(x, name):
    """(array the kernels can read: NumPy or Numba device, dtype tag 'f32'|'f16'|'bf16', on_device)."""
    try:
        import torch
        if isinstance(x, torch.Tensor) and x.dtype == torch.bfloat16:
            x = x.view(torch.int16)
            return cuda.as_cuda_array(x, sync=False).view(np.uint16), "bf16", True
    except ImportError:
        pass
    on_device = is_device_array(x)
    if on_device:
        a = device_view(x)
    else:
        a = np.asarray(x)
    if a.ndim != 2:
        raise ValueError("matmul: %s must be a matrix (2 dimensions), got shape %s" % (name, a.shape))
    if _bf16_dtype(a):
        return a.view(np.uint16), "bf16", on_device
    tag = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16"}.get(np.dtype(a.dtype))
    if tag is None:
        raise TypeError("matmul: %s has dtype %s; supported: float32 (SIMT), float16 and bfloat16 (tensor "
                        "cores, f32 result)" % (name, a.dtype))
    return (a.view(np.uint16) if tag == "f16" else a), tag, on_device


def _choose(kernel, dtype, cc):
    if kernel not in KERNELS:
        raise ValueError("matmul: kernel must be one of %s, got %r" % (", ".join(KERNELS), kernel))
    if kernel == "auto":
        if dtype == "f32":
            return "simt"
        if cc is None or cc >= (8, 0):
            return "tc_sm80"
        if dtype == "bf16":
            return "simt"          # sm_75 has no bf16 mma: bf16 -> f32 is exact
        require("mma.m16n8k8.f16", cc)
        return "tc_sm75"
    if kernel in ("simt", "simt_warptile"):
        return kernel
    if dtype == "f32":
        raise TypeError("matmul: kernel %r takes float16/bfloat16 inputs, got float32 (use 'simt')" % kernel)
    if kernel in SM75_PATH and dtype == "bf16":
        raise CapabilityError("matmul: tc_sm75 (mma.m16n8k8 on sm_75) has no bf16 inputs; use 'tc_sm80' or 'simt'")
    if cc is not None:
        for need in (("mma.m16n8k16.f16", "cp.async") if kernel in SM80_PATH else ("mma.m16n8k8.f16", "ldmatrix")):
            require(need, cc)
    return kernel


def _tc_kernel(which, dtype, a_kmajor, b_kmajor, edges):
    """The rung's kernel for these operands (BEST configuration; 64x64 CTA tiles in the simulator), built once."""
    key = (which, dtype, a_kmajor, b_kmajor, edges, in_simulator())
    if key not in _CACHE:
        module = RUNGS[which]
        cfg = dict(module.BEST, **(dict(BM=64, BN=64) if in_simulator() else {}))
        _CACHE[key] = module.make(dtype="bfloat16" if dtype == "bf16" else "float16", a_kmajor=a_kmajor,
                                  b_kmajor=b_kmajor, edges=edges, **cfg)
    return _CACHE[key]


@cuda.jit
def _copy_pad(src, dst):
    """dst[i, j] = src[i, j] inside src, 0 outside (any strides; f32 or 16-bit bits)."""
    j, i = cuda.grid(2)          # x along a row: a warp touches consecutive elements
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = src[i, j] if i < src.shape[0] and j < src.shape[1] else 0


@cuda.jit
def _copy_crop(src, dst):
    j, i = cuda.grid(2)          # x along a row: a warp touches consecutive elements
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = src[i, j]


@cuda.jit
def _bf16_to_f32(src, dst):
    j, i = cuda.grid(2)          # x along a row: a warp touches consecutive elements
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = np.uint32(src[i, j]) << np.uint32(16)


@cuda.jit
def _f16_to_f32(src, dst):
    j, i = cuda.grid(2)          # x along a row: a warp touches consecutive elements
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = np.float32(src[i, j])


@cuda.jit
def _fill_zero(dst):
    j, i = cuda.grid(2)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = 0


def _zeros(M, N, out, o, on_device_result):
    """The product when M, N or K is 0: zeros, in `out` if given."""
    if out is None:
        C = np.zeros((M, N), np.float32)
        return cuda.to_device(C) if on_device_result and M * N else C
    if isinstance(out, np.ndarray):
        out[...] = 0
    elif M * N:
        _launch2(_fill_zero, (M, N), o)
    return out


def _span(x):
    """[first byte, last byte + 1) that a device array's elements occupy."""
    ptr = x.__cuda_array_interface__["data"][0] if hasattr(x, "__cuda_array_interface__") else id(x)
    extent = sum((n - 1) * abs(s) for n, s in zip(x.shape, x.strides)) + x.dtype.itemsize
    return ptr, ptr + extent


def _overlaps(x, *others):
    """Whether device array x shares memory with any of `others` (NumPy's rule: then compute elsewhere)."""
    if isinstance(x, np.ndarray):
        return any(isinstance(y, np.ndarray) and np.shares_memory(x, y) for y in others)
    lo, hi = _span(x)
    return any(on_device(y) and _span(y)[0] < hi and lo < _span(y)[1] for y in others)


def _launch2(kernel, shape, *args, stream=0):
    """kernel over a (rows, cols) index space, x along the columns (coalesced for row-major arrays)."""
    grid = ((shape[1] + 31) // 32, (shape[0] + 7) // 8)
    kernel[grid, (32, 8), stream](*args)


def _stream_of(x):
    """The handle of the stream that x's framework queues work on now: PyTorch's current stream for a CUDA
    tensor (PyTorch's __cuda_array_interface__ names none), else the interface's "stream" (CuPy's current
    stream; Numba's array's own), else 0. 1, the legacy default stream's other name, counts as 0."""
    if type(x).__module__.startswith("torch"):
        import torch
        h = torch.cuda.current_stream(x.device).cuda_stream
    else:
        h = (getattr(x, "__cuda_array_interface__", None) or {}).get("stream") or 0
    return 0 if h == 1 else int(h)


def _stream(*arrays):
    """The stream matmul runs on: the one stream its device operands' frameworks work on (_stream_of), so
    that the host never waits and the work stays in that stream's order. Operands from different
    streams: those are synchronized first and the default stream is used."""
    if in_simulator():
        return 0
    handles = {_stream_of(x) for x in arrays if x is not None and is_device_array(x)}
    handles.discard(0)
    if len(handles) == 1:
        return cuda.external_stream(handles.pop())
    for h in handles:
        cuda.external_stream(h).synchronize()
    return 0


def _dev(a):
    return a if on_device(a) else cuda.to_device(np.ascontiguousarray(a))


def _staged(a, rows, cols, dtype, stream=0):
    """A C-contiguous device copy of `a` padded with zeros to (rows, cols)."""
    out = cuda.device_array((rows, cols), dtype)
    _launch2(_copy_pad, (rows, cols), _dev(a), out, stream=stream)
    return out


def _fits_in_place(a, rows, cols, elem):
    """Can a kernel read this (rows, cols) row-major operand in place: C-contiguous, exact shape,
    16-byte aligned rows?"""
    if not (on_device(a) and a.is_c_contiguous() and a.shape == (rows, cols) and (cols * elem) % 16 == 0):
        return False
    ptr = getattr(a, "device_ctypes_pointer", None)
    return ptr is None or (ptr.value or 0) % 16 == 0


def _readable(x, unit, elem=2):
    """Can a tensor-core kernel read this operand in place: a device array whose mode `unit` has unit stride
    and a multiple of 16 bytes of elements, the other stride a multiple of 16 bytes, 16-byte aligned?"""
    if not on_device(x) or x.strides[unit] != elem or (x.shape[unit] * elem) % 16:
        return False
    if x.shape[1 - unit] > 1 and x.strides[1 - unit] % 16:
        return False
    ptr = getattr(x, "device_ctypes_pointer", None)
    return ptr is None or (ptr.value or 0) % 16 == 0


def _ceil(x, m):
    return (x + m - 1) // m * m


_PREPARED = {}     # (what A, B, out and the stream are) -> the launch that computed that call


def _identity(x):
    """What a prepared call depends on for a device array: address, shape, strides, dtype (None otherwise)."""
    if type(x).__module__.startswith("torch"):
        return (x.data_ptr(), tuple(x.shape), tuple(x.stride()), str(x.dtype)) if x.is_cuda else None
    cai = getattr(x, "__cuda_array_interface__", None)
    return None if cai is None else (cai["data"][0], cai["shape"], cai["strides"], cai["typestr"])


def _call_key(A, B, out, kernel):
    """The key of a call that can be prepared (device A, B and out, queued on one stream), or None."""
    if out is None:
        return None
    ids = (_identity(A), _identity(B), _identity(out))
    if None in ids:
        return None
    if all(type(x).__module__.startswith("torch") for x in (A, B, out)) and A.device == B.device == out.device:
        stream = _stream_of(A)                # one device: one current stream
    else:
        streams = {_stream_of(x) for x in (A, B, out)}
        if len(streams) != 1:                 # operands of several streams: matmul synchronizes them each time
            return None
        stream = streams.pop()
    return ids + (kernel, stream)


def _remember(A, B, out, kernel, run):
    key = _call_key(A, B, out, kernel)
    if key is not None:
        if len(_PREPARED) > 64:
            _PREPARED.clear()
        _PREPARED[key] = run


def matmul(A, B, out=None, kernel="auto"):
    """C = A @ B: A (M, K), B (K, N) -> C (M, N) float32. See the module docstring."""
    key = _call_key(A, B, out, kernel) if _PREPARED else None
    run = _PREPARED.get(key) if key is not None else None
    if run is not None:              # the same arrays and stream as a call before: its launch again
        run()
        return out
    a, ta, dev_a = _as_operand(A, "A")
    b, tb, dev_b = _as_operand(B, "B")
    if ta != tb:
        raise TypeError("matmul: A and B must have the same dtype, got %s and %s" % (ta, tb))
    (M, K), (K2, N) = a.shape, b.shape
    if K != K2:
        raise ValueError("matmul: A is %dx%d and B is %dx%d: A's columns (%d) must equal B's rows (%d)"
                         % (M, K, K2, N, K, K2))
    o = None
    if out is not None:
        if not (isinstance(out, np.ndarray) or is_device_array(out)):
            raise TypeError("matmul: out must be a float32 (%d, %d) NumPy or device array, got %r"
                            % (M, N, type(out).__name__))
        o = device_view(out) if not isinstance(out, np.ndarray) else out
        if o.shape != (M, N) or np.dtype(o.dtype) != np.float32:
            raise ValueError("matmul: out must be a float32 (%d, %d) array, got %s %s" % (M, N, o.dtype, o.shape))
    if 0 in (M, N, K):                       # an empty product: C is all zeros (or has no elements)
        return _zeros(M, N, out, o, dev_a or dev_b)
    st = _stream(A, B, out)
    info = device_info()
    which = _choose(kernel, ta, None if info.simulator else info.cc)
    # Registration of the Hopper kernel (kernels/hopper, RESULTS_HOPPER.md): on sm_90, "auto" with f16 or
    # bf16 inputs first asks matmul_hopper, which runs the persistent TMA + wgmma kernel when the majorness
    # fits it (A row-major, B column-major) with 16-byte rows (K % 8, N % 4), and returns None otherwise;
    # the ladder's kernels below then run as before.
    if kernel == "auto" and ta in ("f16", "bf16") and not info.simulator and info.cc == (9, 0):
        from ..hopper import matmul_hopper
        direct = out is not None and not isinstance(out, np.ndarray) and not _overlaps(o, a, b)
        C = o if direct else cuda.device_array((M, N), np.float32)
        run = matmul_hopper(_dev(a), _dev(b), C, st, "bfloat16" if ta == "bf16" else "float16")
        if run is not None:
            run()
            if direct:
                _remember(A, B, out, kernel, run)
                return out
            if out is None:
                return C if (dev_a or dev_b) else C.copy_to_host()
            if isinstance(out, np.ndarray):
                if st:
                    st.synchronize()
                out[...] = C.copy_to_host()
            else:                               # out overlaps A or B: the product went to a temporary
                _launch2(_copy_crop, (M, N), C, o, stream=st)
            return out
    if which in ("simt", "simt_warptile") and ta != "f32":       # exact upcast, then the fp32 kernel
        a32, b32 = cuda.device_array((M, K), np.float32), cuda.device_array((K, N), np.float32)
        up = _bf16_to_f32 if ta == "bf16" else _f16_to_f32
        view = (lambda x: x) if ta == "bf16" else (lambda x: x.view(np.float16))
        _launch2(up, (M, K), view(_dev(a)), a32, stream=st)
        _launch2(up, (K, N), view(_dev(b)), b32, stream=st)
        a, b, ta = a32, b32, "f32"
    if which in ("simt", "simt_warptile"):
        T = simt_unrolled if which == "simt" else simt_warptile
        kern = T.gemm_simt_unrolled if which == "simt" else T.gemm_simt_warptile
        Mp, Np, Kp = _ceil(M, T.BM), _ceil(N, T.BN), _ceil(K, T.BK)
        ag = a if _fits_in_place(a, Mp, Kp, 4) else _staged(a, Mp, Kp, np.float32, st)
        bg = b if _fits_in_place(b, Kp, Np, 4) else _staged(b, Kp, Np, np.float32, st)
        run = lambda C: kern[T.grid(Mp, Np) + (st,)](ag, bg, C)  # noqa: E731
    else:
        # majorness: an operand with unit stride along K is K-major (read by ldmatrix), else M/N-major
        # (ldmatrix.trans); the kernels read both in place, and predicate the edges (edges=True)
        a_kmajor = not (a.strides[0] == 2 and a.strides[1] != 2)
        b_kmajor = b.strides[0] == 2 and b.strides[1] != 2
        if _readable(a, 1 if a_kmajor else 0) and _readable(b, 0 if b_kmajor else 1):
            k = _tc_kernel(which, ta, a_kmajor, b_kmajor, False)
            if M % k.tile[0] or N % k.tile[1] or K % k.tile[2]:
                k = _tc_kernel(which, ta, a_kmajor, b_kmajor, True)
            Mp, Np = M, _ceil(N, 2)          # C's floats are stored in pairs
        else:                                # padded row-major copies, multiples of the tile
            k = _tc_kernel(which, ta, True, False, False)
            Mp, Np, Kp = _ceil(M, k.tile[0]), _ceil(N, k.tile[1]), _ceil(K, k.tile[2])
            a, b = _staged(a, Mp, Kp, np.uint16, st), _staged(b, Kp, Np, np.uint16, st)
        ag, bg = a, b
        run = lambda C: k.launch(ag, bg, C, stream=st)  # noqa: E731
    if (out is not None and not isinstance(out, np.ndarray) and _fits_in_place(o, Mp, Np, 4)
            and not _overlaps(o, a, b)):          # out may not be read while it is written: a temporary then
        run(o)
        return out
    C = cuda.device_array((Mp, Np), np.float32)
    run(C)
    if (Mp, Np) != (M, N):
        Cc = cuda.device_array((M, N), np.float32)
        _launch2(_copy_crop, (M, N), C, Cc, stream=st)
        C = Cc
    if out is not None:
        if isinstance(out, np.ndarray):
            if st:
                st.synchronize()
            out[...] = C.copy_to_host()
        else:
            _launch2(_copy_crop, (M, N), C, o, stream=st)
        return out
    if st and not (dev_a or dev_b):
        st.synchronize()
    return C if (dev_a or dev_b) else C.copy_to_host()
