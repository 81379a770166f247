"""matmul(A, B, out=None, kernel="auto"): C = A @ B on the GPU (or in the simulator) with the book's own
kernels.

What it is for: a float32 product of f16 / bf16 (or f32) matrices from NumPy, PyTorch, CuPy or Numba
arrays, at cuBLAS's speed on an H100 for sizes from about 2048 up (measured, every majorness: 0.92-1.05 of
cuBLAS at 2048^3, 4096^3, 8192^3 and 4096x14336x4096; 0.84 or more at 4000x3000x2500;
benchmarks/gemm/RESULTS.md). It has no batch mode and no epilogue. Elsewhere it is
the book's kernels, correct but slower: 0.63-0.72 of cuBLAS at 1024^3 on the H100, and the sm_80 kernel,
timed on the H100, 0.52-0.60.

  * f32 inputs -> SIMT fp32 (simt_unrolled); f16 / bf16 inputs -> f32 through tensor cores: on an H100
    (sm_90), chapter 8's persistent TMA + wgmma kernel (kernels/hopper), else tc_sm80_prefetch on sm_80+,
    tc_sm75 on a T4 (bf16 on sm_75 runs the SIMT kernel on exact f32 copies). kernel="tc_sm80" / "tc_sm75" /
    "simt_warptile" pick a rung by name. The sm_80+ path (tc_sm80_prefetch.BEST: 128x128x32, 4 stages) has
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
  * NumPy's semantics where they matter: an `out` that overlaps A or B gets the product as if computed into a
    temporary (it is); an empty K gives zeros; f16 inputs to the SIMT kernel are converted exactly to f32.
  * What a call costs the host besides the GPU's work (benchmarks/gemm/launch_cost.py, matmul_replay.py):
    the first call on a set of arrays converts them, picks the kernel, encodes its tensor maps and prepares
    the launch (the first call of a kernel in a process also compiles it: seconds). On an H100 a later call
    on the same device A, B, `out` and stream is that launch again: 16-18 us of host time from PyTorch
    tensors, against 42 us for torch.mm.
"""

import warnings

import numpy as np
from numba import cuda

from cutelite import Major
from cutelite.numeric import BFloat16, Float16, Float32, numeric

from ..capability import CapabilityError, require
from ..arrays import device_view, is_device_array, on_device, operand_major, transposed
from ..numeric import storage
from ..runtime import device_info, in_simulator
from . import simt_unrolled, simt_warptile, step

KERNELS = ("auto", "simt", "tc_sm75", "tc_sm80", "simt_warptile")
SM80_PATH, SM75_PATH = ("tc_sm80",), ("tc_sm75",)
STEPS = {"tc_sm80": "tc sm80 + k-block prefetch", "tc_sm75": "tc sm75 128x128x32"}   # the ladder's steps it runs
_CACHE = {}


INPUTS = {t.name: t for t in (Float32, Float16, BFloat16)}    # float32: SIMT; 16-bit: tensor cores, f32 result


def _as_operand(x, name):
    """(array the kernels can read: NumPy or Numba device, in kernels.numeric.storage of its element type; the
    element type, a cutelite.numeric type of INPUTS; on_device)."""
    try:
        import torch
        if isinstance(x, torch.Tensor) and x.dtype == torch.bfloat16:
            x = x.view(torch.int16)
            return cuda.as_cuda_array(x, sync=False).view(storage(BFloat16)), BFloat16, True
    except ImportError:
        pass
    on_device = is_device_array(x)
    if on_device:
        a = device_view(x)
    else:
        a = np.asarray(x)
    if a.ndim != 2:
        raise ValueError("matmul: %s must be a matrix (2 dimensions), got shape %s" % (name, a.shape))
    t = INPUTS.get(getattr(a.dtype, "name", str(a.dtype)))
    if t is None:
        raise TypeError("matmul: %s has dtype %s; supported: float32 (SIMT), float16 and bfloat16 (tensor "
                        "cores, f32 result)" % (name, a.dtype))
    return (a if a.dtype == storage(t) else a.view(storage(t))), t, on_device


