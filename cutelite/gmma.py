"""Hopper's warpgroup MMA (GMMA, PTX `wgmma`): its atoms, its shared-memory layouts, its descriptors.

A GMMA atom is one `wgmma.mma_async` instruction, issued by a *warpgroup* (4 warps, 128 threads) for a
64 x N x K product: K = 16 for 16-bit inputs, 32 for 8-bit floats (e4m3, e5m2), 32 bytes of each row either
way. It differs from the warp-level atoms of atoms.py in three ways:
  * ThrID is `_128:_1`: the 128 threads of the warpgroup;
  * A and B of an `_SS` atom live in shared memory and are named by a 64-bit *descriptor*, not held by
    threads: their TV layouts say "every thread sees the whole tile", (_128,(M,K)):(_0,(_1,M));
    an `_RS` atom takes A from registers (laid out like C, two halves or four bytes per register);
  * the accumulator C (and D) is spread over the 128 threads as four m16 slabs, one per warp.
8-bit inputs must be K-major (PTX ISA, wgmma: the transpose is for .f16/.bf16 operands only); C++ names
those atoms ..._TN and its op selectors refuse an MN major (cute/arch/mma_sm90.hpp).

The shared-memory layouts GMMA reads are fixed "canonical" forms: core matrices of 8 rows x 16 bytes,
either packed (INTERLEAVE) or swizzled with 32-, 64- or 128-byte XOR patterns. `Layout_K_SW128_Atom(T)`
and its siblings are the smallest such layouts; tile them to a whole tile with `tile_to_smem`. A
descriptor (`make_gmma_desc`) reads the strides of a tile's canonical form back out: start address,
leading- and stride-byte offsets (16-byte units), and the swizzle mode.

A TiledMMA of GMMA atoms partitions a shared-memory tensor (`make_tensor(array, tile_to_smem(...))`) as C++
does, and its fragments of A (SS) and B are tensors of descriptors (`make_smem_desc_tensor`, C++'s
GMMA::smem_desc): one per k-block (and stage), the operand's whole 64 x 16 (N x 16) tile in each.

Post: str(atom), str(layout atom) and every descriptor are what C++ CuTe prints for them
(tests/fixtures/gmma_cpp.txt and gmma_fp8_cpp.txt, made by gen_gmma.sh and gen_gmma_fp8.sh there);
partitions, fragments and their descriptors are C++'s (tests/fixtures/gmma_partitions_cpp.txt,
gen_gmma_partitions.sh).
"""

import re
from dataclasses import dataclass, replace

from .atoms import Major, MMA_Atom
from .basis import Iterator
from .errors import quote
from .int_tuple import congruent, is_int, is_static, is_tuple, product_each, wrap
from .layout import Layout, LayoutLeft, get, logical_divide, rank, size, tile_to_shape, upcast, zipped_divide
from .layout import ComposedLayout
from .numeric import BFloat16, Float8E4M3FN, Float8E5M2, Float16, Float32, numeric
from .swizzle import Swizzle
from .tensor import Tensor

__all__ = ["GMMA_Atom", "GMMA_ATOMS", "make_gmma_atom", "GmmaSmemLayout", "make_gmma_layout_atom",
           "Layout_K_INTER_Atom", "Layout_K_SW32_Atom", "Layout_K_SW64_Atom", "Layout_K_SW128_Atom",
           "Layout_MN_INTER_Atom", "Layout_MN_SW32_Atom", "Layout_MN_SW64_Atom", "Layout_MN_SW128_Atom",
           "tile_to_smem", "GmmaDescriptor", "make_gmma_desc", "gmma_desc_blocks", "LAYOUT_TYPES",
           "gmma_fragment_of", "DescriptorIterator", "make_smem_desc_tensor"]

K, MN = Major.K, Major.MN   # GMMA::Major: which mode of the (MN, K) operand tile is contiguous


# ---- the atoms ---------------------------------------------------------------------------------------------
def _clayout(n):
    """(T128, V) -> (m, n) of the 64 x n accumulator: warp w holds rows 16w..16w+15, lane (g, t) = (lane//4,
    lane%4) holds rows g and g+8, columns 2t, 2t+1 of every 8-column block (v = (col bit, row half, block))."""
    return Layout(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))


