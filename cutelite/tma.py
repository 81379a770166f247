"""Hopper's tensor memory accelerator (TMA) as CuTe describes it: one copy atom made from two layouts.

A TMA copy moves a *box* of a global tensor to shared memory (or back) in one instruction issued by one
thread. The hardware reads a *tensor map* (cuTensorMapEncodeTiled's 128-byte CUtensorMap): the global
tensor's extents and byte strides, the box's extents, the shared-memory swizzle, dimensions innermost
first. The instruction names a box by its *TMA coordinate*: the global coordinate of its first element,
innermost dimension first.

CuTe derives all of it from layouts (C++ make_tma_atom, cute/atom/copy_traits_sm90_tma.hpp):
  1. smem index -> smem coordinate:   right_inverse(the shared layout without its swizzle);
  2. -> global mode:                  composed with the CTA's tile of the identity layout of the global
                                      shape (strides E<i>, see basis.py), then coalesced;
  3. keep the leading modes with unit strides: the longest run of shared memory that is also a run of
     global coordinates; its modes, merged while they stay within 256 elements, are the box's
     dimensions (`tma_gbasis`: box mode -> global mode(s)); global modes it does not touch become
     dimensions of extent 1;
  4. the global extents and strides of those modes are the tensor map's, the tile's remaining elements
     are more instructions, and a multicast of n CTAs splits the box n ways (outermost dimension first).
The TMA tensor (`get_tma_tensor`) maps a global coordinate to its TMA coordinate; `tma_partition` cuts
it (and the shared tensor) into one box per instruction.

Post: str(atom), str(make_tma_copy(...)), the TMA tensor and tma_partition's results print as C++ prints
them, and tensor_map_params gives the arguments C++ passes to the driver (tests/fixtures/tma_cpp.txt,
made by tests/fixtures/gen_tma.sh). Inputs C++ refuses raise ValueError with C++'s message; so do maps
the driver refuses by its documented rules (CUDA driver API, cuTensorMapEncodeTiled).
"""

from dataclasses import dataclass
from math import gcd

from .basis import ArithmeticTupleIterator, ScaledBasis
from .copy_atoms import Copy_Atom
from .errors import quote
from .gmma import GmmaSmemLayout
from .identity import make_coord_tensor, make_identity_layout
from .int_tuple import ceil_div, congruent, crd2idx, dyn, flatten, fmt, is_int, is_static, is_tuple, product_each, wrap
from .layout import (
    ComposedLayout, Layout, _, coalesce, composition, cosize, get, group, logical_divide, make_layout, rank,
    right_inverse, size, slice_and_offset, take, tile_to_shape, upcast,
)
from .numeric import numeric
from .swizzle import Swizzle
from .tensor import Tensor
from .tiled import TiledCopy

__all__ = ["TMA_OPS", "TMA_Atom", "TensorMapParams", "make_tma_atom", "make_tma_copy", "tma_partition",
           "tensor_map_params", "multicast_mask"]

TMA_OPS = ("SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST", "SM90_TMA_STORE")

# CUtensorMapDataType of each element type (C++ TMA::to_CUtensorMapDataType: 8-bit types travel as UINT8)
DATA_TYPES = {"uint8_t": 0, "int8_t": 0, "float_e4m3_t": 0, "float_e5m2_t": 0, "uint16_t": 1, "uint32_t": 2,
              "int32_t": 3, "uint64_t": 4, "int64_t": 5, "half_t": 6, "float": 7, "double": 8,
              "bfloat16_t": 9, "tfloat32_t": 11}
_FLOAT_TYPES = (6, 7, 8, 9, 11)
# CUtensorMapSwizzle: its name and the span (bytes) the box's inner dimension must fit in
SWIZZLES = {0: ("none", None), 1: ("32B", 32), 2: ("64B", 64), 3: ("128B", 128),
            4: ("128B_ATOM_32B", 128), 6: ("128B_ATOM_64B", 128)}
L2_PROMOTIONS = {"none": 0, "64B": 1, "128B": 2, "256B": 3}     # CUtensorMapL2promotion
OOB_FILLS = {"none": 0, "nan": 1}                               # CUtensorMapFloatOOBfill