def _choose(kernel, dtype, cc):
    """Which kernel runs a product of `dtype` (any name of cutelite.numeric: "bf16", "bfloat16") on a GPU of
    compute capability cc."""
    dtype = numeric(dtype, "matmul")
    if kernel not in KERNELS:
        raise ValueError("matmul: kernel must be one of %s, got %r" % (", ".join(KERNELS), kernel))
    if kernel == "auto":
        if dtype is Float32:
            return "simt"
        if cc is None or cc >= (8, 0):
            return "tc_sm80"
        if dtype is BFloat16:
            return "simt"          # sm_75 has no bf16 mma: bf16 -> f32 is exact
        require("mma.m16n8k8.f16", cc)
        return "tc_sm75"
    if kernel in ("simt", "simt_warptile"):
        return kernel
    if dtype is Float32:
        raise TypeError("matmul: kernel %r takes float16/bfloat16 inputs, got float32 (use 'simt')" % kernel)
    if kernel in SM75_PATH and dtype is BFloat16:
        raise CapabilityError("matmul: tc_sm75 (mma.m16n8k8 on sm_75) has no bf16 inputs; use 'tc_sm80' or 'simt'")
    if cc is not None:
        for need in (("mma.m16n8k16.f16", "cp.async") if kernel in SM80_PATH else ("mma.m16n8k8.f16", "ldmatrix")):
            require(need, cc)
    return kernel


def _tc_kernel(which, dtype, majors, edges):
    """The step's kernel for these operands (its configuration; 64x64 CTA tiles in the simulator), built once."""
    key = (which, dtype, majors, edges, in_simulator())
    if key not in _CACHE:
        s = step(STEPS[which])
        module, cfg = s.module, dict(s.config, **(dict(BM=64, BN=64) if in_simulator() else {}))
        _CACHE[key] = module.make(dtype=dtype.name, majors=majors, edges=edges, **cfg)
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


def _tma_view(x, stream, fresh=True, copy=False):
    """(x as the Hopper kernel's tensor maps can read it, the copy that refreshes it or None). x itself where
    it is tma_readable (and copy is False); else a buffer whose rows (along x's unit stride, or along K) are
    padded to 128 bytes, viewed at x's shape. fresh=False: a buffer to write into (C), no copy."""
    from ..arrays import transposed
    from ..hopper import operand_major, tma_readable
    if tma_readable(x) and not copy:
        return x, None
    rows, cols = x.shape
    per_128_bytes = 128 // x.dtype.itemsize      # 128-byte rows ran faster than 16-byte ones (RESULTS.md)
    if operand_major(x) == "MN":                 # keep x's order: a column-major buffer
        buf = cuda.device_array((cols, _ceil(rows, per_128_bytes)), x.dtype)
        src, dst = transposed(x), buf[:, :rows]  # copied along the contiguous mode
        view = transposed(dst)
    else:
        buf = cuda.device_array((rows, _ceil(cols, per_128_bytes)), x.dtype)
        src, dst = x, buf[:, :cols]
        view = dst
    if not fresh:
        return view, None
    src, dst = _widened(src), _widened(dst)
    return view, lambda: _launch2(_copy_crop, dst.shape, src, dst, stream=stream)