def _alayout_rs(bits):
    """(T128, V) -> (m, k) of A in registers, 64 x k with k = 256 / bits (16-bit: 64 x 16; 8-bit: 64 x 32):
    laid out as C, each 32-bit register holding 32 / bits neighbours along k (C++ GMMA::ALayout_64x16,
    ALayout_64x32)."""
    per_reg, k = 32 // bits, 256 // bits
    return Layout(((4, 8, 4), (per_reg, 2, 2)), ((64 * per_reg, 1, 16), (64, 8, 32 * k)))


ALAYOUT_64x16_RS = _alayout_rs(16)   # A in registers, 16-bit


def _smem_operand(m, k):
    """An operand in shared memory: each of the 128 threads 'holds' the whole m x k tile (stride 0)."""
    return Layout((128, (m, k)), (0, (1, m)))


@dataclass(frozen=True)
class GMMA_Atom(MMA_Atom):
    """An MMA_Atom for one wgmma instruction, plus where A comes from ("SS": shared, "RS": registers) and
    the majors of A and B (they change the descriptors, not the TV layouts)."""
    source: str = "SS"
    major_a: Major = K
    major_b: Major = K

    def __repr__(self):
        if self.name.endswith("_TN"):   # K-major only (8-bit inputs): C++ has no majors to name
            return f"MMA_Atom<{self.name}>"
        return f"MMA_Atom<{self.name}<GMMA::Major::{self.major_a},GMMA::Major::{self.major_b}>>"


# wgmma's (accumulator, A, B) types, by the letters of CuTe's atom names: F32F16F16, F32BF16BF16, F16F16F16,
# and the 8-bit floats, any pair of e4m3 and e5m2 with an F32 or F16 accumulator (F32E4M3E5M2, ...)
_FP8 = (Float8E4M3FN, Float8E5M2)
_TYPES = {c.letters + a.letters + b.letters: (c, a, b)
          for c, a, b in ((Float32, Float16, Float16), (Float32, BFloat16, BFloat16), (Float16, Float16, Float16),
                          *((c, a, b) for c in (Float32, Float16) for a in _FP8 for b in _FP8))}
GMMA_N = tuple(range(8, 257, 8))   # wgmma's N: every multiple of 8 up to 256 (PTX ISA, wgmma's shapes)


def _gmma_atom(n, types, source, major_a=K, major_b=K):
    """The atom of one wgmma: 64 x n x k with k = 256 / (bits of A), 16 for 16-bit inputs, 32 for 8-bit.
    wgmma transposes 16-bit operands only: other inputs are K-major only (C++ names their atoms ..._TN and
    refuses another major)."""
    if n not in GMMA_N:
        raise ValueError(f"make_gmma_atom: N = {n} is not a wgmma N (a multiple of 8, 8..256)")
    if types not in _TYPES:
        raise ValueError(f"make_gmma_atom: unknown types {types!r}; known: {', '.join(_TYPES)}")
    if source not in ("SS", "RS"):
        raise ValueError(f"make_gmma_atom: source must be SS or RS, got {source!r}")
    for m in (major_a, major_b):
        if m not in (K, MN):
            raise ValueError(f"make_gmma_atom: a major must be K or MN, got {m!r}")
    acc, ta, tb = _TYPES[types]
    k = 256 // ta.bits
    k_major_only = ta.bits != 16
    name = f"SM90_64x{n}x{k}_{types}_{source}" + ("_TN" if k_major_only else "")
    if k_major_only:   # cute/arch/mma_sm90.hpp, ss_op_selector and rs_op_selector
        for operand, major in (("A", major_a), ("B", major_b)):
            if major != K:
                raise ValueError(f"make_gmma_atom: {name}: Major{operand} must be GMMA::Major::K for this config. "
                                 f"({ta.bits}-bit wgmma reads both operands K-major; got GMMA::Major::{major})")
    if source == "RS" and major_a != K:
        raise ValueError("make_gmma_atom: Register source operand A must have K major layout.")
    a = _smem_operand(64, k) if source == "SS" else _alayout_rs(ta.bits)
    return GMMA_Atom(name, f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{acc.ptx}.{ta.ptx}.{tb.ptx}",
                     (acc.name, ta.name, tb.name, acc.name), Layout(128, 1), (64, n, k), a, _smem_operand(n, k),
                     _clayout(n), source, Major(major_a), Major(major_b))


