"""Copy atoms: one copy instruction described as CuTe describes it, by a thread layout and three
(thread, value) layouts.

A copy instruction moves bits. CuTe's traits say, for the threads that execute it together:
  * ThrID:  logical thread -> thread index (`_1:_0` for a one-thread copy, `_32:_1` for a warp's ldmatrix);
  * SrcLayout / DstLayout: (thread, bit) -> bit offset in the source / destination data the atom moves;
  * RefLayout: the (thread, bit) order that the other two are compared against (one of them).
A Copy_Atom fixes the element type T and recasts the three bit layouts to elements of T
(``upcast(layout, bits(T))``): those are ValLayoutSrc/Dst/Ref, what C++ prints.

Post: str(make_copy_atom(op, T)) is the text C++ CuTe prints for ``print(Copy_Atom<Op, T>{})``.
"""

import re
from dataclasses import dataclass

from .int_tuple import fmt
from .layout import Layout, size, upcast
from .numeric import CPP_NAMES, numeric

__all__ = ["Copy_Atom", "COPY_OPS", "make_copy_atom"]


# ---- the traits: (ThrID, SrcLayout, DstLayout, RefLayout) in bits, as the hardware moves them -----------
def _one_thread(src_bits, dst_bits):
    """A copy done by one thread: it moves src_bits from the source and dst_bits to the destination."""
    src = Layout((1, src_bits))
    return Layout(1), src, Layout((1, dst_bits)), src


def _ldsm(src, dst):
    """ldmatrix, a warp-wide copy from shared memory: each of 32 lanes gives one 128-bit row address
    (`src`); the destination registers are spread over the lanes as `dst` says. Ref is Dst."""
    return Layout(32), src, dst, dst


_LDSM = {
    # .x1/.x2/.x4: 8/16/32 lanes give row addresses (the others' are ignored: stride 0).
    "SM75_U32x1_LDSM_N": _ldsm(Layout(((8, 4), 128), ((128, 0), 1)), Layout((32, 32), (32, 1))),
    "SM75_U32x2_LDSM_N": _ldsm(Layout(((16, 2), 128), ((128, 0), 1)),
                               Layout((32, (32, 2)), (32, (1, 1024)))),
    "SM75_U32x4_LDSM_N": _ldsm(Layout((32, 128), (128, 1)), Layout((32, (32, 4)), (32, (1, 1024)))),
    # .trans: each lane receives 16-bit elements from 8 different rows.
    "SM75_U16x2_LDSM_T": _ldsm(Layout(((8, 4), 128), ((128, 0), 1)),
                               Layout(((4, 8), (16, 2)), ((256, 16), (1, 128)))),
    "SM75_U16x4_LDSM_T": _ldsm(Layout(((16, 2), 128), ((128, 0), 1)),
                               Layout(((4, 8), (16, 2, 2)), ((256, 16), (1, 128, 1024)))),
    "SM75_U16x8_LDSM_T": _ldsm(Layout((32, 128), (128, 1)),
                               Layout(((4, 8), (16, 2, 4)), ((256, 16), (1, 128, 1024)))),
}



def _stsm(ldsm):
    """stmatrix (SM90), ldmatrix run backwards: registers of 32 lanes (ldmatrix's destination) go to rows of
    shared memory (its source). Ref is Src."""
    thr, src, dst, _ = _LDSM[ldsm]
    return thr, dst, src, dst


def _warp_exchange(src, dst):
    """A warp-wide exchange of registers (movmatrix, shuffles): Ref is Src."""
    return Layout(32), src, dst, src


_WARP = dict(_LDSM)
_WARP.update({ldsm.replace("SM75", "SM90").replace("LDSM", "STSM"): _stsm(ldsm) for ldsm in _LDSM})
_WARP.update({
    # movmatrix.trans: an 8x8 matrix of 16-bit elements transposed across the warp's registers
    "SM75_U32x1_MOVM_T": (Layout(32), Layout((32, 32), (32, 1)), Layout((32, 32), (32, 1)),
                          Layout((32, 32), (32, 1))),
    # two 32-bit registers a lane, 2x2 blocks transposed with the lane at xor 1 / xor 4
    "SM50_Shuffle_U32_2x2Trans_XOR1": _warp_exchange(Layout((32, 64), (64, 1)),
                                                     Layout(((2, 16), (32, 2)), ((32, 128), (1, 64)))),
    "SM50_Shuffle_U32_2x2Trans_XOR4": _warp_exchange(Layout((32, 64), (64, 1)),
                                                     Layout(((4, 2, 4), (32, 2)), ((64, 32, 512), (1, 256)))),
})

