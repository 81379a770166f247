"""matmul(A, B, out=None, kernel="auto"): C = A @ B on the GPU (or in the simulator) with the ladder's
best kernels.

  * f32 inputs -> SIMT fp32 (simt_unrolled); f16 / bf16 inputs -> f32 through tensor cores
    (tc_sm80_large on sm_80+, tc_sm75_large on a T4; bf16 on sm_75 runs the SIMT kernel on exact f32
    copies). kernel="tc_sm80" / "tc_sm75" / "simt_warptile" pick the earlier, smaller rungs.
  * Any M, N, K: shapes that are not multiples of the CTA tile are padded (zeros) into device copies,
    and the result is cropped. Row- or column-major A and B: the tensor-core kernels read either in
    place (ldmatrix or ldmatrix.trans); the SIMT kernel and odd strides get a row-major device copy.
  * NumPy arrays are copied to the device and the result comes back as NumPy; device arrays (Numba,
    CuPy, PyTorch: anything with __cuda_array_interface__) are used in place and a Numba device array
    is returned (or `out`, when given). The work is queued on the stream the device arrays name (PyTorch's
    or CuPy's current stream), in order with the caller's own work and without making the host wait.
  * A call costs the host time besides the GPU's: on the H100 machine 0.1-0.2 ms from Numba device
    arrays (Numba's launch alone is 0.05-0.1 ms) and 0.25-0.45 ms from PyTorch tensors (each is converted
    to a Numba array first; benchmarks/gemm/launch_cost.py). To call matmul in a loop on the same PyTorch or CuPy arrays,
    convert them once with numba.cuda.as_cuda_array and pass those.
"""

import numpy as np
from numba import cuda

from ..capability import CapabilityError, require
from ..runtime import device_info, in_simulator
from . import simt_unrolled, simt_warptile, tc_sm75, tc_sm75_large, tc_sm80, tc_sm80_large

KERNELS = ("auto", "simt", "tc_sm75", "tc_sm80", "simt_warptile", "tc_sm75_large", "tc_sm80_large")
SM80_PATH, SM75_PATH = ("tc_sm80", "tc_sm80_large"), ("tc_sm75", "tc_sm75_large")
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
    on_device = _is_device_array(x)
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
            return "tc_sm80_large"
        if dtype == "bf16":
            return "simt"          # sm_75 has no bf16 mma: bf16 -> f32 is exact
        require("mma.m16n8k8.f16", cc)
        return "tc_sm75_large"
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


def _tc_kernel(which, dtype, a_kmajor, b_kmajor):
    key = (which, dtype, a_kmajor, b_kmajor, in_simulator())
    if key not in _CACHE:
        small = dict(BM=64, BN=64, WARPS_M=2, WARPS_N=2) if in_simulator() else {}
        if which == "tc_sm80":
            _CACHE[key] = tc_sm80.make_kernel(a_kmajor=a_kmajor, b_kmajor=b_kmajor, dtype=dtype, **small)
        elif which == "tc_sm80_large":
            cfg = dict(tc_sm80_large.BEST, **small)
            _CACHE[key] = tc_sm80_large.make_kernel(a_kmajor=a_kmajor, b_kmajor=b_kmajor, dtype=dtype, **cfg)
        elif which == "tc_sm75_large":
            cfg = dict(tc_sm75_large.BEST, **small)
            _CACHE[key] = tc_sm75_large.make_kernel(a_kmajor=a_kmajor, b_kmajor=b_kmajor, **cfg)
        else:
            _CACHE[key] = tc_sm75.make_kernel(a_kmajor=a_kmajor, b_kmajor=b_kmajor, **small)
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
    handles = {_stream_of(x) for x in arrays if x is not None and _is_device_array(x)}
    handles.discard(0)
    if len(handles) == 1:
        return cuda.external_stream(handles.pop())
    for h in handles:
        cuda.external_stream(h).synchronize()
    return 0


def _on_device(a):
    return hasattr(a, "copy_to_host")       # a Numba device array (or the simulator's stand-in)


def _is_device_array(x):
    """Is x in GPU memory (a Numba, CuPy or PyTorch CUDA array)? The cheap tests first: PyTorch builds its
    __cuda_array_interface__ anew on every access."""
    return _on_device(x) or getattr(x, "is_cuda", False) is True or hasattr(x, "__cuda_array_interface__")


def device_view(x):
    """x as a Numba device array, without a copy and without making the host wait (see _stream): x itself
    if it is one already. Each conversion of a CuPy or PyTorch array costs the host tens of microseconds,
    so matmul makes one per operand and passes the result on."""
    return x if _on_device(x) else cuda.as_cuda_array(x, sync=False)


def _dev(a):
    return a if _on_device(a) else cuda.to_device(np.ascontiguousarray(a))