@dataclass(frozen=True)
class TMA_Atom(Copy_Atom):
    """C++'s Copy_Atom<Copy_Traits<op, bits per TMA, AuxTmaParams>, T>: one thread moves one box.

    Its ValLayouts are (_1, n) for the n elements of one instruction's (unsplit) box; the rest is what the
    tensor map and the TMA tensor need: the layouts it came from, `tma_gbasis` (box mode -> global
    mode(s), C++'s TmaGmemBasis), `g_stride` (global mode -> TMA coordinate basis, the TMA tensor's
    strides), the shared layout's swizzle, the multicast count, the descriptor's box (`box`, each CTA's
    share) and the global extents and element strides of the map's dimensions (`dims`, `strides`).
    """
    gmem_layout: Layout
    smem_layout: object
    tma_gbasis: Layout
    g_stride: object
    swizzle: Swizzle
    multicast: int
    box: tuple
    dims: tuple
    strides: tuple

    @property
    def data_type(self):
        """The tensor map's CUtensorMapDataType."""
        return DATA_TYPES[self.value_type]

    @property
    def swizzle_mode(self):
        """The tensor map's CUtensorMapSwizzle (0 none, 1 32B, 2 64B, 3 128B)."""
        return _swizzle_mode(self.swizzle, "TMA_Atom")

    @property
    def tile_box(self):
        """The box one instruction covers before a multicast splits it (innermost first)."""
        return tuple(int(size(self.tma_gbasis, i)) for i in range(rank(self.tma_gbasis)))

    @property
    def num_tma(self):
        """TMA instructions per tile (each CTA issues as many): the tile's elements over one box's."""
        return size(self.smem_layout) // size(self.tma_gbasis)

    @property
    def tma_bytes(self):
        """The bytes one instruction moves (to each CTA of its multicast mask): the box's."""
        n = 1
        for b in self.box:
            n *= b
        return n * self.bits // 8

    @property
    def transaction_bytes(self):
        """The bytes that land in one CTA's shared memory per tile, whoever issued them: what its
        mbarrier's arrive.expect_tx announces (CUTLASS's TmaTransactionBytes)."""
        return size(self.smem_layout) * self.bits // 8

    def get_tma_tensor(self, shape):
        """The TMA coordinate tensor of a global tensor of `shape`: element c is the TMA coordinate of
        global coordinate c (innermost dimension first). C++: atom.get_tma_tensor(shape).

        Post: str() is C++'s, e.g. ArithTuple(_0,_0) o (512,256):(_1@1,_1@0) for a K-major (M, K) tensor.
        """
        if not congruent(shape, self.g_stride):
            raise ValueError(f"get_tma_tensor: shape {quote(shape, fmt)} is not congruent with the global "
                             f"tensor's {fmt(self.gmem_layout.shape)}")
        return make_coord_tensor(Layout(shape, self.g_stride))

    def __repr__(self):
        return f"Copy_Atom<{self.op}, {self.value_type}> (TMA box {self.box})"


@dataclass(frozen=True)
class TensorMapParams:
    """The arguments of cuTensorMapEncodeTiled after the map and the global address, as plain values:
    dims, box and element_strides have `rank` entries, strides (bytes) rank - 1, innermost first."""
    data_type: int
    rank: int
    dims: tuple
    strides: tuple
    box: tuple
    element_strides: tuple
    interleave: int
    swizzle: int
    l2_promotion: int
    oob_fill: int


# ---- inputs ---------------------------------------------------------------------------------------------
def _value_type(t, what):
    """The C++ name of element type t (cutelite.numeric), if a tensor map can hold it."""
    if not isinstance(t, str):
        raise TypeError(f"{what}: value_type must be a type name such as 'half_t' or 'float16', got {quote(t)}")
    name = numeric(t, what).cpp
    if name not in DATA_TYPES:
        known = ", ".join(DATA_TYPES)
        raise ValueError(f"{what}: element type {t!r} has no tensor map data type (C++: Unknown TMA Format!); "
                         f"known: {known}")
    return name


