"""The copies around a library call's kernel: an operand padded, cropped or widened to float32 where the
kernel cannot read it as it is, C cleared or moved into the caller's `out`, all on the call's stream.

Each copy is an elementwise kernel over a (rows, cols) index space, x along a row (a warp touches consecutive
elements), within CUDA's grid limits: gridDim.y is at most 65,535 blocks, so past 65,535 x 8 rows each thread
steps down the rows by the grid's height (issue 30: 600,000-row operands).

A copy runs on every call of the product it serves, so it is prepared once with its arrays (`prepare2`): on a
GPU one driver call launches it again (kernels.runtime.prepared_launch), where Numba's launch would spend tens
of microseconds of host time converting its arguments, more than a small copy takes on the GPU (issue 30:
777 x 1333 x 2049 took three such copies a call).
"""

from typing import Callable, Tuple

import numpy as np
from numba import cuda

from .. import runtime

__all__ = ["BLOCK", "MAX_GRID_Y", "grid2", "launch2", "prepare2", "staged", "crop", "widen_to_f32", "fill_zero",
           "output", "written", "seeded", "prepared", "ceil_to"]

BLOCK = (32, 8)            # 32 columns (one warp along a row) x 8 rows
MAX_GRID_Y = 65535         # CUDA's limit on gridDim.y (gridDim.x may reach 2^31 - 1)


def ceil_to(x: int, m: int) -> int:
    return (x + m - 1) // m * m