def _staged(a, rows, cols, dtype, stream=0):
    """A C-contiguous device copy of `a` padded with zeros to (rows, cols)."""
    out = cuda.device_array((rows, cols), dtype)
    _launch2(_copy_pad, (rows, cols), _dev(a), out, stream=stream)
    return out


def _fits_in_place(a, rows, cols, elem):
    """Can a kernel read this (rows, cols) row-major operand in place: C-contiguous, exact shape,
    16-byte aligned rows?"""
    if not (_on_device(a) and a.is_c_contiguous() and a.shape == (rows, cols) and (cols * elem) % 16 == 0):
        return False
    ptr = getattr(a, "device_ctypes_pointer", None)
    return ptr is None or (ptr.value or 0) % 16 == 0


def transposed(x):
    """x.T without a copy: for a device array a view with the shape and strides swapped (numba's
    DeviceNDArray.T copies through a transpose kernel, compiled on first use: 100 ms at 4096^2)."""
    if isinstance(x, np.ndarray) or in_simulator():
        return x.T
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    x = device_view(x)
    return DeviceNDArray(x.shape[::-1], x.strides[::-1], x.dtype, gpu_data=x.gpu_data)


def _ceil(x, m):
    return (x + m - 1) // m * m


def matmul(A, B, out=None, kernel="auto"):
    """C = A @ B: A (M, K), B (K, N) -> C (M, N) float32. See the module docstring."""
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
        o = device_view(out) if not isinstance(out, np.ndarray) else out
        if o.shape != (M, N) or np.dtype(o.dtype) != np.float32:
            raise ValueError("matmul: out must be a float32 (%d, %d) array, got %s %s" % (M, N, o.dtype, o.shape))
    st = _stream(A, B, out)
    info = device_info()
    which = _choose(kernel, ta, None if info.simulator else info.cc)
    # Registration of the Hopper kernel (issue 11; kernels/hopper_gemm.py, RESULTS_HOPPER.md): on sm_90,
    # "auto" with f16 inputs first asks matmul_hopper, which runs the persistent TMA + wgmma kernel when the
    # shapes and majorness fit it (A row-major, B column-major, M % 128, N % 256, K % 64) and returns None
    # otherwise; the ladder's kernels below then run as before.
    if kernel == "auto" and ta == "f16" and not info.simulator and info.cc == (9, 0):
        from ..hopper_gemm import matmul_hopper
        C = matmul_hopper(a, b, o, st)
        if C is not None:
            return out if out is not None else (C if (dev_a or dev_b) else C.copy_to_host())
    if which in ("simt", "simt_warptile") and ta == "bf16":      # exact upcast, then the fp32 kernel
        a32, b32 = cuda.device_array((M, K), np.float32), cuda.device_array((K, N), np.float32)
        _launch2(_bf16_to_f32, (M, K), _dev(a), a32, stream=st)
        _launch2(_bf16_to_f32, (K, N), _dev(b), b32, stream=st)
        a, b, ta = a32, b32, "f32"
    if which in ("simt", "simt_warptile"):
        T = simt_unrolled if which == "simt" else simt_warptile
        kern = T.gemm_simt_unrolled if which == "simt" else T.gemm_simt_warptile
        Mp, Np, Kp = _ceil(M, T.BM), _ceil(N, T.BN), _ceil(K, T.BK)
        ag = a if _fits_in_place(a, Mp, Kp, 4) else _staged(a, Mp, Kp, np.float32, st)
        bg = b if _fits_in_place(b, Kp, Np, 4) else _staged(b, Kp, Np, np.float32, st)
        run = lambda C: kern[T.grid(Mp, Np) + (st,)](ag, bg, C)  # noqa: E731
    else:
        # majorness: a column-major operand is its transpose, row-major, read with ldmatrix.trans
        a_kmajor = not (a.strides[0] == 2 and a.strides[1] != 2)
        b_kmajor = b.strides[0] == 2 and b.strides[1] != 2
        k = _tc_kernel(which, ta, a_kmajor, b_kmajor)
        c = k.config
        Mp, Np, Kp = _ceil(M, c["BM"]), _ceil(N, c["BN"]), _ceil(K, c["BK"])
        at = a if a_kmajor else transposed(a)
        bt = transposed(b) if b_kmajor else b
        ash = (Mp, Kp) if a_kmajor else (Kp, Mp)
        bsh = (Np, Kp) if b_kmajor else (Kp, Np)
        ag = at if _fits_in_place(at, *ash, 2) else _staged(at, *ash, np.uint16, st)
        bg = bt if _fits_in_place(bt, *bsh, 2) else _staged(bt, *bsh, np.uint16, st)
        if which == "tc_sm80_large":
            run = lambda C: tc_sm80_large.launch(k, ag, bg, C, st)  # noqa: E731
        else:
            run = lambda C: k[(Mp // c["BM"]) * (Np // c["BN"]), c["threads"], st](ag, bg, C)  # noqa: E731
    if out is not None and not isinstance(out, np.ndarray) and _fits_in_place(o, Mp, Np, 4):
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
