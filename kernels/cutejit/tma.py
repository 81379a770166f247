"""TMA (Hopper's tensor memory accelerator) inside a traced kernel: a matrix argument seen through its tensor
map, and the bulk copies of one box between it and shared memory.

    tma_a = make_tma_atom("SM90_TMA_LOAD", row_major, sA_stage, (BM, BK), value_type="half_t")   # cutelite
    k = gemm.build(..., TensorMap(tma_a), ...)                                   # the kernel's argument
    tma_load(tmA, cA[_, _, bm, kt], sA[_, _, stage], *pipeline.producer_barrier(state))    # in the body
    k.launch(..., encode_tensor_map(A, TensorMap(tma_a)), ...)                   # on the host

A tensor map (CUtensorMap, 128 bytes in global memory) describes the matrix (address, extents, strides)
and the box one copy moves, and how the copy engine swizzles it into shared memory. cutelite's TMA atom
derives all of it from the matrix's layout and the shared-memory layout of one tile (C++ make_tma_atom):
the box, the swizzle, the bytes a tile delivers (tensor_map_params gives the driver's arguments). A copy
names its box by the matrix coordinates of its first element, innermost mode first; one thread issues it.
"""

import ctypes

import numpy as np

from cutelite import rank, size
from cutelite.numeric import numeric
from cutelite.tma import TMA_Atom, tensor_map_params

from ..numeric import holds
from ..expr import src
from .tensor import GTensor, STensor
from .trace import current

__all__ = ["TensorMap", "TmaTensor", "tma_load", "tma_load_multicast", "tma_store", "tma_store_commit",
           "tma_store_wait", "prefetch_tensor_map", "encode_tensor_map"]

class TensorMap:
    """A kernel argument: a 2-D matrix seen through the tensor map of `atom` (a cutelite TMA atom). A tile may
    take several boxes (atom.num_tma): each lands on a contiguous run of the tile's shared memory, in order.
    A multicast atom (SM90_TMA_LOAD_MULTICAST, n CTAs) splits each box n ways along its outer dimension: CTA
    j of the n loads the j-th slice and multicasts it (tma_load_multicast)."""

    def __init__(self, atom):
        if not isinstance(atom, TMA_Atom):
            raise TypeError("cutejit: TensorMap takes a TMA atom (cutelite.make_tma_atom), got %r" % (atom,))
        r = rank(atom.gmem_layout)
        split_inner = atom.multicast > 1 and (r != 2 or atom.box[0] != atom.tile_box[0])
        if split_inner or r not in (2, 4) or len(atom.box) != r or any(b != 1 for b in atom.box[2:]):
            raise ValueError("cutejit: TensorMap: %r is a %d-D box %s of a rank-%d tensor, multicast %d; the kernels "
                             "copy 2-D boxes of matrices (rank 2, or rank 4 with a box of one in modes 2 and 3), a "
                             "multicast splitting only the outer dimension" % (atom, len(atom.box), atom.box, r,
                                                                              atom.multicast))
        self.atom, self.dtype = atom, numeric(atom.value_type).name
        strides = atom.gmem_layout.stride
        self.inner = next(m for m in (0, 1) if strides[m] == 1)      # the matrix mode a box's rows run along
        self.outer = r - 2                                           # run-time coordinates past the matrix's two
        self.bytes = atom.transaction_bytes                          # what a tile's loads deliver (expect_tx)
        self.multicast = atom.multicast
        self.boxes = _boxes(atom)

    def bind(self, name, trace):
        return TmaTensor(name, self)

    def check(self, a, what):
        """A TypeError starting with `what` (the kernel and this argument) unless `a` is a tensor map: 16
        uint64 words (encode_tensor_map)."""
        if tuple(getattr(a, "shape", ())) != (16,) or np.dtype(getattr(a, "dtype", None)) != np.uint64:
            raise TypeError("%s: the kernel was built for %r: a tensor map, 16 uint64 words (encode_tensor_map); "
                            "got %s" % (what, self, repr(a)[:80]))

    def __repr__(self):
        return "TensorMap(%s, box %s, %d a tile, swizzle %d)" % (self.atom.op, self.atom.box, len(self.boxes),
                                                                self.atom.swizzle_mode)