def _gmem(x, value_type, what):
    """(layout, element type) of the global tensor: a Tensor over a NumPy array or a Layout."""
    if isinstance(x, Tensor):
        if x.counts:
            raise TypeError(f"{what}: the global tensor must be memory (a Tensor over an array) or a Layout, "
                            f"got the coordinate tensor {x}")
        mine = _value_type(x.engine.dtype.name, what)
        if value_type is not None and _value_type(value_type, what) != mine:
            raise ValueError(f"{what}: value_type {value_type!r} differs from the tensor's {x.engine.dtype}")
        layout, value_type = x.layout, mine
    elif isinstance(x, Layout):
        if value_type is None:
            raise ValueError(f"{what}: a global Layout needs value_type (e.g. 'half_t'): its element type")
        layout, value_type = x, _value_type(value_type, what)
    else:
        raise TypeError(f"{what}: the global tensor must be a Tensor or a Layout, got {quote(x)}")
    if not all(is_int(d) for d in flatten(wrap(layout.stride))):
        raise ValueError(f"{what}: the global layout {layout} must have integer strides (elements)")
    return layout, value_type


def _smem(layout, bits, what):
    """(swizzle, layout without it) of a shared layout: a GmmaSmemLayout (Sw<B,4,3> on bytes), a
    ComposedLayout Sw o _0 o L (the swizzle as C++ reads it: on bytes) or a plain Layout (no swizzle)."""
    if isinstance(layout, GmmaSmemLayout):
        if layout.bits != bits:
            raise ValueError(f"{what}: the shared layout {layout} is for {layout.bits}-bit elements, the "
                             f"tensor holds {bits}-bit ones")
        return layout.layout_a, layout.layout_b
    if isinstance(layout, ComposedLayout):
        if not isinstance(layout.layout_a, Swizzle) or layout.offset != 0:
            raise ValueError(f"{what}: the shared layout {layout} must be Swizzle o _0 o Layout")
        return layout.layout_a, layout.layout_b
    if isinstance(layout, Layout):
        return Swizzle(0, 4, 3), layout
    raise TypeError(f"{what}: the shared layout must be a Layout or a swizzled layout, got {quote(layout)}")


def _swizzle_mode(sw, what):
    """CUtensorMapSwizzle of a Swizzle on byte addresses (C++ get_tma_swizzle_bits / _base)."""
    b, m, s = sw.bits, sw.base, sw.shift
    if m == 4:
        if not 0 <= b <= 3:
            raise ValueError(f"{what}: Expected B = 0,1,2, or 3 when M == 4. Unsupported layout swizzle. ({sw})")
        if s != 3:
            raise ValueError(f"{what}: Expected S = 3 when M == 4. Unsupported layout swizzle. ({sw})")
        return b
    if m in (5, 6):
        if b != 2:
            raise ValueError(f"{what}: Expected B = 2 when M == 5 or 6. Unsupported layout swizzle. ({sw})")
        if m == 5 and s != 2:
            raise ValueError(f"{what}: Expected S = 2 when M == 5. Unsupported layout swizzle. ({sw})")
        return 4 if m == 5 else 6
    raise ValueError(f"{what}: Unsupported layout swizzle. ({sw}: TMA swizzles 16-byte units, Sw<B,4,3> on "
                     "bytes; a GMMA layout atom gives it)")


# ---- the box --------------------------------------------------------------------------------------------
def _basis_get(e, t):
    """Mode e.modes of the tuple t (C++ basis_get)."""
    for m in e.modes:
        t = t[m]
    return t


def _unit(e):
    """Whether a stride is a unit basis element (C++: basis_value(e) is static 1)."""
    v = e.value if isinstance(e, ScaledBasis) else e
    return is_int(v) and is_static(v) and v == 1


def _static_is(x, value):
    return is_int(x) and is_static(x) and x == value


