"""Tensor: memory (an engine) seen through a layout; and CuTe's partitioning functions.

A Tensor is three things: a flat NumPy array (the engine, CuTe's pointer), an offset into it, and a
layout. Element c is ``engine[offset + layout(c)]``. Everything else is layout algebra:

    t(m, n)               one element                      engine[offset + layout(m, n)]
    t(_, n)               a view: same engine              slice_and_offset((_, n), layout)
    zipped_divide(t, T)   a view: same engine              zipped_divide(layout, T)
    local_tile(t, T, c)   the tile at c (inner partition)  zipped_divide, then slice the rest modes
    local_partition(t, thr_layout, i)                      zipped_divide, then slice the tile modes
    tv_partition(t, tv, thread)                            composition(layout, tv), then slice (thread, _)

No operation copies data: a view writes through to its engine, as in CuTe.
The data is a NumPy array, imported where data is touched: on layouts, these functions need no NumPy.

Shared memory with a swizzle (C++'s swizzle_ptr): ``make_tensor(array, gmma_layout)`` of a GMMA smem layout
``Sw<B,4,3> o smem_ptr[bits](unset) o L`` keeps L as the tensor's layout and the swizzle in the tensor,
acting on *byte* addresses, as C++ does (the array's element 0 stands for a swizzle-aligned address).
Partitions then slice L alone: their layouts and offsets are C++'s, static where C++'s are.
Post: t(c) is array[sw((offset + L(c)) * bytes) / bytes]; str(partition.layout) is what C++ prints.
"""

from .int_tuple import is_tuple, wrap, product_each, flatten as flatten_tuple
from .int_tuple import prefix_product
from . import layout as L
from .basis import ArithmeticTupleIterator, Iterator
from .errors import OutOfRange, check_cells, quote
from .layout import Layout, _, _has_free, dice, get_flat_coord, make_layout, rank, size, slice_and_offset
from .swizzle import Swizzle

__all__ = [
    "Tensor", "make_tensor", "is_tensor", "composition", "logical_divide", "zipped_divide",
    "tiled_divide", "flat_divide", "dice", "get_flat_coord", "inner_partition", "outer_partition",
    "local_tile", "local_partition", "tv_partition", "owner_table", "offsets_of", "make_fragment_like",
    "make_tensor_like",
]


def _is_layout(x):
    return isinstance(x, (Layout, L.ComposedLayout))


def _need_tensor(x, op):
    """TypeError naming `op` unless x is a Tensor. C++'s partitioning functions take only tensors: a
    partition of a bare layout would lose the offset of the tile or thread it picks."""
    if isinstance(x, Tensor):
        return
    hint = ""
    if _is_layout(x):
        hint = ("; C++'s partitioning functions take only tensors (a partition of a layout loses its offset): "
                "partition make_tensor(array, layout), or make_identity_tensor(shape) to see coordinates")
    raise TypeError(f"{op}: expected a Tensor, got {quote(x, str)} ({type(x).__name__}){hint}")