def _widened(x):
    """The row-major device array x seen as 8- or 4-byte words where its rows, pitch and address allow (a
    copy then moves 4x or 2x fewer elements); else x."""
    if in_simulator():
        return x
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    rows, cols = x.shape
    row_bytes, pitch = cols * x.dtype.itemsize, x.strides[0]
    address = x.__cuda_array_interface__["data"][0]
    for word in (np.uint64, np.uint32):
        size = np.dtype(word).itemsize
        if x.strides[1] == x.dtype.itemsize and row_bytes % size == 0 and pitch % size == 0 and address % size == 0:
            return DeviceNDArray((rows, row_bytes // size), (pitch, size), np.dtype(word), gpu_data=x.gpu_data)
    return x


def _hopper_call(a, b, o, stream, dtype):
    """A zero-argument callable that computes a @ b (16-bit device arrays) with the Hopper kernel and returns
    C: `o` (a float32 (M, N) device array) or, with o None, a new array; None where the kernel does not
    apply. An operand the tensor maps cannot read in place (_tma_view) is copied on every call; a C they
    cannot write, or one that overlaps A or B, is a temporary copied into o (NumPy's rule for overlap)."""
    from ..arrays import transposed
    from ..hopper import matmul_hopper, row_pitch
    M, N = a.shape[0], b.shape[1]
    (av, copy_a), (btv, copy_b) = _tma_view(a, stream), _tma_view(transposed(b), stream)
    misaligned = row_pitch(av) % 128 and row_pitch(btv) % 128
    if copy_a is None and copy_b is None and misaligned and M * N * a.shape[1] >= 2**32:
        # both read in place from rows that are not 128-byte multiples: the kernel ran 30 % slower at
        # 4000x3000x2500 (benchmarks/gemm/odd_shape_probe.py), and copying the smaller operand cost less than
        # that (0.66 -> 0.84 of cuBLAS); small products, bound by latency, skip the copy's extra launch
        if a.size <= b.size:
            av, copy_a = _tma_view(a, stream, copy=True)
        else:
            btv, copy_b = _tma_view(transposed(b), stream, copy=True)
    target = o if o is not None and not _overlaps(o, a, b) else cuda.device_array((M, N), np.float32)
    cv, _ = _tma_view(target, stream, fresh=False)
    run = matmul_hopper(av, transposed(btv), cv, stream, dtype.name)
    if run is None:
        return None
    copies = [c for c in (copy_a, copy_b) if c is not None]
    if cv is not target:            # C's rows are not 16-byte multiples: computed padded, then copied
        copies_out = [lambda: _launch2(_copy_crop, (M, N), cv, target, stream=stream)]
    else:
        copies_out = []
    if target is not o and o is not None:
        copies_out.append(lambda: _launch2(_copy_crop, (M, N), target, o, stream=stream))

    def call():
        for copy in copies:
            copy()
        run()
        for copy in copies_out:
            copy()
        return target if o is None else o
    call.arrays = (av, btv, cv, target)     # the buffers live as long as the launch that reads them
    return call


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
    with warnings.catch_warnings():  # small grids are small matrices here, not a mistake to warn about
        warnings.filterwarnings("ignore", message=".*GPU under-utilization")
        return _matmul(A, B, out, kernel)


def _matmul(A, B, out, kernel):
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
    which = _choose(kernel, ta, info.cc)
    if kernel == "auto" and ta is not Float32 and not info.simulator and info.cc == (9, 0):
        # the persistent TMA + wgmma kernel of chapter 8 (kernels/hopper, RESULTS_HOPPER.md)
        device_out = out is not None and not isinstance(out, np.ndarray)
        call = _hopper_call(_dev(a), _dev(b), o if device_out else None, st, ta)
        if call is not None:
            C = call()
            if device_out:
                _remember(A, B, out, kernel, call)
                return out
            if out is None and (dev_a or dev_b):
                return C
            if st:
                st.synchronize()
            if out is None:
                return C.copy_to_host()
            out[...] = C.copy_to_host()
            return out
    if which in ("simt", "simt_warptile") and ta is not Float32:       # exact upcast, then the fp32 kernel
        a32, b32 = cuda.device_array((M, K), np.float32), cuda.device_array((K, N), np.float32)
        up = _bf16_to_f32 if ta is BFloat16 else _f16_to_f32
        view = (lambda x: x) if ta is BFloat16 else (lambda x: x.view(np.float16))
        _launch2(up, (M, K), view(_dev(a)), a32, stream=st)
        _launch2(up, (K, N), view(_dev(b)), b32, stream=st)
        a, b, ta = a32, b32, Float32
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
        majors = (operand_major(a) or Major.K, operand_major(transposed(b)) or Major.K)
        if _readable(a, 1 if majors[0] == Major.K else 0) and _readable(b, 0 if majors[1] == Major.K else 1):
            k = _tc_kernel(which, ta, majors, False)
            if M % k.tile[0] or N % k.tile[1] or K % k.tile[2]:
                k = _tc_kernel(which, ta, majors, True)
            Mp, Np = M, _ceil(N, 2)          # C's floats are stored in pairs
        else:                                # padded row-major copies, multiples of the tile
            k = _tc_kernel(which, ta, (Major.K, Major.MN), False)
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