def _boxes(atom):
    """[(tile coordinate of the box's first element, its element offset in the tile's shared memory)] for the
    atom's num_tma boxes: box j fills the tile's shared memory from offset j x (box elements)."""
    tile = atom.smem_layout
    inner = getattr(tile, "layout_b", tile)
    rows, cols = size(inner, 0), size(inner, 1)
    where = {inner(r, c): (r, c) for c in range(cols) for r in range(rows)}
    step = size(inner) // atom.num_tma
    return [(where[j * step], j * step) for j in range(atom.num_tma)]


class TmaTensor:
    """A TensorMap argument while traced: its parameter name and its spec."""

    def __init__(self, name, spec):
        self.name, self.spec = name, spec

    def __repr__(self):
        return "TmaTensor(%s, %r)" % (self.name, self.spec)


def _intrinsic(name):
    from .. import instructions
    return current().use(name, getattr(instructions, name))


def _check(tma, coord, smem, what, outer=()):
    if not isinstance(tma, TmaTensor):
        raise TypeError("cutejit: %s: expected a TensorMap argument, got %r" % (what, tma))
    if len(outer) != tma.spec.outer:
        raise ValueError("cutejit: %s: %r takes %d coordinates past the box's matrix, got %d" % (
            what, tma.spec, tma.spec.outer, len(outer)))
    if not isinstance(coord, GTensor) or coord.mem or coord.layout is None:
        raise TypeError("cutejit: %s: the box is named by a tile of an identity tensor (its coordinates), got %r"
                        % (what, coord))
    if not isinstance(smem, STensor):
        raise TypeError("cutejit: %s: the shared side is a whole tile (a slice of the stages), got %r" % (what, smem))
    if size(smem.layout) != size(tma.spec.atom.smem_layout):
        raise ValueError("cutejit: %s: %r holds %d elements, a tile of %r %d" % (
            what, smem, size(smem.layout), tma.spec, size(tma.spec.atom.smem_layout)))
    origin, start, inner = coord.coord(0), smem.start(), tma.spec.inner
    for (dr, dc), off in tma.spec.boxes:        # each box: its matrix coordinates innermost first, its smem start
        c = (origin[0] + dr, origin[1] + dc)
        yield (src(start + off), src(c[inner]), src(c[1 - inner])) + tuple(src(x) for x in outer)


def tma_load(tma, coord, smem, barrier, index, *outer):
    """Load the tile whose first element has the coordinates of `coord` (an identity tile) into `smem`, one
    TMA instruction a box, completing their bytes on mbarrier barrier[index]. A rank-4 map also takes the
    `outer` coordinates of modes 2 and 3 (attention's head and batch)."""
    fn = _intrinsic("tma_load_%dd" % (2 + tma.spec.outer) if isinstance(tma, TmaTensor) else "tma_load_2d")
    for dst, *c in _check(tma, coord, smem, "tma_load", outer):
        current().emit("%s(%s, %s, %s, %s, %s, %s)" % (fn, smem.mem, dst, tma.name, barrier, src(index), ", ".join(c)))


