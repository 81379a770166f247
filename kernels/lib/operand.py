"""Operand: what a library entry knows of one array argument, read once per call.

A user's matrix comes from NumPy, PyTorch, CuPy or Numba, with either mode contiguous (or neither), at any
address, with its library's current stream. Every question a kernel family asks of it (is its element type
one the kernel computes? can the kernel read its rows in place? does it share memory with another argument?
which stream queues the work?) reads the one description `describe` makes, so each fact about an array is
computed in one place.
"""

from dataclasses import dataclass, replace
from typing import Any, Optional, Tuple

import numpy as np
from numba import cuda

from cutelite import Major
from cutelite.numeric import BFloat16, Float8E4M3FN, Float8E5M2, Numeric, numeric

from ..arrays import device_view, is_device_array, major_of, transposed
from ..numeric import storage
from ..runtime import in_simulator

__all__ = ["Operand", "describe", "shared_stream", "stream_of", "MAX_ALIGN"]

MAX_ALIGN = 256        # the alignment cudaMalloc gives; no check here asks for more
_TORCH_BITS = {"torch.bfloat16": ("int16", BFloat16), "torch.float8_e4m3fn": ("uint8", Float8E4M3FN),
               "torch.float8_e5m2": ("uint8", Float8E5M2)}     # PyTorch's types Numba lacks: a view of their bits


@dataclass(frozen=True)
class Operand:
    """One matrix argument of a library call (made by `describe`).

    name      the argument's name in error messages ("A", "B", "out")
    array     the matrix as the kernels read it: a NumPy or Numba device array of the element type's storage
              (kernels.numeric.storage: 16-bit floats as uint16), no copy made
    library   where it came from: "numpy", "torch", "cupy", "numba", ...
    dtype     its element type, a cutelite.numeric type
    shape     (rows, cols); strides in bytes
    k         which mode the product runs along: 1 for A (M, K), 0 for B (K, N), 1 for C (M, N), whose N stands
              where A's K does (a row-major C is K-major, as the TMA store reads it)
    major     Major.K if unit stride along mode k, Major.MN if along the other, None if neither
    pitch     bytes between consecutive rows of the contiguous mode; None if neither mode is contiguous
    align     the largest power of two (up to MAX_ALIGN) that divides its address, in bytes
    stream    the handle of the stream its library queues work on now (0: the default stream)
    on_device in GPU memory (or the simulator's)
    span      [first byte, last byte + 1) of the memory its elements occupy
    """
    name: str
    array: Any
    library: str
    dtype: Numeric
    shape: Tuple[int, int]
    strides: Tuple[int, int]
    k: int
    major: Optional[Major]
    pitch: Optional[int]
    align: int
    stream: int
    on_device: bool
    span: Tuple[int, int]

    @property
    def itemsize(self) -> int:
        return self.dtype.bits // 8

    @property
    def T(self) -> "Operand":
        """The same memory seen transposed (B (K, N) as Bt (N, K)): major and pitch stay, k moves."""
        return replace(self, array=transposed(self.array), shape=self.shape[::-1], strides=self.strides[::-1],
                       k=1 - self.k)

    @property
    def tma_readable(self) -> bool:
        """Whether a tensor map can describe it (cuTensorMapEncodeTiled's rules): a contiguous mode, a pitch
        that is a multiple of 16 bytes, a 16-byte-aligned address, in GPU memory. The extents are free."""
        return self.on_device and self.pitch is not None and self.pitch % 16 == 0 and self.align >= 16

    @property
    def in_16_byte_rows(self) -> bool:
        """Whether a kernel that loads 16 bytes at a time (cp.async, ldmatrix) can read it in place: in GPU
        memory, at a 16-byte-aligned address, its contiguous rows a multiple of 16 bytes long and apart."""
        if not self.on_device or self.major is None or self.align < 16:
            return False
        unit = self.k if self.major == Major.K else 1 - self.k
        return (self.shape[unit] * self.itemsize) % 16 == 0 and (self.shape[1 - unit] <= 1 or self.pitch % 16 == 0)

    def packed(self, shape) -> bool:
        """Whether it is a row-major device array of exactly `shape` that a kernel can read or write in place:
        no gaps between rows, rows of 16-byte multiples, a 16-byte-aligned address."""
        rows, cols = shape
        return (self.on_device and self.shape == (rows, cols) and self.align >= 16 and (cols * self.itemsize) % 16 == 0
                and self.strides[1] == self.itemsize and (rows <= 1 or self.strides[0] == cols * self.itemsize))

    def overlaps(self, *others: "Operand") -> bool:
        """Whether it shares memory with any of `others` (in the same memory, host or device)."""
        lo, hi = self.span
        return any(o.on_device == self.on_device and o.span[0] < hi and lo < o.span[1] for o in others)

    def to_device(self) -> "Operand":
        """Itself if it is in GPU memory, else the description of a row-major copy there (its stream stays)."""
        if self.on_device:
            return self
        return describe(cuda.to_device(np.ascontiguousarray(self.array)), self.name, k=self.k, dtype=self.dtype)