GMMA_ATOMS = {a.name: a for a in (_gmma_atom(n, t, s) for t in _TYPES for n in GMMA_N for s in ("SS", "RS"))}

_ATOM_RE = re.compile(r"^(?:cute::)?(?:SM90::)?(?:GMMA::)?(?:SM90_|MMA_)64x(\d+)x(\d+)_([A-Z0-9]+)_(SS|RS)(_TN)?"
                      r"(?:<(.*)>)?$")


def make_gmma_atom(name):
    """The GMMA atom named `name`: our short name "SM90_64x128x16_F32F16F16_SS" or C++'s spelling
    "SM90::GMMA::MMA_64x128x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::MN>" (majors default to K).
    8-bit inputs: "SM90_64x128x32_F32E4M3E4M3_SS_TN", as C++ names it (K-major only); a name with
    majors, "SM90_64x128x32_F32E4M3E4M3_SS<GMMA::Major::K, GMMA::Major::K>", is that atom, and an MN major
    is refused as C++'s op selectors refuse it."""
    if not isinstance(name, str):
        raise TypeError(f"make_gmma_atom: expected an atom's name (a str), got {name!r}")
    m = _ATOM_RE.match("".join(name.split()))
    if not m:
        raise ValueError(f"make_gmma_atom: {name!r} is not an SM90 GMMA atom (e.g. SM90_64x128x16_F32F16F16_SS)")
    n, k, types, source, tn, args = m.groups()
    if types in _TYPES:
        bits = _TYPES[types][1].bits
        if int(k) != 256 // bits or (tn and bits == 16):
            raise ValueError(f"make_gmma_atom: {name!r}: {types} takes k = {256 // bits}"
                             + (" and no _TN suffix (its majors are template arguments)" if bits == 16 else "")
                             + f", e.g. {_gmma_atom(int(n), types, source).name}")
    majors = [K, K]
    if args:
        args = args.split(",")
        if len(args) != 2:
            raise ValueError(f"make_gmma_atom: expected two majors <GMMA::Major::K|MN, ...>, got {name!r}")
        for i, arg in enumerate(args):
            majors[i] = arg.split("::")[-1]
    return _gmma_atom(int(n), types, source, *majors)