def tma_load_multicast(tma, coord, smem, barrier, index, slice_, mask):
    """The cluster's CTAs that share a tile each load a slice of it and multicast it: this CTA, the
    `slice_`-th of the atom's n (a run-time value), loads slice `slice_` of every box (its outer rows
    slice_ x box / n onwards) into the same place of the shared memory of every CTA of `mask` (16 bits, CTA
    ranks), completing the bytes on each one's mbarrier barrier[index]. A TensorMap of multicast 1 loads the
    whole tile (tma_load)."""
    if not isinstance(tma, TmaTensor) or tma.spec.multicast == 1:
        return tma_load(tma, coord, smem, barrier, index)
    fn = _intrinsic("tma_load_2d_multicast")
    inner, outer = tma.spec.atom.box                     # one CTA's slice of a box, innermost first
    for dst, c0, c1 in _check(tma, coord, smem, "tma_load_multicast"):
        current().emit("%s(%s, %s + %s * %d, %s, %s, %s, %s, %s + %s * %d, %s)" % (
            fn, smem.mem, dst, src(slice_), inner * outer, tma.name, barrier, src(index), c0, c1, src(slice_), outer,
            src(mask)))


def tma_store(tma, smem, coord, *outer, add=False):
    """Store the tile in `smem` to the matrix at the coordinates of `coord` (out-of-bounds parts clipped); a
    rank-4 map also takes the `outer` coordinates of modes 2 and 3. add=True (rank 2): add the tile to the
    matrix's elements instead (cp.reduce.async.bulk.tensor .add; split-K's partial sums)."""
    if add and outer:
        raise ValueError("cutejit: tma_store: add=True is built for rank-2 tensor maps, got %d outer coordinates"
                         % len(outer))
    fn = _intrinsic("tma_reduce_add_2d" if add else
                    "tma_store_%dd" % (2 + tma.spec.outer) if isinstance(tma, TmaTensor) else "tma_store_2d")
    for start, *c in _check(tma, coord, smem, "tma_store", outer):
        current().emit("%s(%s, %s, %s, %s)" % (fn, tma.name, smem.mem, start, ", ".join(c)))


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
    """Before a thread's first copy through a tensor map in global memory: fence.proxy.tensormap (the host's
    writes of the map, ordered before the TMA unit reads it), then prefetch.tensormap."""
    current().emit("%s(%s)" % (_intrinsic("tma_prefetch_desc"), tma.name))


def encode_tensor_map(array, spec):
    """The CUtensorMap of the row-major 2-D device `array` for `spec` (a TensorMap): cutelite's
    tensor_map_params for the array's shape and strides, encoded by the driver (cuTensorMapEncodeTiled) and
    copied to the device as a uint64 array of 16 words. Out-of-bounds elements of a box read as zeros;
    stores clip them. L2 promotion 256B (C++ CuTe asks for 128B; 256B measured no slower here)."""
    from numba import cuda
    if not holds(array.dtype, spec.dtype):
        raise TypeError("encode_tensor_map: a map of %s elements over a %s array" % (spec.dtype, array.dtype))
    address = array.__cuda_array_interface__["data"][0]
    if address % 16:
        raise ValueError("encode_tensor_map: the array's address must be 16-byte aligned, got %#x" % address)
    p = tensor_map_params(spec.atom, shape=tuple(array.shape), strides_bytes=tuple(array.strides), l2_promotion="256B")
    raw = np.zeros(32, dtype=np.uint64)
    start = (-raw.ctypes.data % 64) // 8           # the map is 64-byte aligned
    tm = raw[start:start + 16]
    u64, u32, r = ctypes.c_uint64, ctypes.c_uint32, p.rank
    rc = ctypes.CDLL("libcuda.so.1").cuTensorMapEncodeTiled(
        ctypes.c_void_p(tm.ctypes.data), ctypes.c_int(p.data_type), u32(r), ctypes.c_void_p(address),
        (u64 * r)(*p.dims), (u64 * max(r - 1, 1))(*p.strides), (u32 * r)(*p.box), (u32 * r)(*p.element_strides),
        ctypes.c_int(p.interleave), ctypes.c_int(p.swizzle), ctypes.c_int(p.l2_promotion), ctypes.c_int(p.oob_fill))
    if rc != 0:
        raise RuntimeError("encode_tensor_map: cuTensorMapEncodeTiled failed with CUresult %d (shape %s, %r)"
                           % (rc, array.shape, spec))
    return cuda.to_device(tm.copy())
