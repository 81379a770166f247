"""Device arrays from any library, seen by Numba without copies: what matmul and the Hopper kernels share.

A NumPy, CuPy or PyTorch array, or anything with __cuda_array_interface__, becomes a Numba device array
view here (device_view), and a transpose is a view with its strides swapped (transposed): Numba's own
DeviceNDArray.T copies through a kernel compiled on first use (100 ms at 4096^2).
"""

import numpy as np
from numba import cuda

from cutelite import Major

from .runtime import in_simulator

__all__ = ["on_device", "is_device_array", "device_view", "transposed", "broadcast", "operand_major", "major_of"]


def on_device(a):
    return hasattr(a, "copy_to_host")       # a Numba device array (or the simulator's stand-in)


def is_device_array(x):
    """Is x in GPU memory (a Numba, CuPy or PyTorch CUDA array)? The cheap tests first: PyTorch builds its
    __cuda_array_interface__ anew on every access."""
    return on_device(x) or getattr(x, "is_cuda", False) is True or hasattr(x, "__cuda_array_interface__")


def device_view(x):
    """x as a Numba device array, without a copy and without making the host wait (matmul queues its work on that stream): x itself
    if it is one already. Each conversion of a CuPy or PyTorch array costs the host tens of microseconds,
    so matmul makes one per operand and passes the result on."""
    return x if on_device(x) else cuda.as_cuda_array(x, sync=False)


def transposed(x):
    """x.T without a copy: for a device array a view with the shape and strides swapped (numba's
    DeviceNDArray.T copies through a transpose kernel, compiled on first use: 100 ms at 4096^2)."""
    if isinstance(x, np.ndarray) or in_simulator():
        return x.T
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    x = device_view(x)
    return DeviceNDArray(x.shape[::-1], x.strides[::-1], x.dtype, gpu_data=x.gpu_data)


def broadcast(v, shape, mode):
    """The 1-D device array v seen as a `shape` matrix that repeats it along `mode` (stride 0 there: CuTe's
    broadcast tensor), without a copy; v runs along the other mode."""
    strides = (0, v.strides[0]) if mode == 0 else (v.strides[0], 0)
    if in_simulator():
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
        inner = v._ary if hasattr(v, "_ary") else v
        return FakeCUDAArray(np.lib.stride_tricks.as_strided(inner, shape, strides, writeable=False))
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    return DeviceNDArray(shape, strides, v.dtype, gpu_data=device_view(v).gpu_data)


def operand_major(x, op="operand_major"):
    """Major.K if the 2-D array x (rows, K) has unit stride along K, Major.MN if along its rows, else None (a
    single row or column counts as K when its elements are adjacent). A TypeError naming `op` for anything
    but a 2-D array (NumPy, Numba, CuPy)."""
    shape, strides, dtype = (getattr(x, k, None) for k in ("shape", "strides", "dtype"))
    if shape is None or strides is None or dtype is None or len(shape) != 2 or len(strides) != 2:
        raise TypeError("%s: expected a 2-D array (NumPy, Numba, CuPy), got %s" % (op, repr(x)[:80]))
    return major_of(shape, strides, np.dtype(dtype).itemsize)


def major_of(shape, strides, item):
    """operand_major of a (rows, K) matrix of `item`-byte elements with these byte strides."""
    rows, cols = shape
    if strides[1] == item and (rows == 1 or strides[0] >= cols * item):
        return Major.K
    if strides[0] == item and (cols == 1 or strides[1] >= rows * item):
        return Major.K if cols == 1 else Major.MN
    return None