def gmma_fragment_of(atom, operand, thread):
    """The elements thread `thread` (0..127 of the warpgroup) holds of operand "C" (D too) or, for an RS
    atom, "A": a list of (register, (row, col)) in register order, read from the atom's TV layout
    (column-major index into the 64 x N, or 64 x 16, tile).

    Post: the lists of the 128 threads cover every element of the tile exactly once.
    """
    if not isinstance(atom, GMMA_Atom):
        raise TypeError(f"gmma_fragment_of: expected a GMMA_Atom (make_gmma_atom), got {atom!r}")
    if not is_int(thread) or not 0 <= thread < 128:
        raise ValueError(f"gmma_fragment_of: thread must be an int in 0..127, got {thread!r}")
    if operand in ("C", "D"):
        tv, rows = atom.LayoutC_TV, atom.Shape_MNK[0]
    elif operand == "A" and atom.source == "RS":
        tv, rows = atom.LayoutA_TV, atom.Shape_MNK[0]
    else:
        raise ValueError(f"gmma_fragment_of: {atom.name} has no register fragment for operand {operand!r} "
                         "(A and B of an SS atom are in shared memory)")
    return [(v, (tv(thread, v) % rows, tv(thread, v) // rows)) for v in range(size(tv, 1))]


# ---- the shared-memory layout atoms ------------------------------------------------------------------------
_SWIZZLE_BITS = {"INTER": 0, "SW32": 1, "SW64": 2, "SW128": 3}


def _bits_of(t):
    """The bits of an element type, given by name ("half_t") or as a number of bits."""
    if is_int(t):
        if not (1 <= t <= 128 and t & (t - 1) == 0):
            raise ValueError(f"GMMA layout atom: element bits must be a power of two from 1 to 128, got {t}")
        return int(t)
    if not isinstance(t, str):
        raise ValueError(f"GMMA layout atom: an element type is a name (such as 'half_t') or bits, got {quote(t)}")
    return numeric(t, "GMMA layout atom").bits


class GmmaSmemLayout(ComposedLayout):
    """`Sw<B,4,3> o smem_ptr[bits b](unset) o L`: a shared-memory layout of `bits`-bit elements whose swizzle
    acts on *byte* addresses (C++'s ComposedLayout with an smem_ptr_flag). L maps (mn, k) to an element
    index; the swizzle is applied once the layout meets a pointer: make_tensor(array, it) is a shared-memory
    Tensor with layout L and the swizzle on byte addresses (`element_swizzle` gives it in elements).

    The algebra (get, logical_divide, upcast, ...) acts on L and keeps the swizzle and the flag; note that
    upcast/downcast keep `bits` here (C++ rescales the flag): recast through `make_gmma_layout_atom`.
    """

    __slots__ = ("bits",)

    def __init__(self, swizzle, bits, layout_b):
        super().__init__(swizzle, 0, layout_b)
        self.bits = bits

    def with_inner(self, layout_b, offset=None):
        if not isinstance(layout_b, Layout):
            return layout_b
        if offset:   # a slice that moved the pointer: no longer an unset pointer
            return ComposedLayout(self.element_swizzle(), offset, layout_b)
        return GmmaSmemLayout(self.layout_a, self.bits, layout_b)

    def element_swizzle(self):
        """The swizzle in units of elements: Sw<B, 4 - log2(bytes per element), S> (C++'s
        as_position_independent_swizzle_layout). Raises when the element is wider than 16 bytes."""
        shift = (self.bits // 8).bit_length() - 1
        sw = self.layout_a
        if sw.base < shift:
            raise ValueError(f"element_swizzle: {sw} cannot be recast to {self.bits}-bit elements")
        return Swizzle(sw.bits, sw.base - shift, sw.shift)

    def element_layout(self):
        """The same tile as offsets in elements (`element_swizzle() o L`): what a kernel indexes a typed
        shared array with, when it writes the tile itself (cp.async) instead of the TMA.

        Post: element_layout()(c) * bits / 8 == the byte-swizzled address of coordinate c from a 0 base."""
        return ComposedLayout(self.element_swizzle(), 0, self.layout_b)

    def __eq__(self, other):
        return isinstance(other, GmmaSmemLayout) and self.bits == other.bits and super().__eq__(other)

    def __hash__(self):
        return hash((self.layout_a, self.bits, self.layout_b))

    def __str__(self):
        return f"{self.layout_a} o smem_ptr[{self.bits}b](unset) o {self.layout_b}"


def _layout_atom(major, swz, t):
    """The GMMA layout atom in bits, upcast to elements of type t (C++: upcast<sizeof_bits<T>>)."""
    b = _SWIZZLE_BITS[swz]
    width = 128 << b                                 # bits in one swizzled row: 128, 256, 512, 1024
    bits_layout = Layout((8, width), (width, 1)) if major == K else Layout((width, 8), (1, width))
    bits = _bits_of(t)
    return GmmaSmemLayout(Swizzle(b, 4, 3), bits, upcast(bits_layout, bits))


def Layout_K_INTER_Atom(t): return _layout_atom(K, "INTER", t)      # noqa: E704  (C++'s names, one per atom)
def Layout_K_SW32_Atom(t): return _layout_atom(K, "SW32", t)        # noqa: E704
def Layout_K_SW64_Atom(t): return _layout_atom(K, "SW64", t)        # noqa: E704
def Layout_K_SW128_Atom(t): return _layout_atom(K, "SW128", t)      # noqa: E704
def Layout_MN_INTER_Atom(t): return _layout_atom(MN, "INTER", t)    # noqa: E704
def Layout_MN_SW32_Atom(t): return _layout_atom(MN, "SW32", t)      # noqa: E704
def Layout_MN_SW64_Atom(t): return _layout_atom(MN, "SW64", t)      # noqa: E704
def Layout_MN_SW128_Atom(t): return _layout_atom(MN, "SW128", t)    # noqa: E704


_LAYOUT_RE = re.compile(r"^(?:cute::)?(?:SM90::)?(?:GMMA::)?Layout_(K|MN)_(INTER|SW32|SW64|SW128)_Atom<(\w+)>$")


def make_gmma_layout_atom(name):
    """`make_gmma_layout_atom("GMMA::Layout_K_SW128_Atom<half_t>")` == Layout_K_SW128_Atom("half_t")."""
    m = _LAYOUT_RE.match("".join(str(name).split()).replace("cutlass::", ""))
    if not m:
        raise ValueError(f"make_gmma_layout_atom: {name!r} is not a GMMA layout atom "
                         "(e.g. GMMA::Layout_K_SW128_Atom<half_t>)")
    return _layout_atom(m.group(1), m.group(2), m.group(3))


def tile_to_smem(atom, shape, order=LayoutLeft):
    """tile_to_shape for a swizzled atom: repeat the inner layout, keep swizzle and flag (as C++ does).

    Post: result.layout_a == atom.layout_a; result.layout_b == tile_to_shape(atom.layout_b, shape, order).
    """
    if not hasattr(atom, "layout_b"):
        return tile_to_shape(atom, shape, order)
    return atom.with_inner(tile_to_shape(atom.layout_b, shape, order))


# ---- the descriptor ------------------------------------------------------------------------------------------
LAYOUT_TYPES = {0: "INTERLEAVE", 1: "B128", 2: "B64", 3: "B32"}   # the descriptor's 2-bit swizzle mode
_TYPE_OF_SWIZZLE = {0: 0, 1: 3, 2: 2, 3: 1}                        # Sw<B,4,3> -> layout type


_DESC_FIELDS = {"start_address": 14, "leading_byte_offset": 14, "stride_byte_offset": 14, "base_offset": 3,
                "layout_type": 2}   # each field's bits (cute/arch/mma_sm90_desc.hpp's bitfield)


@dataclass(frozen=True)
class GmmaDescriptor:
    """The 64-bit shared-memory matrix descriptor wgmma reads (PTX ISA, "Matrix Descriptor Format").

    Fields in 16-byte units: start_address (bits 0-13), leading_byte_offset (16-29), stride_byte_offset
    (32-45); base_offset (49-51); layout_type (62-63: 0 none, 1 128B, 2 64B, 3 32B swizzle).
    Each field must fit its bits (C++'s bitfield would cut it, and the rest would run into the next field);
    PTX reads the base offset for the swizzled modes only, so without a swizzle it must be 0.
    """
    start_address: int
    leading_byte_offset: int
    stride_byte_offset: int
    base_offset: int
    layout_type: int

    def __post_init__(self):
        for name, bits in _DESC_FIELDS.items():
            value = getattr(self, name)
            if not is_int(value) or not 0 <= value < 1 << bits:
                raise ValueError(f"GmmaDescriptor: {name} {quote(value)} does not fit the descriptor's "
                                 f"{bits}-bit field (0..{(1 << bits) - 1})")
        if self.base_offset and self.layout_type == 0:
            raise ValueError(f"GmmaDescriptor: base_offset {self.base_offset} with no swizzle (INTERLEAVE): PTX "
                             "reads the base offset for the swizzled modes only")

    @property
    def desc(self):
        """The descriptor as one 64-bit integer (the `l` operand of wgmma)."""
        return (self.start_address | self.leading_byte_offset << 16 | self.stride_byte_offset << 32
                | self.base_offset << 49 | self.layout_type << 62)

    def __str__(self):
        lbo, sbo = self.leading_byte_offset, self.stride_byte_offset
        return (f"GmmaDescriptor: 0x{self.desc:016x}\n"
                f"  start_addr :  0x{self.start_address:04x}\n"
                f"  leading_off:  0x{lbo:04x} ({lbo})\n"
                f"  stride_off :  0x{sbo:04x} ({sbo})\n"
                f"  base_offset:  0x{self.base_offset:01x}\n"
                f"  layout_type:  0x{self.layout_type:01x} ({LAYOUT_TYPES[self.layout_type]})\n")


def _parts(layout, element_bits, what):
    """(byte swizzle, element bits, inner layout) of a GMMA smem layout, a swizzled layout or a plain one,
    or of a shared-memory Tensor (its layout, its swizzle, its element type)."""
    if element_bits is not None and (not is_int(element_bits) or not 0 < element_bits <= 128
                                     or 128 % element_bits):
        raise ValueError(f"{what}: element_bits must be a power of two from 1 to 128 (an element within 16 "
                         f"bytes), got {quote(element_bits)}")
    if isinstance(layout, Tensor):
        if layout.counts or layout.swizzle is None:
            raise TypeError(f"{what}: GMMA Descriptors can only be constructed on smem: {layout} is not a "
                            "shared-memory tensor (make_tensor(array, tile_to_smem(...)))")
        bits, swizzle, inner = layout.engine.itemsize * 8, layout.swizzle, layout.layout
    elif isinstance(layout, GmmaSmemLayout):
        bits, swizzle, inner = layout.bits, layout.layout_a, layout.layout_b
    else:
        bits = None
    if bits is not None:
        if element_bits is not None and element_bits != bits:
            raise ValueError(f"{what}: element_bits {element_bits} differs from the {bits}-bit elements of "
                             f"{quote(layout, str)}")
        return swizzle, bits, inner
    if element_bits is None:
        raise ValueError(f"{what}: element_bits is needed for {layout} (only a GmmaSmemLayout carries it)")
    if isinstance(layout, ComposedLayout):
        if layout.offset:
            raise ValueError(f"{what}: {layout} has a non-zero swizzle offset; pass the offset as the address")
        return layout.layout_a, element_bits, layout.layout_b
    if isinstance(layout, Layout):
        return Swizzle(0, 4, 3), element_bits, layout
    raise TypeError(f"{what}: expected a Layout or a swizzled layout, got {layout!r}")


def _field(value, name, what):
    if not is_int(value) or not 0 <= value < (1 << 14):
        raise ValueError(f"{what}: {name} {value} (16-byte units) does not fit the descriptor's 14-bit field")
    return int(value)


def make_gmma_desc(major, layout, address=0, element_bits=None, base_offset=0):
    """The descriptor of an (MN, K) operand tile in shared memory whose first element is at byte `address`.

    `layout` is a GmmaSmemLayout (a layout atom tiled with tile_to_smem, or a slice of one), a swizzled
    ComposedLayout Sw<B,4,3> o _0 o L (swizzle on bytes) or a plain Layout (no swizzle), with
    `element_bits` for the latter two; or a rank-2 shared-memory Tensor, whose first element is then
    `offset` elements past byte `address` (the address of its array). The tile is recast to 16-byte
    units and divided into its canonical form (C++ make_gmma_desc):
      K-major:  ((8, m), 2) : ((W, SBO), LBO)        (LBO is 1 unless INTERLEAVE)
      MN-major: ((W, m), (8, k)) : ((1, LBO), (W, SBO))  (INTERLEAVE: ((1,m),(8,k)):((.., SBO),(1, LBO)))
    with W = 1, 2, 4, 8 for INTERLEAVE, 32B, 64B, 128B.
    `base_offset` is the descriptor's bits 49-51, 0..7 (C++ always writes 0): PTX's (address of the swizzle
    pattern's start >> 7) & 7 for a tile that does not start on the pattern's period (pipeline.desc_base_offset);
    PTX reads it for the swizzled modes only, so a tile without a swizzle takes 0.
    Raises ValueError, with C++'s static_assert text, for a tile no descriptor describes; also (where C++
    would silently truncate) for an address or offset that does not fit its field.
    """
    what = "make_gmma_desc"
    if major not in (K, MN):
        raise ValueError(f"{what}: major must be 'K' or 'MN', got {quote(major)}")
    if not is_int(base_offset) or not 0 <= base_offset <= 7:
        raise ValueError(f"{what}: base_offset {quote(base_offset)} must be an int in 0..7 (the descriptor's "
                         "3-bit field, bits 49-51)")
    sw, bits, inner = _parts(layout, element_bits, what)
    if isinstance(layout, Tensor) and is_int(address):
        address += layout.offset * bits // 8
    if rank(inner) != 2:
        raise ValueError(f"{what}: GMMA Descriptors can only be constructed on rank-2 tensors. (got {inner})")
    if not (is_static(inner.shape) and is_static(inner.stride)):
        raise ValueError(f"{what}: {inner} must be static")
    if sw.base != 4 or sw.shift != 3 or not 0 <= sw.bits <= 3:
        raise ValueError(f"{what}: Unsupported layout swizzle ({sw}; GMMA reads Sw<0..3,4,3> on bytes)")
    if 128 % bits:
        raise ValueError(f"{what}: {bits}-bit elements do not divide 16 bytes")
    if not is_int(address) or address < 0 or address % 16:
        raise ValueError(f"{what}: address {address} must be a non-negative multiple of 16 bytes")
    layout_type = _TYPE_OF_SWIZZLE[sw.bits]
    if base_offset and layout_type == 0:
        raise ValueError(f"{what}: base_offset {base_offset} for a tile without a swizzle: PTX reads the base "
                         "offset for the swizzled modes only")
    w = 1 << sw.bits
    u128 = upcast(inner, 128 // bits)
    if major == K:
        if size(u128, 0) % 8:
            raise ValueError(f"{what}: Not a canonical GMMA_K Layout: Expected MN-size multiple of 8. ({inner})")
        if size(u128, 1) not in (2, 4):
            raise ValueError(f"{what}: Not a canonical GMMA_K Layout: Expected K-size 2 for dense or 4 for sparse "
                             f"(in units of uint128_t). ({inner} is {u128} in 16-byte units)")
        canon = logical_divide(u128, (Layout(8, 1), Layout(2, 1)))
    else:
        if size(u128, 1) not in (256 // bits, 128 // bits, 512 // bits):
            raise ValueError(f"{what}: Not a canonical GMMA_MN Layout: Expected K-size 256/sizeof_bits<T> for "
                             f"dense or (128|512)/sizeof_bits<T> for sparse. ({inner})")
        canon = logical_divide(u128, (Layout(w, 1), Layout(8, 1)))
    kind = "GMMA_K" if major == K else "GMMA_MN"
    if not congruent(canon.shape, ((1, 1), (1, 1))):
        raise ValueError(f"{what}: Not a canonical {kind} Layout: Expected profile failure. "
                         f"({canon} in 16-byte units)")
    (s00, s01), (s10, s11) = canon.stride
    inter = layout_type == 0
    if major == K:
        ok = s00 == w and (inter or s10 == 1)
        sbo, lbo = s01, s10
    else:
        ok = (inter or s00 == 1) and s10 == w
        sbo, lbo = (s01, s11) if inter else (s11, s01)
    if not ok:
        raise ValueError(f"{what}: Not a canonical {kind} Layout: Expected stride failure. "
                         f"({canon} in 16-byte units; {LAYOUT_TYPES[layout_type]} needs W = {w})")
    return GmmaDescriptor(_field(address >> 4, "start address", what), _field(lbo, "leading byte offset", what),
                          _field(sbo, "stride byte offset", what), base_offset, layout_type)


def gmma_desc_blocks(major, smem_layout, tile, address=0, element_bits=None):
    """The descriptors of the tiles `tile` = (MN, K) along K of an smem layout (C++: make_gmma_desc of
    local_tile(smem, tile, (0, b)) for each b), the smem tensor starting at byte `address`.

    The tile must divide the layout's (MN, K) shape: a descriptor past its end would read other memory.

    Post: one GmmaDescriptor per K block; block b starts b * (its offset in elements) * bits / 8 bytes in.
    """
    sw, bits, inner = _parts(smem_layout, element_bits, "gmma_desc_blocks")
    if not is_int(address) or address < 0:
        raise ValueError(f"gmma_desc_blocks: address must be an int >= 0 (bytes), got {quote(address)}")
    shape = product_each(inner.shape)
    if not (is_tuple(tile) and len(tile) == len(shape) == 2 and all(is_int(t) and t > 0 for t in tile)):
        raise ValueError(f"gmma_desc_blocks: tile must be (MN, K), two positive ints, for the (MN, K) layout "
                         f"{inner}, got {quote(tile)}")
    if any(s % t for s, t in zip(shape, tile)):
        raise ValueError(f"gmma_desc_blocks: tile {quote(tile)} does not divide the layout's shape {shape}")
    z = zipped_divide(inner, tile)
    tile_layout, rest = get(z, 0), get(z, 1)
    out = []
    for b in range(size(rest, 1)):
        offset = rest(0, b) * bits // 8
        out.append(make_gmma_desc(major, GmmaSmemLayout(sw, bits, tile_layout), address + offset))
    return out


# ---- descriptors as a fragment -------------------------------------------------------------------------
class DescriptorIterator(Iterator):
    """C++ GMMA::DescriptorIterator: the engine of a descriptor tensor. Element i is `desc` with i added to
    its start address (16-byte units), so a tensor over it holds, at coordinate c, the descriptor of the
    tile that starts layout(c) x 16 bytes past desc's. (C++ adds i to the low 32 bits and lets a carry
    run on into the next fields; here a start address that leaves its 14 bits is a ValueError.)"""

    __slots__ = ("desc",)

    def __init__(self, desc):
        if not isinstance(desc, GmmaDescriptor):
            raise TypeError(f"DescriptorIterator: expected a GmmaDescriptor (make_gmma_desc), got {desc!r}")
        self.desc = desc

    def __add__(self, offset):
        if not is_int(offset):
            raise TypeError(f"DescriptorIterator: an offset must be an int (16-byte units), got {offset!r}")
        start = _field(self.desc.start_address + offset, "start address", "DescriptorIterator")
        return DescriptorIterator(replace(self.desc, start_address=start))

    def __getitem__(self, offset):
        return (self + offset).desc

    def __eq__(self, other):
        return isinstance(other, DescriptorIterator) and self.desc == other.desc

    def __hash__(self):
        return hash(self.desc)

    def __str__(self):
        return "GMMA::DescriptorIterator"

    def __repr__(self):
        return f"DescriptorIterator({self.desc.desc:#018x})"


def make_smem_desc_tensor(major, smem_tensor, address=0):
    """A partition of shared memory, (MMA, MMA_M|N, MMA_K, ...), as a tensor of descriptors (C++:
    make_tensor<GMMA::smem_desc<Major>>, what make_fragment_A/B return for GMMA): the descriptor of its
    mode-0 tile (make_gmma_desc), over the partition's layout recast to 16-byte units with mode 0 made
    _1:_0. `address` is the byte address of the tensor's array (0: add the run-time address >> 4 on the
    device).

    Post: result(0, k...).start_address == (address + byte offset of the tile at k...) >> 4, the other
          fields are make_gmma_desc's; str(result) == "GMMA::DescriptorIterator o " + C++'s layout.
    """
    what = "make_smem_desc_tensor"
    if major not in (K, MN):
        raise ValueError(f"{what}: major must be 'K' or 'MN', got {major!r}")
    if not isinstance(smem_tensor, Tensor) or smem_tensor.counts or smem_tensor.swizzle is None:
        raise TypeError(f"{what}: expected a shared-memory Tensor (make_tensor(array, tile_to_smem(...)), "
                        f"partitioned), got {smem_tensor!r} (C++: Expected SMEM Tensor to construct a GMMA Desc "
                        "Tensor)")
    layout = smem_tensor.layout
    desc = make_gmma_desc(major, smem_tensor.view(get(layout, 0)), address)
    u128 = upcast(layout, 128 // (smem_tensor.engine.itemsize * 8))
    shape, stride = wrap(u128.shape), wrap(u128.stride)
    return Tensor(DescriptorIterator(desc), Layout((1,) + tuple(shape[1:]), (0,) + tuple(stride[1:])))