def offsets_of(layout):
    """layout(i) for i = 0 .. size-1, as an int64 array shaped product_each(shape), column-major:
    ``offsets_of(L)[m, n] == L(m, n)`` for a rank-2 layout (each index is a mode's 1-D coordinate).
    """
    L._need_layout(layout, "offsets_of", composed=True)
    import numpy as np
    n = size(layout)
    i = np.arange(n, dtype=np.int64)
    if hasattr(layout, "layout_b"):  # swizzled: inner offsets, plus the offset, then the swizzle
        inner = offsets_of(layout.layout_b).reshape(-1, order="F") + int(layout.offset)
        flat = np.array([int(layout.layout_a(int(o))) for o in inner], dtype=np.int64)
    else:
        shp = flatten_tuple(wrap(layout.shape))
        std = flatten_tuple(wrap(layout.stride))
        flat = np.zeros(n, dtype=np.int64)
        for s, d, p in zip(shp, std, prefix_product(shp)):
            flat += (i // int(p)) % int(s) * int(d)
    return flat.reshape(product_each(layout.shape), order="F")


def _through(swizzle, i, itemsize):
    """Engine index of element index i (an int or an int array) of `itemsize`-byte elements: i itself
    when swizzle is None, else through the swizzle on its byte address i * itemsize."""
    return i if swizzle is None else swizzle(i * itemsize) // itemsize


def _smem_parts(layout):
    """(swizzle, bits, L) of a layout flagged for shared memory (gmma.GmmaSmemLayout, C++'s
    Sw o smem_ptr[bits](unset) o L), else (None, None, layout)."""
    if isinstance(layout, L.ComposedLayout) and hasattr(layout, "bits"):
        return layout.layout_a, layout.bits, layout.layout_b
    return None, None, layout


_DTYPE_OF_BITS = {8: "uint8", 16: "float16", 32: "float32", 64: "float64"}


class Tensor:
    """``engine[offset + layout(c)]`` for each coordinate c: a view of a flat NumPy array; or, when the
    engine is an iterator (basis.Iterator: an ArithmeticTupleIterator of identity.py, a
    gmma.DescriptorIterator), the element ``engine[layout(c)]`` it computes (offset 0: the iterator holds it).

    `swizzle` (memory only) marks shared memory: a Swizzle on byte addresses (C++ swizzle_ptr; Sw<0,4,3>:
    none), applied to the byte address of element offset + layout(c). None: memory without a swizzle.

    ``t(m, n)`` and ``t[m, n]`` read an element; ``t[m, n] = x`` writes it. A coordinate holding ``_``
    gives a Tensor view on the same engine (``t(_, 3)`` is column 3); assigning to it writes every
    element of the view (a scalar, or an array shaped like ``view.to_numpy()``).
    """

    __slots__ = ("engine", "layout", "offset", "swizzle")

    def __init__(self, engine, layout, offset=0, swizzle=None):
        if not _is_layout(layout):
            raise TypeError(f"Tensor: the layout must be a Layout or ComposedLayout, got {layout!r}")
        if isinstance(engine, Iterator):
            if swizzle is not None:
                raise TypeError(f"Tensor: only memory takes a swizzle, not the iterator {engine}")
            self.engine, self.layout, self.offset, self.swizzle = engine + offset, layout, 0, None
            return
        L._need_int(offset, "Tensor", "offset")
        import numpy as np
        if not isinstance(engine, np.ndarray) or engine.ndim != 1:
            shape = f" of shape {engine.shape}" if isinstance(engine, np.ndarray) else ""
            raise TypeError(f"Tensor: the engine must be a 1-D NumPy array or an Iterator, got "
                            f"{type(engine).__name__}{shape}")
        if swizzle is not None:
            if not isinstance(swizzle, Swizzle):
                raise TypeError(f"Tensor: swizzle must be a Swizzle (on byte addresses) or None, got {swizzle!r}")
            if (1 << swizzle.base) % engine.itemsize:
                raise ValueError(f"Tensor: {swizzle} keeps {1 << swizzle.base}-byte units together, which "
                                 f"{engine.itemsize}-byte {engine.dtype} elements do not divide")
        self.engine, self.layout, self.offset, self.swizzle = engine, layout, int(offset), swizzle

    @property
    def counts(self):
        """True when the engine is an Iterator (its elements are computed), False for memory."""
        return isinstance(self.engine, Iterator)

    def view(self, layout, offset=0):
        """The same engine, moved by `offset` (an int, or a coordinate for a counting engine), seen
        through `layout`: what slicing and partitioning return."""
        if self.counts:
            return Tensor(self.engine + offset, layout)
        L._need_int(offset, "Tensor.view", "offset")
        return Tensor(self.engine, layout, self.offset + int(offset), self.swizzle)

    def _need_memory(self, what):
        if self.counts:
            coords = isinstance(self.engine, ArithmeticTupleIterator)
            kind = "a coordinate tensor" if coords else f"a tensor of {self.engine}"
            raise TypeError(f"Tensor.{what}: {self} is {kind} (its elements are computed, not stored); "
                            "read its elements with t(c)")

    def _swizzled(self, i):
        return _through(self.swizzle, i, self.engine.itemsize)

    # ---- the layout's view of the tensor -------------------------------------------------------------
    @property
    def shape(self):
        return self.layout.shape

    @property
    def stride(self):
        return self.layout.stride

    @property
    def size(self):
        return size(self.layout)

    @property
    def rank(self):
        return rank(self.layout)

    # ---- element access and slicing ------------------------------------------------------------------
    def __call__(self, *coord):
        c = coord[0] if len(coord) == 1 else coord
        if _has_free(c):
            return self.view(*slice_and_offset(c, self.layout))
        if self.counts:
            return self.engine[self.layout(c)]
        return self.engine[self._index(c)]

    def _index(self, c):
        """The engine index of coordinate c; never wraps through NumPy's negative indexing."""
        i = self._swizzled(self.offset + self.layout(c))
        if not 0 <= i < self.engine.size:
            raise OutOfRange(f"Tensor: coordinate {quote(c, str)} reaches element {i}, outside the "
                             f"{self.engine.size} elements of its array ({self.layout} from offset {self.offset})")
        return i

    def __getitem__(self, coord):
        return self(coord)

    def __setitem__(self, coord, value):
        self._need_memory("__setitem__")
        where = self(coord).offsets() if _has_free(coord) else self._index(coord)
        try:
            self.engine[where] = value
        except (TypeError, ValueError) as e:
            raise type(e)(f"Tensor: cannot store {quote(value)} in its {self.engine.dtype} array at "
                          f"{quote(coord, str)}: {e}") from None

    def __iter__(self):
        raise TypeError("Tensor is not iterable: use t(i) for element i, or t.to_numpy()")

    def offsets(self):
        """Engine indices of all elements, shaped product_each(shape) (see offsets_of)."""
        self._need_memory("offsets")
        idx = self._swizzled(self.offset + offsets_of(self.layout))
        if idx.size and (idx.min() < 0 or idx.max() >= self.engine.size):
            raise OutOfRange(f"Tensor: {self.layout} from offset {self.offset} reaches elements {idx.min()}.."
                             f"{idx.max()}, outside the {self.engine.size} elements of its array")
        return idx

    def to_numpy(self):
        """A copy of the values in natural coordinate order: shape product_each(shape), so that
        ``t.to_numpy()[m, n] == t(m, n)`` for a rank-2 tensor (modes flattened column-major). For a
        coordinate tensor, an object array of the coordinates (ArithmeticTuples)."""
        if self.counts:
            import numpy as np
            values = np.empty(size(self.layout), dtype=object)
            for i in range(size(self.layout)):
                values[i] = self(i)
            return values.reshape(product_each(self.layout.shape), order="F")
        return self.engine[self.offsets()]

    def __repr__(self):
        return f"Tensor({self})"

    def __str__(self):
        if self.counts:
            return f"{self.engine} o {self.layout}"
        sw = self.swizzle
        smem = "" if sw is None else "smem_" if sw.bits == 0 else f"{sw}_smem_"   # C++: Sw<3,4,3>_smem_ptr
        return f"{smem}{self.engine.dtype}[{self.engine.size}] + {self.offset} o {self.layout}"


def is_tensor(x):
    return isinstance(x, Tensor)


def make_tensor(array_or_layout, layout=None, dtype=None):
    """A Tensor over existing memory, or a new zero-filled one.

    make_tensor(array, layout): a view of `array`'s memory (a NumPy array of any shape, taken flat in
    memory order: no copy) through `layout` (a Layout, ComposedLayout, or a shape: column-major).
    make_tensor(layout, dtype=...): owning: a fresh zero array (float32 unless dtype says otherwise) just
    large enough for the layout.
    A GMMA smem layout (Sw o smem_ptr[bits](unset) o L) gives a shared-memory tensor: layout L, the swizzle
    on byte addresses (C++'s make_tensor of an smem pointer and such a layout); its element type must
    have `bits` bits (owning: float16 for 16 bits unless dtype says otherwise).
    Raises if some coordinate maps outside the memory.
    """
    import numpy as np
    for x in (array_or_layout,) if layout is None else (layout,):
        if not _is_layout(x):
            L._check_shape(x, "layout (or shape)", "make_tensor")
    owning = layout is None
    given = array_or_layout if owning else layout
    sw, bits, lay = _smem_parts(given if _is_layout(given) else make_layout(given))
    if owning:
        engine = np.zeros(0, dtype=dtype or _DTYPE_OF_BITS.get(bits, "float32"))
    else:
        arr = np.asarray(array_or_layout)
        engine = arr.reshape(-1, order="A") if arr.ndim != 1 else arr
        if arr.ndim != 1 and arr.size and not np.shares_memory(engine, arr):
            raise ValueError("make_tensor: the array is not contiguous; pass a contiguous array so the "
                             "tensor views its memory")
    if bits is not None and engine.itemsize * 8 != bits:
        raise ValueError(f"make_tensor: the shared-memory layout {given} holds {bits}-bit elements, not "
                         f"{engine.itemsize * 8}-bit {engine.dtype} (C++: Expected a B-bit pointer type)")
    reach = _through(sw, offsets_of(lay), engine.itemsize)
    low, top = int(reach.min()), int(reach.max())
    if owning:
        engine = np.zeros(top + 1, dtype=engine.dtype)
    if low < 0 or top >= engine.size:
        raise ValueError(f"make_tensor: layout {lay} reaches offsets {low}..{top}, outside the "
                         f"{engine.size} elements of the array")
    return Tensor(engine, lay, 0, sw)


def make_fragment_like(x):
    """C++ make_fragment_like: for a Tensor, a fresh zero-filled owning Tensor of the same dtype laid out
    by make_fragment_like(x.layout) (mode 0 column-major, the other modes in x's stride order); for a
    Layout, ComposedLayout or shape, cutelite's layout make_fragment_like.

    Post: shape(result) == shape(x) (up to tiled_product's nesting); a Tensor result owns new memory.
    """
    if isinstance(x, Tensor):
        x._need_memory("make_fragment_like")
        return make_tensor(L.make_fragment_like(x.layout), dtype=x.engine.dtype)
    return L.make_fragment_like(x)


def make_tensor_like(x):
    """C++ make_tensor_like: a fresh zero-filled owning Tensor of x's dtype and shape, compact, with its modes
    in the same order of strides as x's (make_layout_like(x.layout)): a register copy of a partition.

    Post: shape(result) == shape(x); the result owns new memory.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"make_tensor_like: expected a Tensor, got {x!r} ({type(x).__name__})")
    x._need_memory("make_tensor_like")
    return make_tensor(L.make_layout_like(x.layout), dtype=x.engine.dtype)


# ---- the algebra on tensors: same functions, applied to the layout; the engine is shared -------------
def _on_layout(fn, name):
    def op(x, tiler):
        if isinstance(x, Tensor):
            return x.view(fn(x.layout, tiler))
        return fn(x, tiler)
    op.__name__ = name
    op.__doc__ = (f"{name} of a Tensor: the same engine and offset, viewed through {name}(layout, ...). "
                  f"On a layout, cutelite's {name}.\n\n" + (fn.__doc__ or ""))
    return op


composition = _on_layout(L.composition, "composition")
logical_divide = _on_layout(L.logical_divide, "logical_divide")
zipped_divide = _on_layout(L.zipped_divide, "zipped_divide")
tiled_divide = _on_layout(L.tiled_divide, "tiled_divide")
flat_divide = _on_layout(L.flat_divide, "flat_divide")


# ---- partitioning --------------------------------------------------------------------------------------
def _all_free(n):
    return _ if n == 1 else (_,) * n


def inner_partition(tensor, tiler, coord):
    """Everything inside one tile: zipped_divide(tensor, tiler) is ((tile), (rest)); slice the rest
    modes with coord and keep the tile. A tuple coord shorter than the rest modes keeps the modes it
    does not name (as ``_``); an int coord is a 1-D index into the rest modes.
    Post: the result has the tile's modes; result(c) == zipped_divide(tensor, tiler)(c, coord).
    """
    _need_tensor(tensor, "inner_partition")
    L._need_tiler(tiler, "inner_partition")
    L._need_coord(coord, "inner_partition")
    tiled = zipped_divide(tensor, tiler)
    r0, r1 = rank(tiled.layout, 0), rank(tiled.layout, 1)
    if is_tuple(coord):
        coord = tuple(coord) + (_,) * (r1 - len(coord))
    return tiled(_all_free(r0), coord)


def outer_partition(tensor, tiler, coord):
    """One element of every tile: zipped_divide(tensor, tiler) is ((tile), (rest)); slice the tile modes
    with coord and keep the rest. (A thread's share when each thread takes one element per tile.)
    Post: the result has the rest modes; result(r) == zipped_divide(tensor, tiler)(coord, r).
    """
    _need_tensor(tensor, "outer_partition")
    L._need_tiler(tiler, "outer_partition")
    L._need_coord(coord, "outer_partition")
    tiled = zipped_divide(tensor, tiler)
    r0, r1 = rank(tiled.layout, 0), rank(tiled.layout, 1)
    if is_tuple(coord):
        coord = tuple(coord) + (_,) * (r0 - len(coord))
    return tiled(coord, _all_free(r1))


def local_tile(tensor, tiler, coord, proj=None):
    """The tile of `tensor` at `coord` (CuTe's local_tile = inner_partition): what a CTA works on.

    With proj (a tuple of 1 and ``_``), tiler and coord are first diced: ``local_tile(A, (32, 64, 4),
    (bx, by, _), (1, _, 1))`` tiles A (M, K) by (32, 4) at (bx, _), giving (32, 4, k tiles).
    """
    _need_tensor(tensor, "local_tile")
    L._need_tiler(tiler, "local_tile")
    L._need_coord(coord, "local_tile")
    if proj is not None:
        tiler, coord = dice(proj, tiler), dice(proj, coord)
    return inner_partition(tensor, tiler, coord)


def local_partition(tensor, thr_layout, thr_idx, proj=None):
    """Thread thr_idx's share of `tensor` when the threads of thr_layout (thread coordinate -> thread
    index) tile it repeatedly: outer_partition by the shape of thr_layout, at the coordinate where
    thr_layout takes the value thr_idx. With proj, thr_layout is diced first.
    Example (CuTe docs): a (16, 64) tensor, thr_layout (2, 16) column-major: every thread gets (8, 4).
    """
    _need_tensor(tensor, "local_partition")
    L._need_layout(thr_layout, "local_partition")
    L._need_int(thr_idx, "local_partition", "thr_idx")
    if proj is not None:
        thr_layout = dice(proj, thr_layout)
    if not isinstance(thr_layout, Layout):
        raise TypeError(f"local_partition: thr_layout must be a Layout, got {thr_layout!r}")
    return outer_partition(tensor, product_each(thr_layout.shape), get_flat_coord(thr_layout, thr_idx))


# ---- thread-value layouts ------------------------------------------------------------------------------
def tv_partition(tensor, tv_layout, thread):
    """Thread `thread`'s values of a tile: tv_layout maps (thread, value) to a 1-D (column-major)
    coordinate in the tile, so composition(tensor, tv_layout) is the tile seen as (thread, value);
    slice out the thread. Post: result(v) == tensor(tv_layout(thread, v)).
    """
    _need_tensor(tensor, "tv_partition")
    L._need_layout(tv_layout, "tv_partition")
    L._need_int(thread, "tv_partition", "thread")
    return composition(tensor, tv_layout)(thread, _)


def owner_table(tv_layout, tile_shape):
    """Which (thread, value) holds each element of a tile: two int arrays shaped product_each(tile_shape)
    (column-major 1-D coordinates, as in tv_partition), -1 where no (thread, value) reaches the element.

    The inverse picture comes from the inverse layout: R = right_inverse(tv_layout) gives, for tile
    index i < size(R), the 1-D (thread, value) coordinate j = R(i) with tv_layout(j) == i; the thread is
    j % size(tv_layout, 0), the value j // size(tv_layout, 0). Indices past size(R) (a TV layout that
    leaves holes) are found by scanning. If several threads hold an element (a stride-0 thread mode),
    the one the inverse picks is shown.
    """
    L._need_layout(tv_layout, "owner_table")
    L._need_int_strides(tv_layout, "owner_table")
    L._check_shape(tile_shape, "tile_shape", "owner_table")
    import numpy as np
    shp = product_each(tile_shape)
    if any(s <= 0 for s in shp):
        raise ValueError(f"owner_table: tile_shape {quote(tile_shape, str)} has a non-positive extent")
    n = int(np.prod(shp))
    check_cells(1, n, "owner_table")
    nthr = size(tv_layout, 0)
    threads = -np.ones(n, dtype=np.int64)
    values = -np.ones(n, dtype=np.int64)
    inv = L.right_inverse(tv_layout)
    for i in range(min(size(inv), n)):
        j = inv(i)
        threads[i], values[i] = j % nthr, j // nthr
    if size(inv) < n:  # holes: scan the TV layout for the rest
        for j in reversed(range(size(tv_layout))):
            i = tv_layout(j)
            if size(inv) <= i < n:
                threads[i], values[i] = j % nthr, j // nthr
    return threads.reshape(shp, order="F"), values.reshape(shp, order="F")