# One-thread copies take their element type(s) as template arguments: Op<S> or Op<S, D>.
_TEMPLATED = ("UniversalCopy", "SM80_CP_ASYNC_CACHEALWAYS", "SM80_CP_ASYNC_CACHEGLOBAL",
              "SM80_CP_ASYNC_CACHEALWAYS_ZFILL", "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL")
# cp.async moves 4, 8 or 16 bytes (.cg: 16 only); the _ZFILL forms (zeros where a predicate is false) alike.
_CP_ASYNC_BITS = {"SM80_CP_ASYNC_CACHEALWAYS": (32, 64, 128), "SM80_CP_ASYNC_CACHEGLOBAL": (128,),
                  "SM80_CP_ASYNC_CACHEALWAYS_ZFILL": (32, 64, 128), "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL": (128,)}
# The auto-vectorizing copies: one thread, and the layouts (1,1):(0,0), as the copy algorithm picks the
# vector width itself (up to MaxVecBits, assuming that alignment). DefaultCopy assumes none (8 bits).
_VECTOR_BITS = (8, 16, 32, 64, 128)
_ALIASES_OF_AUTO = {"AutoVectorizingCopy": 128, "DefaultCopy": 8}

COPY_OPS = (tuple(f"{op}<T>" for op in _TEMPLATED) + ("AutoVectorizingCopyWithAssumedAlignment<N>",)
            + tuple(_ALIASES_OF_AUTO) + tuple(_WARP))


def _type_name(t, what):
    """The C++ name of an element type (cutelite.numeric) given by its C++ or its NumPy name."""
    if not isinstance(t, str):
        raise TypeError(f"make_copy_atom: {what} must be a C++ type name such as 'half_t', got {t!r}")
    name = t.strip().removeprefix("cute::")
    if name in CPP_NAMES:
        return name
    try:
        return numeric(name).cpp
    except ValueError:
        raise ValueError(f"make_copy_atom: unknown {what} {t!r}; known: {', '.join(CPP_NAMES)}") from None


def _traits(op):
    """(ThrID, SrcLayout, DstLayout, RefLayout) in bits for a copy op named as in C++."""
    if op in _WARP:
        return _WARP[op]
    auto = re.fullmatch(r"AutoVectorizingCopyWithAssumedAlignment\s*<\s*(\d+)\s*>", op)
    if auto or op in _ALIASES_OF_AUTO:
        bits = int(auto.group(1)) if auto else _ALIASES_OF_AUTO[op]
        if bits not in _VECTOR_BITS:
            raise ValueError(f"make_copy_atom: {op}: MaxVecBits must be one of {', '.join(map(str, _VECTOR_BITS))}"
                             f", got {bits}")
        none = Layout((1, 1), (0, 0))
        return Layout(1), none, none, none
    m = re.fullmatch(r"(\w+)\s*<\s*([\w:]+)\s*(?:,\s*([\w:]+)\s*)?>", op)
    if not m or m.group(1) not in _TEMPLATED:
        raise ValueError(f"make_copy_atom: unknown copy op {op!r}; known: {', '.join(COPY_OPS)} "
                         f"(T one of {', '.join(CPP_NAMES)})")
    base = m.group(1)
    src = _type_name(m.group(2), "source type")
    dst = _type_name(m.group(3), "destination type") if m.group(3) else src
    s_bits, d_bits = CPP_NAMES[src].bits, CPP_NAMES[dst].bits
    if base == "UniversalCopy" and min(s_bits, d_bits) < 8:
        raise ValueError(f"make_copy_atom: {op} copies whole bytes or more; {min(s_bits, d_bits)}-bit elements "
                         "are moved by a copy of the bytes holding them")
    if base in _CP_ASYNC_BITS and s_bits not in _CP_ASYNC_BITS[base]:
        raise ValueError(f"make_copy_atom: {op} copies {s_bits} bits; cp.async{'.cg' if 'GLOBAL' in base else ''}"
                         f" moves {', '.join(str(b) for b in _CP_ASYNC_BITS[base])} bits")
    if base != "UniversalCopy" and s_bits != d_bits:
        raise ValueError(f"make_copy_atom: {op}: source and destination must have the same width")
    return _one_thread(s_bits, d_bits)