def describe(x, name: str, op: str = "matmul", k: int = 1, dtype: Optional[Numeric] = None) -> Operand:
    """The Operand of matrix x (a NumPy array, or anything in GPU memory: Numba, CuPy, PyTorch); `k` says
    which mode the product runs along (A: 1, B: 0). `dtype`: the element type when x holds its bits.
    A ValueError or TypeError naming `op`, `name` and the value for anything but a matrix of a known type."""
    library = type(x).__module__.split(".")[0]
    stream = 0 if in_simulator() else stream_of(x)
    if library == "torch" and getattr(x, "is_cuda", False) and str(x.dtype) in _TORCH_BITS:
        import torch
        bits, dtype = _TORCH_BITS[str(x.dtype)]       # Numba's arrays have no bfloat16 or float8: their bits
        x = x.view(getattr(torch, bits))
    on_device = is_device_array(x)
    a = device_view(x) if on_device else np.asarray(x)
    if a.ndim != 2:
        raise ValueError("%s: %s must be a matrix (2 dimensions), got shape %s" % (op, name, a.shape))
    dtype = dtype or _element_type(a.dtype, name, op)
    a = a if np.dtype(a.dtype) == np.dtype(storage(dtype)) else a.view(storage(dtype))
    shape, strides = tuple(a.shape), tuple(a.strides)
    item = dtype.bits // 8
    major = major_of(shape[::-1] if k == 0 else shape, strides[::-1] if k == 0 else strides, item)
    pitch = None if major is None else strides[1 - k if major == Major.K else k]
    address = _address(a)
    extent = 0 if 0 in shape else sum((n - 1) * abs(s) for n, s in zip(shape, strides)) + item
    return Operand(name, a, library, dtype, shape, strides, k, major, pitch, _alignment(address), stream, on_device,
                   (address, address + extent))


def _element_type(np_dtype, name, op):
    try:
        return numeric(np.dtype(np_dtype).name, op)
    except (TypeError, ValueError, KeyError):
        raise TypeError("%s: %s has dtype %s, which is no element type of cutelite.numeric" % (op, name, np_dtype))


def _address(a):
    """The address of a's first element: from the CUDA array interface, else the host's (NumPy; the
    simulator's device arrays are NumPy arrays inside)."""
    cai = getattr(a, "__cuda_array_interface__", None)
    return (cai or getattr(a, "__array_interface__"))["data"][0] or 0


def _alignment(address):
    return MAX_ALIGN if address % MAX_ALIGN == 0 else address & -address


def stream_of(x) -> int:
    """The handle of the stream that x's library queues work on now: PyTorch's current stream for a CUDA
    tensor (PyTorch's __cuda_array_interface__ names none), else the interface's "stream" (CuPy's current
    stream; a Numba array's own), else 0. 1, the legacy default stream's other name, counts as 0."""
    if type(x).__module__.startswith("torch"):
        if not x.is_cuda:
            return 0
        h = _torch_stream(x.get_device())
    else:
        h = (getattr(x, "__cuda_array_interface__", None) or {}).get("stream") or 0
    return 0 if h == 1 else int(h)


def _torch_stream(device: int) -> int:
    """PyTorch's current stream on a device, as its handle. torch.cuda.current_stream builds a Stream object
    on every call (a third of a prepared matmul call's host time, measured on an H200); PyTorch's compiler
    reads the handle alone through torch._C._cuda_getCurrentRawStream, used here where it exists."""
    import torch
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(device) if raw is not None else torch.cuda.current_stream(device).cuda_stream


def shared_stream(*operands: Optional[Operand]):
    """The stream a call runs on: the one stream its device operands' libraries work on, so that the host
    never waits and the work stays in that stream's order (a Numba stream; 0 for the default). Operands of
    different streams: those are synchronized first and the default stream is used."""
    handles = {o.stream for o in operands if o is not None and o.on_device} - {0}
    if len(handles) == 1:
        return cuda.external_stream(handles.pop())
    for h in handles:
        cuda.external_stream(h).synchronize()
    return 0
