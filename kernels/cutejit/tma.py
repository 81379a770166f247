"""TMA (Hopper's tensor memory accelerator) inside a traced kernel: a matrix argument seen through its tensor
map, and the bulk copies of one box between it and shared memory.

    k = gemm.build(..., TensorMap("float16", box=sA_stage_layout), ...)     # the kernel's argument
    tma_load(tmA, cA[_, _, bm, kt], sA[_, _, stage], *pipeline.producer_barrier(state))  # in the body
    k.launch(..., encode_tensor_map(A, box=sA_stage_layout), ...)          # on the host

A tensor map (CUtensorMap, 128 bytes in global memory) describes the matrix (address, extents, strides)
and the box one copy moves, and how the copy engine swizzles it into shared memory. The box and the
swizzle are read from the shared-memory layout of one box (a GMMA layout, e.g. tile_to_smem(
Layout_K_SW128_Atom("half_t"), (128, 64))): a TMA load writes exactly that layout. The copy names its box
by the matrix coordinates of its first element, innermost mode first; one thread issues it.
"""

import ctypes

import numpy as np

from cutelite import Layout, cosize, rank, size
from cutelite.gmma import GmmaSmemLayout

from .expr import src
from .tensor import GTensor, STensor
from .trace import current

__all__ = ["TensorMap", "TmaTensor", "tma_load", "tma_store", "tma_store_commit", "tma_store_wait",
           "prefetch_tensor_map", "encode_tensor_map"]

_DATA_TYPE = {"float16": 6, "float32": 7, "bfloat16": 9}     # CUtensorMapDataType
_BITS = {"float16": 16, "float32": 32, "bfloat16": 16}
_L2_256B = 3                                                  # CUtensorMapL2promotion


def _box_of(box):
    """(rows, cols, swizzle mode 0..3) of a box's shared-memory layout (a (rows, cols) GmmaSmemLayout with
    its cols contiguous, or a plain row-major layout)."""
    if isinstance(box, GmmaSmemLayout):
        inner, mode = box.layout_b, box.layout_a.bits
    elif isinstance(box, Layout):
        inner, mode = box, 0
    else:
        raise TypeError("cutejit: a TMA box is the shared-memory layout of one copy (a GMMA layout), got %r" % (box,))
    if rank(inner) != 2 or cosize(inner) != size(inner):
        raise ValueError("cutejit: a TMA box must be a compact rank-2 (rows, cols) layout, got %s" % (inner,))
    return size(inner, 0), size(inner, 1), mode