def _recast(bit_layout, bits, op, value_type):
    """The bit layout seen in elements of `bits` bits (C++ recast_layout<uint1_t, T>)."""
    try:
        return bit_layout if bits == 1 else upcast(bit_layout, bits)
    except ValueError as e:
        raise ValueError(f"make_copy_atom: {op} cannot move whole {value_type} elements: {e}") from None


@dataclass(frozen=True)
class Copy_Atom:
    """One copy instruction for elements of one type: its op, element type and the four layouts."""
    op: str
    value_type: str
    ThrID: Layout
    ValLayoutSrc: Layout    # (thread, value) -> element offset in the source
    ValLayoutDst: Layout    # (thread, value) -> element offset in the destination
    ValLayoutRef: Layout    # the reference (thread, value) order

    @property
    def bits(self):
        """sizeof_bits of the element type."""
        return CPP_NAMES[self.value_type].bits

    @property
    def register_bits(self):
        """(source, destination) register widths of the instruction, C++'s SRegisters and DRegisters element
        types: copy_unpack recasts each call's values to them (copy_traits.hpp). ldmatrix reads one 128-bit
        row and writes 32-bit registers, stmatrix the reverse, the warp exchanges move 32-bit registers, a
        one-thread copy one register of its whole width. None for the auto-vectorizing copies, which
        cute::copy handles without copy_unpack."""
        if "_LDSM_" in self.op:
            return 128, 32
        if "_STSM_" in self.op:
            return 32, 128
        if self.op in _WARP:
            return 32, 32
        if re.match(r"(%s)\s*<" % "|".join(_TEMPLATED), self.op):
            return self.bits * self.num_val_src, self.bits * self.num_val_dst
        return None

    @property
    def num_val_src(self):
        return size(self.ValLayoutSrc, 1)

    @property
    def num_val_dst(self):
        return size(self.ValLayoutDst, 1)

    def __str__(self):
        return ("Copy_Atom\n"
                f"  ThrID:        {self.ThrID}\n"
                f"  ValLayoutSrc: {self.ValLayoutSrc}\n"
                f"  ValLayoutDst: {self.ValLayoutDst}\n"
                f"  ValLayoutRef: {self.ValLayoutRef}\n"
                f"  ValueType:    {self.bits}b\n")

    def __repr__(self):
        return f"Copy_Atom<{self.op}, {self.value_type}>"


def make_copy_atom(op, value_type):
    """The atom C++ writes ``Copy_Atom<op, value_type>``, e.g. make_copy_atom("SM75_U16x8_LDSM_T", "half_t")
    or make_copy_atom("UniversalCopy<uint128_t>", "float").

    Post: size(ThrID) == size of mode 0 of each ValLayout (C++'s static_assert "CopyOperation is not
    valid for Src of ValType" otherwise).
    """
    if not isinstance(op, str):
        raise TypeError(f"make_copy_atom: op must be a name such as 'SM75_U16x8_LDSM_T', got {op!r}")
    op = op.strip().removeprefix("cute::")
    value_type = _type_name(value_type, "value type")
    bits = CPP_NAMES[value_type].bits
    thr, src, dst, ref = _traits(op)
    vals = [_recast(lay, bits, op, value_type) for lay in (src, dst, ref)]
    for name, lay in zip(("Src", "Dst", "Ref"), vals):
        if size(lay, 0) != size(thr):
            raise ValueError(f"make_copy_atom: {op} is not valid for {name} of {value_type} "
                             f"({name} layout {lay} has {fmt(size(lay, 0))} threads, ThrID {thr} has {size(thr)})")
    return Copy_Atom(op, value_type, thr, *vals)