def grid2(shape: Tuple[int, int]):
    """(grid, block) of a copy over a (rows, cols) index space: a thread per element along the columns, at
    most MAX_GRID_Y blocks down the rows (the kernels loop over the rest).

    Post: grid[1] <= MAX_GRID_Y; grid[0] * 32 >= cols; grid[1] * 8 >= rows or grid[1] == MAX_GRID_Y."""
    rows, cols = shape
    return ((cols + BLOCK[0] - 1) // BLOCK[0], min((rows + BLOCK[1] - 1) // BLOCK[1], MAX_GRID_Y)), BLOCK


def launch2(kernel, shape, *args, stream=0):
    """kernel over a (rows, cols) index space (grid2), x along the columns (coalesced for row-major arrays)."""
    grid, block = grid2(shape)
    kernel[grid, block, stream](*args)


def prepare2(kernel, shape, *args, stream=0) -> Callable:
    """A zero-argument callable that runs launch2(kernel, shape, *args, stream=stream) again: one driver call
    with the arguments converted once, here (runtime.prepared_launch), holding them alive; Numba's launch
    where there is no driver handle (the simulator)."""
    grid, block = grid2(shape)
    go = runtime.prepared_launch(kernel, args, grid, block, 0, stream)
    if go is None:
        return lambda: kernel[grid, block, stream](*args)
    go.arrays = args
    return go


@cuda.jit
def _copy_pad(src, dst):
    """dst[i, j] = src[i, j] inside src, 0 outside (any strides; f32 or 16-bit bits)."""
    j, first = cuda.grid(2)
    if j < dst.shape[1]:
        for i in range(first, dst.shape[0], cuda.gridsize(2)[1]):
            dst[i, j] = src[i, j] if i < src.shape[0] and j < src.shape[1] else 0


@cuda.jit
def _copy_crop(src, dst):
    j, first = cuda.grid(2)
    if j < dst.shape[1]:
        for i in range(first, dst.shape[0], cuda.gridsize(2)[1]):
            dst[i, j] = src[i, j]


@cuda.jit
def _bf16_to_f32(src, dst):
    """dst (float32 seen as uint32) = the bf16 bits of src in the high half: the same value, exactly; 0
    outside src."""
    j, first = cuda.grid(2)
    if j < dst.shape[1]:
        for i in range(first, dst.shape[0], cuda.gridsize(2)[1]):
            if i < src.shape[0] and j < src.shape[1]:
                dst[i, j] = (np.uint32(src[i, j]) & np.uint32(0xFFFF)) << np.uint32(16)
            else:
                dst[i, j] = 0


@cuda.jit
def _f16_to_f32(src, dst):
    j, first = cuda.grid(2)
    if j < dst.shape[1]:
        for i in range(first, dst.shape[0], cuda.gridsize(2)[1]):
            if i < src.shape[0] and j < src.shape[1]:
                dst[i, j] = np.float32(src[i, j])
            else:
                dst[i, j] = 0


@cuda.jit
def _fill_zero(dst):
    j, first = cuda.grid(2)
    if j < dst.shape[1]:
        for i in range(first, dst.shape[0], cuda.gridsize(2)[1]):
            dst[i, j] = 0


def staged(a, rows: int, cols: int, stream=0) -> Tuple[object, Callable]:
    """(a row-major device buffer of (rows, cols), the copy that fills it with the device array `a` padded
    with zeros)."""
    buf = cuda.device_array((rows, cols), a.dtype)
    return buf, prepare2(_copy_pad, (rows, cols), a, buf, stream=stream)


def crop(src, dst, stream=0) -> Callable:
    """The copy dst[...] = src[:rows, :cols] of dst's shape."""
    return prepare2(_copy_crop, dst.shape, src, dst, stream=stream)


def widen_to_f32(a, bfloat16: bool, stream=0, shape=None) -> Tuple[object, Callable]:
    """(a float32 row-major device buffer of `shape` (default a's; at least a's), the copy that converts the
    16-bit device array `a` (f16 or bf16 bits) into it exactly, zeros past a's edges: widened and padded in
    one pass)."""
    shape = tuple(a.shape if shape is None else shape)
    buf = cuda.device_array(shape, np.float32)
    if bfloat16:        # the bits moved, not the number converted: written through a uint32 view of buf
        return buf, prepare2(_bf16_to_f32, shape, a, buf.view(np.uint32), stream=stream)
    return buf, prepare2(_f16_to_f32, shape, a.view(np.float16), buf, stream=stream)


def fill_zero(dst, stream=0):
    if dst.size:
        launch2(_fill_zero, dst.shape, dst, stream=stream)


def output(c, M: int, N: int, dtype=np.float32):
    """The device array C is delivered in: the caller's device `out` (Operand c), else a fresh (M, N) array
    of `dtype` (a NumPy dtype: an element type's storage)."""
    return c.array if c is not None and c.on_device else cuda.device_array((M, N), dtype)


def written(c, M: int, N: int, shape, reads, stream=0, dtype=np.float32):
    """(where a kernel writes C, padded to `shape`; the copies after the kernel; the device array holding C
    then): the caller's device `out` (Operand c) itself where it is packed at `shape` and shares no memory
    with the Operands the kernel `reads` (NumPy's rule for an overlap: as if into a temporary); else a fresh
    buffer of `dtype`, cropped into C's place where the two differ."""
    if c is not None and c.on_device and c.packed(shape) and not c.overlaps(*reads):
        return c.array, [], c.array
    buf = cuda.device_array(shape, dtype)
    dst = output(c, M, N, dtype) if (c is not None and c.on_device) or tuple(shape) != (M, N) else buf
    return buf, ([] if dst is buf else [crop(buf, dst, stream)]), dst


def seeded(c, buf, stream=0):
    """The copies that fill the buffer a kernel writes C into with C's values before it (Operand c: the
    caller's `out`, on the device or the host; zeros past its edges), for an epilogue that reads them
    (beta != 0): none where buf is c's own array."""
    if c.on_device and buf is c.array:
        return []
    src = c.array if c.on_device else cuda.to_device(np.ascontiguousarray(c.array))
    return [prepare2(_copy_pad, buf.shape, src, buf, stream=stream)]


def prepared(before, launch, after, result, keep=()) -> Callable:
    """One launchable call: the copies `before`, the kernel's `launch`, the copies `after`, each prepared once
    (prepare2; the kernel's Kernel.prepare); returns `result` (the device array holding C). `keep`: buffers it
    must hold alive."""
    def call():
        for copy in before:
            copy()
        launch()
        for copy in after:
            copy()
        return result
    call.arrays = tuple(keep)
    return call