class TensorMap:
    """A kernel argument: a row-major matrix of `dtype` seen through its tensor map, for copies of one box
    with the shared-memory layout `box` ((rows, cols), cols contiguous)."""

    def __init__(self, dtype, box):
        if dtype not in _DATA_TYPE:
            raise ValueError("cutejit: TensorMap: unknown element type %r; known: %s" % (dtype, ", ".join(_DATA_TYPE)))
        self.dtype, self.box = dtype, box
        self.rows, self.cols, self.swizzle = _box_of(box)
        self.bytes = self.rows * self.cols * _BITS[dtype] // 8     # what one load delivers (expect_tx)
        span = (16 << self.swizzle) if self.swizzle else None
        if span and self.cols * _BITS[dtype] // 8 > span:
            raise ValueError("cutejit: TensorMap: a box row of %d bytes is wider than its %d-byte swizzle"
                             % (self.cols * _BITS[dtype] // 8, span))
        if self.rows > 256 or self.cols > 256:
            raise ValueError("cutejit: TensorMap: box %d x %d: TMA boxes are at most 256 a side" % (self.rows, self.cols))

    def bind(self, name, trace):
        return TmaTensor(name, self)

    def __repr__(self):
        return "TensorMap(%r, box %d x %d, swizzle %d)" % (self.dtype, self.rows, self.cols, self.swizzle)


class TmaTensor:
    """A TensorMap argument while traced: its parameter name and its spec."""

    def __init__(self, name, spec):
        self.name, self.spec = name, spec

    def __repr__(self):
        return "TmaTensor(%s, %r)" % (self.name, self.spec)


def _intrinsic(name):
    from .. import instructions
    return current().use(name, getattr(instructions, name))


def _check(tma, coord, smem, what):
    if not isinstance(tma, TmaTensor):
        raise TypeError("cutejit: %s: expected a TensorMap argument, got %r" % (what, tma))
    if not isinstance(coord, GTensor) or coord.mem or coord.layout is None:
        raise TypeError("cutejit: %s: the box is named by a tile of an identity tensor (its coordinates), got %r"
                        % (what, coord))
    if not isinstance(smem, STensor):
        raise TypeError("cutejit: %s: the shared side is a whole box (a slice of the stages), got %r" % (what, smem))
    if size(smem.layout) != tma.spec.rows * tma.spec.cols:
        raise ValueError("cutejit: %s: %r holds %d elements, a box of %r %d" % (
            what, smem, size(smem.layout), tma.spec, tma.spec.rows * tma.spec.cols))
    row, col = coord.coord(0)
    return src(col), src(row)


def tma_load(tma, coord, smem, barrier, index):
    """Load the box whose first element has the coordinates of `coord` (an identity tile) into `smem`,
    completing its bytes on mbarrier barrier[index]."""
    c0, c1 = _check(tma, coord, smem, "tma_load")
    fn = _intrinsic("tma_load_2d")
    current().emit("%s(%s, %s, %s, %s, %s, %s, %s)" % (fn, smem.mem, src(smem.start()), tma.name, barrier, src(index),
                                                       c0, c1))


def tma_store(tma, smem, coord):
    """Store the box in `smem` to the matrix at the coordinates of `coord` (out-of-bounds parts clipped)."""
    c0, c1 = _check(tma, coord, smem, "tma_store")
    fn = _intrinsic("tma_store_2d")
    current().emit("%s(%s, %s, %s, %s, %s)" % (fn, tma.name, smem.mem, src(smem.start()), c0, c1))


def tma_store_commit():
    """cp.async.bulk.commit_group: the stores issued so far form one bulk group."""
    current().emit("%s()" % _intrinsic("tma_store_commit"))


def tma_store_wait(n, read=False):
    """cp.async.bulk.wait_group[.read] n: at most n bulk groups pending (.read: only their reads of shared
    memory, so the buffer can be written again)."""
    if not isinstance(n, int) or n < 0:
        raise ValueError("cutejit: tma_store_wait takes a number of groups known at build time, got %r" % (n,))
    current().emit("%s(%d)" % (_intrinsic("tma_store_wait_read" if read else "tma_store_wait"), n))


def prefetch_tensor_map(tma):
    """prefetch.tensormap: bring the tensor map (in global memory) into the TMA unit's cache."""
    current().emit("%s(%s)" % (_intrinsic("tma_prefetch_desc"), tma.name))


def encode_tensor_map(array, spec):
    """The CUtensorMap of the row-major 2-D device `array` for `spec` (a TensorMap), encoded by the driver
    (cuTensorMapEncodeTiled) and copied to the device: a uint64 device array of 16 words. Out-of-bounds
    elements of a box read as zeros; stores clip them."""
    from numba import cuda
    rows, cols = array.shape
    item = np.dtype(array.dtype).itemsize
    if item * 8 != _BITS[spec.dtype]:
        raise ValueError("encode_tensor_map: a %s map over %s elements" % (spec.dtype, array.dtype))
    pitch = array.strides[0]
    if array.strides[1] != item or pitch % 16 or array.__cuda_array_interface__["data"][0] % 16:
        raise ValueError("encode_tensor_map: the array must be row-major with 16-byte aligned rows (strides %s)"
                         % (array.strides,))
    lib = ctypes.CDLL("libcuda.so.1")
    raw = np.zeros(32, dtype=np.uint64)
    start = (-raw.ctypes.data % 64) // 8           # the map is 64-byte aligned
    tm = raw[start:start + 16]
    u64, u32 = ctypes.c_uint64, ctypes.c_uint32
    rc = lib.cuTensorMapEncodeTiled(
        ctypes.c_void_p(tm.ctypes.data), ctypes.c_int(_DATA_TYPE[spec.dtype]), u32(2),
        ctypes.c_void_p(array.__cuda_array_interface__["data"][0]), (u64 * 2)(cols, rows), (u64 * 1)(pitch),
        (u32 * 2)(spec.cols, spec.rows), (u32 * 2)(1, 1), ctypes.c_int(0), ctypes.c_int(spec.swizzle),
        ctypes.c_int(_L2_256B), ctypes.c_int(0))
    if rc != 0:
        raise RuntimeError("encode_tensor_map: cuTensorMapEncodeTiled failed with CUresult %d (shape %s, %r)"
                           % (rc, array.shape, spec))
    return cuda.to_device(tm.copy())