def _coalesce_256(layout):
    """C++ detail::coalesce_256: merge a flat layout's modes greedily while the merged extent is <= 256
    (the largest box extent), skipping static extents 1; the profile is not kept."""
    shp, std = flatten(wrap(layout.shape)), flatten(wrap(layout.stride))
    ns, nd = [shp[0]], [std[0]]
    for s, d in zip(shp[1:], std[1:]):
        if _static_is(s, 1):
            continue
        if len(ns) == 1 and _static_is(ns[0], 1):
            ns, nd = [s], [d]
        elif (is_static(ns[-1]) and is_static(nd[-1]) and is_static(d) and is_static(s)
              and ns[-1] * nd[-1] == d and s * ns[-1] <= 256):
            ns[-1] *= s
        else:
            ns.append(s)
            nd.append(d)
    if len(ns) == 1 and _static_is(ns[0], 1):
        return Layout(1, 0)
    return Layout(tuple(ns), tuple(nd)) if len(ns) > 1 else Layout(ns[0], nd[0])


def _tma_gbasis(gmem, inner, cta_v_map, what):
    """C++ detail::construct_tma_gbasis: box mode -> global mode(s), at most 5 box modes."""
    if size(inner) != size(cta_v_map):
        raise ValueError(f"{what}: TMA requires CTA_Tile and SLayout top-level size equivalence. (the shared "
                         f"layout {inner} has {size(inner)} elements, the tile {cta_v_map} {size(cta_v_map)})")
    full = coalesce(composition(cta_v_map, right_inverse(inner)))     # smem index -> global mode
    strides = flatten(wrap(full.stride))
    kept = next((i for i, e in enumerate(strides) if not _unit(e)), len(strides))
    if kept == 0:
        raise ValueError(f"{what}: Could not find a common tile-gmem vectorization. Does the Tile select out "
                         f"major GMEM modes? (shared index -> global mode: {full})")
    sidx2gmode = take(full, 0, kept) if is_tuple(full.shape) else full
    tile_gstride = composition(gmem, sidx2gmode)                      # box index -> global offset
    tma_gstride = _coalesce_256(tile_gstride)
    tile_gbasis = Layout(tile_gstride.shape, composition(make_identity_layout(gmem.shape), sidx2gmode).stride)
    tile = composition(tile_gbasis, make_layout(wrap(tma_gstride.shape)))
    used = flatten(wrap(tile.stride))
    rest = [e for s, d, e in zip(flatten(wrap(gmem.shape)), flatten(wrap(gmem.stride)),
                                 flatten(wrap(make_identity_layout(gmem.shape).stride)))
            if not (_static_is(s, 1) or _static_is(d, 0)) and e not in used]
    full = Layout(wrap(tile.shape) + (1,) * len(rest), wrap(tile.stride) + tuple(rest))
    return group(full, min(rank(full), 4))


def _gmem_dims(shape, stride, tma_gbasis):
    """C++ detail::fill_tma_gmem_shape_stride: each box mode's global extent and stride (elements); a box
    mode over several global modes gets the extent of their span at the gcd of their strides."""
    dims, strides = [], []
    for mode in wrap(tma_gbasis.stride):
        if not is_tuple(mode) or len(mode) == 1:
            e = mode[0] if is_tuple(mode) else mode
            dims.append(int(_basis_get(e, shape)))
            strides.append(int(_basis_get(e, stride)))
            continue
        dim, st = 1, 0
        for e in flatten(mode):
            shape_j, stride_j = int(_basis_get(e, shape)), int(_basis_get(e, stride))
            old, st = st, gcd(st, stride_j)
            dim = (dim - 1) * (old // st) + (shape_j - 1) * (stride_j // st) + 1 if st else shape_j
        dims.append(dim)
        strides.append(st)
    return tuple(dims), tuple(strides)


def _check_map(dims, strides, box, bits, swizzle, what):
    """C++'s asserts in make_tma_copy_desc and the driver's documented rules for cuTensorMapEncodeTiled."""
    for i, d in enumerate(dims):
        if not 1 <= d <= 1 << 32:
            raise ValueError(f"{what}: global extent {d} of dimension {i} must be in 1..2^32")
    if strides[0] != 1:
        raise ValueError(f"{what}: the box's innermost dimension has global stride {strides[0]} elements, not 1 "
                         "(C++: assert gmem_prob_stride[0] == 1 && \"Majorness of smem doesn't match majorness of "
                         "gmem\")")
    for i, s in enumerate(strides[1:], 1):
        b = s * bits // 8
        if b % 16 or not 0 <= b < 1 << 40:
            raise ValueError(f"{what}: global stride {b} bytes of dimension {i} must be a multiple of 16 below "
                             f"2^40 (C++: assert (gmem_prob_stride[{i}] & 0b1111) == 0)")
    for i, b in enumerate(box):
        if not 1 <= b <= 256:
            raise ValueError(f"{what}: box extent {b} of dimension {i} must be in 1..256 (C++: assert "
                             f"smem_box_shape[{i}] <= (uint32_t(1) << 8))")
    inner = box[0] * bits // 8
    if inner % 16:
        raise ValueError(f"{what}: the box's inner dimension is {inner} bytes, not a multiple of 16 (driver: "
                         "boxDim[0] * elementSizeInBytes must be a multiple of 16 bytes)")
    name, span = SWIZZLES[_swizzle_mode(swizzle, what)]
    if span is not None and inner > span:
        raise ValueError(f"{what}: the box's inner dimension is {inner} bytes, more than the {name} swizzle's "
                         f"span (driver: the bounding box inner dimension must be <= the swizzle size)")


def _split_box(box, n, what):
    """The box each of n multicast CTAs loads: n divides the outermost dimensions first (C++ loop in
    make_tma_copy_desc)."""
    box = list(box)
    i = len(box) - 1
    while n > 1:
        if i < 0 or (box[i] % n and n % box[i]):
            raise ValueError(f"{what}: a multicast of {n} CTAs does not split the box {tuple(box)} (C++: assert "
                             f"smem_box_shape[i] % multicast == 0 || multicast % smem_box_shape[i] == 0)")
        box[i], n = ceil_div(box[i], n), ceil_div(n, box[i])
        i -= 1
    return tuple(box)


def _g_stride(gmem, tma_gbasis, strides_bytes, bits):
    """C++'s gmem_tma_basis_stride: global mode i -> E<j> (scaled) of the box mode j that holds it, _0 if
    none; the TMA tensor's strides."""
    modes = [flatten(m) if is_tuple(m) else (m,) for m in wrap(tma_gbasis.stride)]

    def one(e):
        s, d = _basis_get(e, gmem.shape), _basis_get(e, gmem.stride)
        if _static_is(s, 1) or _static_is(d, 0):
            return 0
        j = next((j for j, m in enumerate(modes) if e in m), None)
        if j is None:
            return 0
        if j == 0:
            return ScaledBasis(d, (0,))
        if len(modes[j]) == 1:
            return ScaledBasis(1, (j,))
        return ScaledBasis(dyn(ceil_div(int(d) * bits // max(strides_bytes[j], 16), 8)), (j,))

    def walk(basis):
        return tuple(walk(b) for b in basis) if is_tuple(basis) else one(basis)

    return walk(make_identity_layout(gmem.shape).stride)


# ---- the atom -------------------------------------------------------------------------------------------
def _op(op, what):
    name = op.strip().removeprefix("cute::") if isinstance(op, str) else op
    if name not in TMA_OPS:
        raise ValueError(f"{what}: op must be one of {', '.join(TMA_OPS)}, got {op!r}")
    return name


def make_tma_atom(op, gmem, smem_layout, cta_tiler, multicast=1, value_type=None):
    """The TMA copy atom that moves `cta_tiler`'s tiles of the global tensor `gmem` into (or, for
    SM90_TMA_STORE, out of) shared memory laid out as `smem_layout` (C++ make_tma_atom).

    op: SM90_TMA_LOAD, SM90_TMA_LOAD_MULTICAST or SM90_TMA_STORE.
    gmem: a Tensor over a NumPy array, or a Layout (its shape and strides in elements; dyn values as C++'s
      run-time ints) with `value_type` ("half_t", "bfloat16_t", "float", ... or NumPy's names).
    smem_layout: one tile in shared memory, e.g. tile_to_smem(Layout_K_SW128_Atom("half_t"), (128, 64)).
    cta_tiler: the tile of the global tensor one CTA moves (a shape or a tiler), e.g. (128, 64).
    multicast: the CTAs (1..16) that share each tile: each loads box / multicast and multicasts it.

    Post: atom.box is the tensor map's boxDim; size(smem_layout) == atom.num_tma * prod(atom.tile_box).
    """
    what = "make_tma_atom"
    op = _op(op, what)
    if not is_int(multicast) or not 1 <= multicast <= 16:
        raise ValueError(f"{what}: multicast must be an int in 1..16 (the CTAs of a cluster), got {multicast!r}")
    glayout, value_type = _gmem(gmem, value_type, what)
    bits = numeric(value_type).bits
    swizzle, inner = _smem(smem_layout, bits, what)
    _swizzle_mode(swizzle, what)
    cta_v_map = composition(make_identity_layout(glayout.shape), cta_tiler)
    tma_gbasis = _tma_gbasis(glayout, inner, cta_v_map, what)
    dims, strides = _gmem_dims(glayout.shape, glayout.stride, tma_gbasis)
    box = _split_box([int(size(tma_gbasis, i)) for i in range(rank(tma_gbasis))], multicast, what)
    _check_map(dims, strides, box, bits, swizzle, what)
    g_stride = _g_stride(glayout, tma_gbasis, [s * bits // 8 for s in strides], bits)
    one = upcast(Layout((1, size(tma_gbasis) * bits)), bits)          # (thread, value) of one instruction
    return TMA_Atom(op, value_type, Layout(1), one, one, one, glayout, smem_layout, tma_gbasis, g_stride,
                    swizzle, int(multicast), box, dims, strides)


def make_tma_copy(op, gmem, smem_layout, cta_tiler=None, multicast=1, value_type=None):
    """The TMA atom as a TiledCopy over the CTA's tile (C++ make_tma_copy): 'threads' are the multicast
    CTAs, each owning its slice of every box; values run through the tile one box after another.
    cta_tiler defaults to the shared layout's shape (C++'s product_each(shape(slayout))).
    """
    if cta_tiler is None:
        if not isinstance(smem_layout, (Layout, ComposedLayout)):
            raise TypeError(f"make_tma_copy: the shared layout must be a Layout or a swizzled layout, got "
                            f"{quote(smem_layout)}")
        cta_tiler = product_each(smem_layout.shape)
    atom = make_tma_atom(op, gmem, smem_layout, cta_tiler, multicast, value_type)
    cta_v_map = composition(make_identity_layout(atom.gmem_layout.shape), cta_tiler)
    n = size(atom.tma_gbasis)
    inv = right_inverse(_smem(smem_layout, atom.bits, "make_tma_copy")[1])
    layout_V = tile_to_shape(make_layout(composition(inv, n)), size(cta_v_map))
    layout_t = Layout(multicast, n // multicast)
    layout_T = composition(inv, composition(layout_t, Layout(multicast)))
    return TiledCopy(atom, make_layout(layout_T, layout_V), product_each(cta_v_map.shape))


# ---- partitions -----------------------------------------------------------------------------------------
def _inner(layout):
    """A layout without its swizzle (C++ get_nonswizzle_portion)."""
    return layout.layout_b if isinstance(layout, ComposedLayout) else layout


def _domain_offset(coord, tensor):
    """C++ domain_offset(coord, tensor): the same layout, the start moved to coordinate coord; a swizzled
    layout keeps its swizzle on the moved start (C++ keeps it in the smem pointer)."""
    return tensor.view(tensor.layout, _inner(tensor.layout)(coord))


def tma_partition(atom, cta_coord, cta_layout, smem, gmem):
    """Cut a shared tensor and a TMA coordinate tensor, both (tile, rest...), into one box per TMA
    instruction (C++ cute::tma_partition): returns (gmem part, smem part), each ((TMA, TMA_Iter), rest...).

    Element ((0, i), r...) of the gmem part is the TMA coordinate (innermost first) of instruction i's box
    in the tile at r; of the smem part, the start of its destination. cta_layout maps the CTA's coordinate
    in the multicast group to its rank (Layout(1) without multicast); that CTA's part starts at its slice.
    gmem: atom.get_tma_tensor(shape), tiled (local_tile), the tile's modes grouped into mode 0.
    smem: a Tensor, or a layout (taken as the tensor of its own element offsets from 0), tile in mode 0.
    """
    what = "tma_partition"
    if not isinstance(atom, TMA_Atom):
        raise TypeError(f"{what}: expected a TMA_Atom (make_tma_atom), got {quote(atom)}")
    if not isinstance(gmem, Tensor) or not gmem.counts:
        raise TypeError(f"{what}: gmem must be a TMA coordinate tensor (atom.get_tma_tensor), got {quote(gmem)}")
    if isinstance(smem, (Layout, ComposedLayout)):
        smem = Tensor(ArithmeticTupleIterator(0), smem)
    if not isinstance(smem, Tensor):
        raise TypeError(f"{what}: smem must be a Tensor or a layout, got {quote(smem)}")
    if not isinstance(cta_layout, Layout):
        raise TypeError(f"{what}: cta_layout must be a Layout (CTA coordinate -> multicast rank), got "
                        f"{quote(cta_layout)}")
    if size(smem.layout, 0) != size(gmem.layout, 0):
        raise ValueError(f"{what}: size<0>(stensor) == size<0>(gtensor) fails: {size(smem.layout, 0)} vs "
                         f"{size(gmem.layout, 0)} (group the tile's modes into mode 0: group(layout, 0, 2))")
    inv = right_inverse(_inner(get(smem.layout, 0)))
    layout_v = tile_to_shape(make_layout(inv), size(smem.layout, 0))
    n = atom.num_val_src
    layout_V = logical_divide(layout_v, Layout(n))                   # (TMA, TMA_Iter)
    parts = []
    try:
        cta_layout(cta_coord)
    except (ValueError, TypeError, IndexError):
        raise ValueError(f"{what}: cta_coord {quote(cta_coord, fmt)} is not a coordinate of the multicast "
                         f"layout {cta_layout}") from None
    offset = crd2idx(cta_coord, cta_layout.shape, cta_layout.stride) * (n // cosize(cta_layout))
    for t in (gmem, smem):
        r = rank(t.layout)
        v = coalesce(composition(_inner(t.layout), (layout_V,) + (_,) * (r - 1)), ((1, 1),))
        v = t.layout.with_inner(v) if isinstance(t.layout, ComposedLayout) else v
        parts.append(_domain_offset(((offset, 0),) + (0,) * (r - 1), t.view(v)))
    return tuple(parts)


# ---- the tensor map -------------------------------------------------------------------------------------
def _enum(x, names, what, kind):
    if isinstance(x, str) and x in names:
        return names[x]
    if is_int(x) and x in names.values():
        return int(x)
    raise ValueError(f"{what}: {kind} must be one of {', '.join(names)} (or its enum value), got {x!r}")


def tensor_map_params(atom, shape=None, strides_bytes=None, l2_promotion="128B", oob_fill="none"):
    """Everything cuTensorMapEncodeTiled needs besides the map and the global address (which must be 16-byte
    aligned), for the atom's global tensor or for another of the same modes: `shape` (as the global
    layout's shape) and `strides_bytes` (its strides in bytes). C++ CuTe asks for L2 promotion 128B and no
    NaN fill; both can be chosen. Raises ValueError for a map C++ or the driver refuses.

    Post: the result's fields are ints and tuples of ints, innermost dimension first (TensorMapParams).
    """
    what = "tensor_map_params"
    if not isinstance(atom, TMA_Atom):
        raise TypeError(f"{what}: expected a TMA_Atom (make_tma_atom), got {quote(atom)}")
    dims, strides = atom.dims, atom.strides
    if shape is not None or strides_bytes is not None:
        if shape is None or strides_bytes is None:
            raise ValueError(f"{what}: give both shape and strides_bytes, or neither")
        g = atom.gmem_layout
        if not (congruent(shape, g.shape) and congruent(strides_bytes, g.stride)):
            raise ValueError(f"{what}: shape {quote(shape, fmt)} and strides {quote(strides_bytes, fmt)} must "
                             f"have the modes of the atom's global tensor {g}")
        nbytes = atom.bits // 8
        for s in flatten(wrap(strides_bytes)):
            if not is_int(s) or s % nbytes:
                raise ValueError(f"{what}: stride {s} bytes is not a whole number of {atom.value_type} elements")
        elems = tuple(s // nbytes for s in flatten(wrap(strides_bytes)))
        stride = _unflatten(elems, strides_bytes)
        dims, strides = _gmem_dims(shape, stride, atom.tma_gbasis)
        _check_map(dims, strides, atom.box, atom.bits, atom.swizzle, what)
    l2 = _enum(l2_promotion, L2_PROMOTIONS, what, "l2_promotion")
    oob = _enum(oob_fill, OOB_FILLS, what, "oob_fill")
    if oob and atom.data_type not in _FLOAT_TYPES:
        raise ValueError(f"{what}: the NaN fill needs a floating-point type, not {atom.value_type} (driver)")
    r = len(dims)
    return TensorMapParams(atom.data_type, r, dims, tuple(s * atom.bits // 8 for s in strides[1:]), atom.box,
                           (1,) * r, 0, atom.swizzle_mode, l2, oob)


def _unflatten(values, like):
    it = iter(values)

    def walk(t):
        return tuple(walk(x) for x in t) if is_tuple(t) else next(it)
    return walk(like)


# ---- clusters -------------------------------------------------------------------------------------------
def multicast_mask(cluster_layout, cta_coord, mode):
    """The 16-bit ctaMask of a multicast TMA: the CTAs of the cluster whose coordinates equal cta_coord's
    except in `mode` (an int or a tuple of modes), i.e. those that receive the same tile (C++
    create_tma_multicast_mask<mode>(cluster_layout, cta_coord)). cluster_layout maps a CTA's
    coordinate in the cluster to its rank: at most 16 CTAs, ranks 0..15, the most a cluster has and a
    ctaMask names (PTX cp.async.bulk.tensor; C++ computes the mask in a uint16_t and would cut it).

    Example: a 2x1 cluster, Layout((2, 1)): B's tile is shared along M (mode 0): multicast_mask(L, (m, 0), 0)
    == 0b11; A's along N (mode 1): 0b01 << m.
    """
    what = "multicast_mask"
    if not isinstance(cluster_layout, Layout):
        raise TypeError(f"{what}: cluster_layout must be a Layout (CTA coordinate -> rank), got "
                        f"{quote(cluster_layout)}")
    if size(cluster_layout) > 16:
        raise ValueError(f"{what}: the cluster {cluster_layout} has {size(cluster_layout)} CTAs; a cluster has at "
                         "most 16, the bits of a ctaMask")
    ranks = [cluster_layout(i) for i in range(size(cluster_layout))]
    if not all(0 <= r < 16 for r in ranks):
        raise ValueError(f"{what}: the cluster {cluster_layout} gives ranks {min(ranks)}..{max(ranks)}; a ctaMask "
                         "names ranks 0..15")
    if not is_tuple(cta_coord) or len(cta_coord) != rank(cluster_layout):
        raise ValueError(f"{what}: cta_coord must be a tuple of {rank(cluster_layout)} coordinates, got "
                         f"{quote(cta_coord, fmt)}")
    modes = mode if is_tuple(mode) else (mode,)
    for m in modes:
        if not is_int(m) or not 0 <= m < len(cta_coord):
            raise ValueError(f"{what}: mode {m!r} is not a mode of the cluster layout {cluster_layout}")
    coord = tuple(_ if i in modes else c for i, c in enumerate(cta_coord))
    try:
        sub, elected = slice_and_offset(coord, cluster_layout)
    except (ValueError, TypeError, IndexError):
        raise ValueError(f"{what}: cta_coord {quote(cta_coord)} is not a coordinate of the cluster "
                         f"{cluster_layout}") from None
    ranks = sorted({int(sub(i)) + int(elected) for i in range(size(sub))})
    if ranks[0] < 0 or ranks[-1] > 15:          # a coordinate past the cluster (C++ would cut the mask)
        raise ValueError(f"{what}: the CTAs of cta_coord {quote(cta_coord)} in the cluster {cluster_layout} have "
                         f"ranks {ranks[0]}..{ranks[-1]}; a ctaMask names ranks 0..15")
    return sum(1 << r for r in ranks)
