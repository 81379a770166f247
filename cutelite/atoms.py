"""MMA atoms: one tensor-core instruction described as CuTe describes it, by four layouts.

An atom for an instruction of shape M x N x K says
  * ThrID:      logical thread -> lane of the warp (the identity `_32:_1`, except Volta's m8n8k4,
                where one product is computed by a quad-pair of 8 lanes: `(_4,_2):(_1,_16)`, and the
                one-thread atoms `UniversalFMA<D,A,B,C>` and `SM61_DP4A`: `_1:_0`, every lane its own product);
  * LayoutA_TV: (thread, value) -> index of A's element in the M x K tile, column-major (m + k*M);
  * LayoutB_TV: (thread, value) -> index of B's element in the N x K tile, column-major (n + k*N);
  * LayoutC_TV: (thread, value) -> index of C's (and D's) element in the M x N tile (m + n*M).
The value coordinate v is the PTX ISA's element number i (a_i, b_i, c_i): 16-bit elements travel two to
a 32-bit register, element v in register v // 2. Matrices here are the PTX ISA's: A is M x K, B is K x N,
C and D are M x N, and D = A @ B + C. (CuTe keeps B as N x K; `fragment_of` and `owner_of` answer with B's
(k, n), the PTX ISA's row and column.)

Post: str(atom) is the text C++ CuTe prints for `print(MMA_Atom<Op>{})` (tests/fixtures/mma_atoms_cpp.txt).
"""

import difflib
from dataclasses import dataclass
from enum import Enum

from . import numeric as N
from .errors import quote
from .int_tuple import congruent, fmt, is_int
from .layout import Layout, right_inverse, size

__all__ = ["Major", "MMA_Atom", "MMA_ATOMS", "make_mma_atom", "print_atom", "tile_shape", "fragment_of", "owner_of",
           "gather_fragments", "scatter_fragments", "mma_reference", "quadpair_lanes",
           "fragment_grids"]


class Major(str, Enum):
    """Which mode of an MMA operand's (MN, K) tile is contiguous: K (CuTe's "T" for A, "N" for B; a row-major
    A, a column-major B) or MN. C++'s GMMA::Major, the CuTe DSL's OperandMajorMode. A str: Major.K == "K"."""
    K = "K"
    MN = "MN"

    def __str__(self):
        return self.value

    def __format__(self, spec):
        return format(self.value, spec)

    @classmethod
    def pair(cls, majors, op):
        """(A's, B's) Major from a pair such as ("K", "MN"); a TypeError or ValueError naming `op`."""
        if not isinstance(majors, (tuple, list)) or len(majors) != 2:
            raise TypeError(f"{op}: majors must be a pair (A's, B's) of 'K' or 'MN', got {quote(majors)}")
        if not all(isinstance(m, str) and m in ("K", "MN") for m in majors):
            raise ValueError(f"{op}: majors must be two of 'K' or 'MN' (A's, then B's), got {quote(majors)}")
        return tuple(cls(m) for m in majors)


@dataclass(frozen=True)
class MMA_Atom:
    """One MMA instruction: its name in CuTe, the PTX it stands for, element types and the four layouts."""
    name: str
    ptx: str
    types: tuple          # (D, A, B, C) element types by name (cutelite.numeric: "float32", "float16", "tf32")
    ThrID: Layout
    Shape_MNK: tuple
    LayoutA_TV: Layout
    LayoutB_TV: Layout
    LayoutC_TV: Layout

    def __post_init__(self):
        for f, kind in (("name", str), ("ptx", str), ("types", tuple), ("Shape_MNK", tuple), ("ThrID", Layout),
                        ("LayoutA_TV", Layout), ("LayoutB_TV", Layout), ("LayoutC_TV", Layout)):
            if not isinstance(getattr(self, f), kind):
                raise TypeError(f"MMA_Atom: {f} must be a {kind.__name__}, got {getattr(self, f)!r}")

    def __str__(self):
        return ("MMA_Atom\n"
                f"  ThrID:      {self.ThrID}\n"
                f"  Shape_MNK:  {fmt(self.Shape_MNK)}\n"
                f"  LayoutA_TV: {self.LayoutA_TV}\n"
                f"  LayoutB_TV: {self.LayoutB_TV}\n"
                f"  LayoutC_TV: {self.LayoutC_TV}\n")

    def __repr__(self):
        return f"MMA_Atom<{self.name}>"


def _need_atom(atom, op):
    """TypeError naming `op` unless atom is an MMA_Atom."""
    if not isinstance(atom, MMA_Atom):
        raise TypeError(f"{op}: expected an MMA_Atom (see make_mma_atom), got {atom!r}")


def print_atom(atom):
    """Print an atom exactly as C++ CuTe's `print(MMA_Atom<Op>{})` does."""
    _need_atom(atom, "print_atom")
    print(str(atom), end="")


# ---- the layouts, as the CuTe traits spell them -------------------------------------------------------
# Volta m8n8k4: a quad-pair (lanes 0-3 and 16-19) computes one 8x8x4 product.
SM70_QuadPair = Layout((4, 2), (1, 16))                          # logical thread -> lane
SM70_8x4_Row = Layout((8, 4), (1, 8))                            # (T8,V4) -> (M8,K4): thread t holds row t
SM70_8x4_Col = Layout(((4, 2), 4), ((8, 4), 1))                  # (T8,V4) -> (M8,K4): thread holds a column
SM70_8x8_16b = Layout((8, 8), (1, 8))                            # (T8,V8) -> (M8,N8): f16 C, a row each
SM70_8x8_32b = Layout(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))   # f32 C

# Turing / Ampere: all 32 lanes take part in one product; "group" g = lane // 4, t = lane % 4.
SM80_8x8_Row = Layout(((4, 8), 2), ((16, 1), 8))                  # (T32,V2) -> 8x8: (g, 2t + v)
SM80_16x8_Row = Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))      # (T32,V4) -> 16x8: (g + 8 v1, 2t + v0)
SM80_16x16_A = Layout(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))
SM80_8x16_B = Layout(((4, 8), (2, 2)), ((16, 1), (8, 64)))
SM80_16x8_TF32_A = Layout(((4, 8), (2, 2)), ((16, 1), (8, 64)))
SM80_8x8_TF32_B = Layout(((4, 8), 2), ((8, 1), 32))
SM80_8x4 = Layout(((4, 8), 1), ((8, 1), 0))                       # (T32,V1) -> 8x4: (g, t)
SM80_16x4_TF32_A = Layout(((4, 8), 2), ((16, 1), 8))              # (T32,V2) -> 16x4: (g + 8 v, t)
SM80_8x16_Row = Layout(((4, 8), 4), ((32, 1), 8))                 # (T32,V4) -> 8x16: (g, 4t + v)
SM80_16x16_S8_A = Layout(((4, 8), (4, 2)), ((64, 1), (16, 8)))    # (T32,V8) -> 16x16: (g + 8 v1, 4t + v0)
SM80_16x32_S8_A = Layout(((4, 8), (4, 2, 2)), ((64, 1), (16, 8, 256)))
SM80_8x32_S8_B = Layout(((4, 8), (4, 2)), ((32, 1), (8, 128)))   # (T32,V8) -> 8x32: (g, 4t + v0 + 16 v1)
THR32 = Layout(32, 1)

# 4-bit integers, eight to a register; CuTe writes the single value mode as a one-mode tuple (_8).
SM80_8x32_S4 = Layout(((4, 8), (8,)), ((64, 1), (8,)))           # (T32,V8) -> 8x32: (g, 8t + v)
SM80_16x32_S4_A = Layout(((4, 8), (8, 2)), ((128, 1), (16, 8)))   # (T32,V16) -> 16x32: (g + 8 v1, 8t + v0)
SM80_8x32_S4_B_CUTE = Layout(((4, 8), (8,)), ((32, 1), (8,)))    # CuTe's B of m16n8k32 .s4: t steps by 4 in K,
                                                                 # not 8 as the PTX ISA's b_i (kept: C++ prints it)
SM80_16x64_S4_A = Layout(((4, 8), (8, 2, 2)), ((128, 1), (16, 8, 512)))
SM80_8x64_S4_B = Layout(((4, 8), (8, 2)), ((64, 1), (8, 256)))    # (T32,V16) -> 8x64: (g, 8t + v0 + 32 v1)
# 1-bit (b1) operands, 32 to a register.
SM80_8x128_B1 = Layout(((4, 8), 32), ((256, 1), 8))               # (T32,V32) -> 8x128: (g, 32t + v)
# CuTe's A of m16n8k128 .b1, exactly as its traits spell it: the stride ((16,8)) is one mode holding the
# pair, where the shape (32,2) has two modes; C++ prints it so (shape and stride are not congruent).
SM80_16x128_B1_A_CUTE = Layout._make(((4, 8), (32, 2)), ((512, 1), ((16, 8),)))
SM80_16x256_B1_A = Layout(((4, 8), (32, 2, 2)), ((512, 1), (16, 8, 2048)))
SM80_8x256_B1_B = Layout(((4, 8), (32, 2)), ((256, 1), (8, 1024)))
# Hopper's f64 mma.sync (m16n8k4/k8/k16): f64 A and B one element a register.
SM90_16x16_F64_A = Layout(((4, 8), (2, 4)), ((16, 1), (8, 64)))   # (T32,V8) -> 16x16: (g + 8 v0, t + 4 v1)
SM90_8x16_F64_B = Layout(((4, 8), 4), ((8, 1), 32))               # (T32,V4) -> 8x16: (g, t + 4 v)

# One-thread atoms: each lane computes a whole (tiny) product on its own.
THR1 = Layout(1, 0)
ONE_1x1 = Layout((1, 1), (0, 0))
ONE_1x4 = Layout((1, 4), (0, 1))                                  # DP4A: 4 int8 of A (or B) in one register
ONE_1x2 = Layout((1, 2), (0, 1))                                  # DP2A: 2 int16 of A (or B)

_F16, _F32, _BF16, _TF32, _F64 = (t.name for t in (N.Float16, N.Float32, N.BFloat16, N.TFloat32, N.Float64))
_S8, _S16, _S32, _B1, _C64 = (t.name for t in (N.Int8, N.Int16, N.Int32, N.Uint1, N.Complex128))
_GC64 = "gauss_complex128"   # SM80_8x8x4_GC64C64C64GC64_TN's accumulator: three doubles (Gauss's 3-product trick)
# CuTe's suffix names A and B by BLAS convention: T = K-major ("row" A, "col" B in PTX), N = M-/N-major.
_PTX_AB = {"TN": ".row.col", "NT": ".col.row", "NN": ".col.col", "TT": ".row.row"}


def _sm70(acc, ab):
    a = SM70_8x4_Row if ab[0] == "T" else SM70_8x4_Col
    b = SM70_8x4_Row if ab[1] == "N" else SM70_8x4_Col
    c = SM70_8x8_32b if acc == _F32 else SM70_8x8_16b
    t = "f32" if acc == _F32 else "f16"
    name = f"SM70_8x8x4_{'F32F16F16F32' if acc == _F32 else 'F16F16F16F16'}_{ab}"
    ptx = f"mma.sync.aligned.m8n8k4{_PTX_AB[ab]}.{t}.f16.f16.{t}"
    return MMA_Atom(name, ptx, (acc, _F16, _F16, acc), SM70_QuadPair, (8, 8, 4), a, b, c)


def _sm80(name, ptx, types, mnk, a, b, c=SM80_16x8_Row):
    return MMA_Atom(name, ptx, types, THR32, mnk, a, b, c)


def universal_fma(d, a=None, b=None, c=None):
    """`UniversalFMA<D,A,B,C>`: one thread computes d = a * b + c on scalars of the C++ types named
    (C++'s defaults: A = D, B = A, C = D). Its name is the full four-type spelling."""
    a = d if a is None else a
    b = a if b is None else b
    c = d if c is None else c
    for t in (d, a, b, c):
        if t not in N.CPP_NAMES:
            raise ValueError(f"UniversalFMA: unknown scalar type {t!r}; known: {', '.join(N.CPP_NAMES)}")
    return MMA_Atom(f"UniversalFMA<{d},{a},{b},{c}>", "d = a * b + c (a C++ fma, no tensor core)",
                    tuple(N.CPP_NAMES[t].name for t in (d, a, b, c)), THR1, (1, 1, 1), ONE_1x1, ONE_1x1, ONE_1x1)


def _all_atoms():
    atoms = [_sm70(acc, ab) for acc in (_F16, _F32) for ab in ("TN", "NT", "NN", "TT")]
    k8 = "mma.sync.aligned.m16n8k8.row.col"
    k16 = "mma.sync.aligned.m16n8k16.row.col"
    atoms += [
        _sm80("SM75_16x8x8_F32F16F16F32_TN", k8 + ".f32.f16.f16.f32", (_F32, _F16, _F16, _F32), (16, 8, 8),
              SM80_16x8_Row, SM80_8x8_Row),
        _sm80("SM80_16x8x8_F16F16F16F16_TN", k8 + ".f16.f16.f16.f16", (_F16,) * 4, (16, 8, 8),
              SM80_16x8_Row, SM80_8x8_Row),
        _sm80("SM80_16x8x8_F32F16F16F32_TN", k8 + ".f32.f16.f16.f32", (_F32, _F16, _F16, _F32), (16, 8, 8),
              SM80_16x8_Row, SM80_8x8_Row),
        _sm80("SM80_16x8x8_F32BF16BF16F32_TN", k8 + ".f32.bf16.bf16.f32", (_F32, _BF16, _BF16, _F32),
              (16, 8, 8), SM80_16x8_Row, SM80_8x8_Row),
        _sm80("SM80_16x8x16_F16F16F16F16_TN", k16 + ".f16.f16.f16.f16", (_F16,) * 4, (16, 8, 16),
              SM80_16x16_A, SM80_8x16_B),
        _sm80("SM80_16x8x16_F32F16F16F32_TN", k16 + ".f32.f16.f16.f32", (_F32, _F16, _F16, _F32),
              (16, 8, 16), SM80_16x16_A, SM80_8x16_B),
        _sm80("SM80_16x8x16_F32BF16BF16F32_TN", k16 + ".f32.bf16.bf16.f32", (_F32, _BF16, _BF16, _F32),
              (16, 8, 16), SM80_16x16_A, SM80_8x16_B),
        _sm80("SM80_16x8x8_F32TF32TF32F32_TN", k8 + ".f32.tf32.tf32.f32", (_F32, _TF32, _TF32, _F32),
              (16, 8, 8), SM80_16x8_TF32_A, SM80_8x8_TF32_B),
        _sm80("SM80_16x8x4_F32TF32TF32F32_TN", "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32",
              (_F32, _TF32, _TF32, _F32), (16, 8, 4), SM80_16x4_TF32_A, SM80_8x4),
        _sm80("SM80_8x8x4_F64F64F64F64_TN", "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", (_F64,) * 4,
              (8, 8, 4), SM80_8x4, SM80_8x4, SM80_8x8_Row),
    ]
    s8 = (_S32, _S8, _S8, _S32)
    k16 = "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32"
    atoms += [_sm80(f"SM{sm}_8x8x16_S32S8S8S32_TN", k16, s8, (8, 8, 16), SM80_8x16_Row, SM80_8x16_Row, SM80_8x8_Row)
              for sm in (75, 80)]
    atoms += [
        _sm80("SM80_16x8x16_S32S8S8S32_TN", "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32", s8, (16, 8, 16),
              SM80_16x16_S8_A, SM80_8x16_Row),
        _sm80("SM80_16x8x32_S32S8S8S32_TN", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", s8, (16, 8, 32),
              SM80_16x32_S8_A, SM80_8x32_S8_B),
        MMA_Atom("SM61_DP4A", "dp4a.s32.s32", s8, THR1, (1, 1, 4), ONE_1x4, ONE_1x4, ONE_1x1),
    ]
    atoms += [MMA_Atom("SM61_DP2A", "dp2a.s32.s32", (_S32, _S16, _S16, _S32), THR1, (1, 1, 2), ONE_1x2, ONE_1x2,
                       ONE_1x1)]
    atoms += _integer_atoms() + _fp8_atoms() + _f64_atoms()
    atoms += [universal_fma(t) for t in ("float", "double", "half_t", "int")]
    return {a.name: a for a in atoms}


def _integer_atoms():
    """Ampere's integer mma.sync beyond s8 x s8: every signed/unsigned pairing of 8- and 4-bit A and B,
    each also as _SATURATE (.satfinite: clamp to int32 instead of wrapping), and the 1-bit ones (b1 AND or
    XOR, then popc). Layouts depend only on the shape and the width of A/B, as CuTe's traits share them."""
    shapes = {   # (bits of A and B, M, N, K) -> (A, B, C) layouts
        (8, 8, 8, 16): (SM80_8x16_Row, SM80_8x16_Row, SM80_8x8_Row),
        (8, 16, 8, 16): (SM80_16x16_S8_A, SM80_8x16_Row, SM80_16x8_Row),
        (8, 16, 8, 32): (SM80_16x32_S8_A, SM80_8x32_S8_B, SM80_16x8_Row),
        (4, 8, 8, 32): (SM80_8x32_S4, SM80_8x32_S4, SM80_8x8_Row),
        (4, 16, 8, 32): (SM80_16x32_S4_A, SM80_8x32_S4_B_CUTE, SM80_16x8_Row),
        (4, 16, 8, 64): (SM80_16x64_S4_A, SM80_8x64_S4_B, SM80_16x8_Row),
    }
    atoms = []
    for (bits, m, n, k), (a, b, c) in shapes.items():
        kinds = (N.Int8, N.Uint8) if bits == 8 else (N.Int4, N.Uint4)
        for ta in kinds:
            for tb in kinds:
                for sat in ("", "_SATURATE"):
                    if bits == 8 and ta is tb is N.Int8 and not sat:
                        continue   # the s8 x s8 atoms above
                    ptx = (f"mma.sync.aligned.m{m}n{n}k{k}.row.col.s32.{ta.ptx}.{tb.ptx}.s32"
                           + (".satfinite" if sat else ""))
                    atoms.append(_sm80(f"SM80_{m}x{n}x{k}_S32{ta.letters}{tb.letters}S32_TN{sat}", ptx,
                                       (_S32, ta.name, tb.name, _S32), (m, n, k), a, b, c))
    b1_shapes = {(8, 8, 128): (SM80_8x128_B1, SM80_8x128_B1, SM80_8x8_Row),
                 (16, 8, 128): (SM80_16x128_B1_A_CUTE, SM80_8x128_B1, SM80_16x8_Row),
                 (16, 8, 256): (SM80_16x256_B1_A, SM80_8x256_B1_B, SM80_16x8_Row)}
    for (m, n, k), (a, b, c) in b1_shapes.items():
        for op in ("XOR", "AND"):
            ptx = f"mma.sync.aligned.m{m}n{n}k{k}.row.col.s32.b1.b1.s32.{op.lower()}.popc"
            atoms.append(_sm80(f"SM80_{m}x{n}x{k}_S32U1U1S32_TN_{op}POPC", ptx, (_S32, _B1, _B1, _S32), (m, n, k),
                               a, b, c))
    return atoms


def _fp8_atoms():
    """Ada's (SM89) m16n8k32 with 8-bit floats: e4m3 or e5m2 A and B, f32 or f16 C; laid out as s8's."""
    fp8 = (N.Float8E4M3FN, N.Float8E5M2)
    atoms = []
    for c in (N.Float32, N.Float16):
        for ta in fp8:
            for tb in fp8:
                ptx = f"mma.sync.aligned.m16n8k32.row.col.{c.ptx}.{ta.ptx}.{tb.ptx}.{c.ptx}"
                atoms.append(_sm80(f"SM89_16x8x32_{c.letters}{ta.letters}{tb.letters}{c.letters}_TN", ptx,
                                   (c.name, ta.name, tb.name, c.name), (16, 8, 32), SM80_16x32_S8_A, SM80_8x32_S8_B))
    return atoms


def _f64_atoms():
    """Double precision: Ampere's m8n8k4 for complex doubles (C64, and GC64 whose accumulator holds the
    three real products of Gauss's trick), Hopper's m16n8k4/k8/k16 for real and complex doubles."""
    atoms = [_sm80("SM80_8x8x4_C64C64C64C64_TN", "four mma.sync.aligned.m8n8k4.row.col.f64 (complex product)",
                   (_C64,) * 4, (8, 8, 4), SM80_8x4, SM80_8x4, SM80_8x8_Row),
             _sm80("SM80_8x8x4_GC64C64C64GC64_TN", "three mma.sync.aligned.m8n8k4.row.col.f64 (Gauss's product)",
                   (_GC64, _C64, _C64, _GC64), (8, 8, 4), SM80_8x4, SM80_8x4, SM80_8x8_Row)]
    for k, a, b in ((4, SM80_16x4_TF32_A, SM80_8x4), (8, SM80_16x8_TF32_A, SM80_8x8_TF32_B),
                    (16, SM90_16x16_F64_A, SM90_8x16_F64_B)):
        ptx = f"mma.sync.aligned.m16n8k{k}.row.col.f64.f64.f64.f64"
        atoms.append(_sm80(f"SM90_16x8x{k}_F64F64F64F64_TN", ptx, (_F64,) * 4, (16, 8, k), a, b))
        atoms.append(_sm80(f"SM90_16x8x{k}_C64C64C64C64_TN", f"complex product of {ptx}", (_C64,) * 4, (16, 8, k), a, b))
    return atoms


MMA_ATOMS = _all_atoms()


def make_mma_atom(name):
    """The atom CuTe calls `name`, e.g. make_mma_atom("SM80_16x8x16_F16F16F16F16_TN") or
    make_mma_atom("UniversalFMA<float, half_t, half_t, float>") (C++'s names of numeric.NUMERICS, its defaults for
    omitted types; spaces and a `cute::`/`cutlass::` prefix are allowed)."""
    if not isinstance(name, str):
        raise TypeError(f"make_mma_atom: expected an atom's name (a str), got {name!r}")
    text = "".join(name.split()).replace("cute::", "").replace("cutlass::", "")
    if text.startswith("UniversalFMA<") and text.endswith(">"):
        types = text[len("UniversalFMA<"):-1].split(",")
        if not 1 <= len(types) <= 4:
            raise ValueError(f"make_mma_atom: UniversalFMA takes 1 to 4 types, got {name!r}")
        try:
            return universal_fma(*types)
        except ValueError as e:
            raise ValueError(f"make_mma_atom: {e}") from None
    if text not in MMA_ATOMS:
        near = difflib.get_close_matches(text, MMA_ATOMS, n=4, cutoff=0.5)
        raise ValueError(f"make_mma_atom: unknown atom {quote(name)}"
                         + (f"; did you mean {', '.join(near)}?" if near else "")
                         + f" (cutelite.MMA_ATOMS lists all {len(MMA_ATOMS)})")
    return MMA_ATOMS[text]


# ---- who holds what -------------------------------------------------------------------------------------
_OPERANDS = ("A", "B", "C")


def _tv(atom, operand, op):
    _need_atom(atom, op)
    if not isinstance(operand, str) or operand not in _OPERANDS:
        raise ValueError(f"{op}: operand must be one of 'A', 'B', 'C' (D is laid out as C), got {operand!r}")
    return check_tv(atom, operand, op)


def check_tv(atom, operand, op):
    """Layout{operand}_TV of the atom, or a ValueError naming `op` when its shape and stride are not congruent
    (CuTe's m16n8k128 .b1 A, as its traits spell it: C++ prints it but cannot compute with it either)."""
    tv = getattr(atom, f"Layout{operand}_TV")
    if not congruent(tv.shape, tv.stride):
        raise ValueError(f"{op}: Layout{operand}_TV {tv} of {atom.name} has a stride not congruent with its shape "
                         "(so CuTe's traits spell it); C++ CuTe does not compile this use either")
    return tv


def tile_shape(atom, operand):
    """(rows, cols) of the operand as the PTX ISA writes it: A (M, K), B (K, N), C/D (M, N)."""
    _tv(atom, operand, "tile_shape")
    M, N, K = atom.Shape_MNK
    return {"A": (M, K), "B": (K, N), "C": (M, N)}[operand]


def _row_col(atom, operand, idx):
    """Index into CuTe's column-major tile -> (row, col) of the PTX ISA's matrix."""
    M, N, K = atom.Shape_MNK
    if operand == "A":
        return idx % M, idx // M          # (m, k)
    if operand == "B":
        return idx // N, idx % N          # CuTe's (n, k) -> (k, n)
    return idx % M, idx // M              # (m, n)



def _copy_shift(atom, copy):
    """How far the lanes of copy number `copy` of the atom sit from ThrID's own lanes: a warp-wide atom
    has one copy (0); Volta's quad-pair q is shifted by 4q; a one-thread atom has a copy per lane."""
    n = size(atom.ThrID)
    return 0 if n == 32 else 4 * copy if n == 8 else copy


def _copy_of(atom, lane):
    """Which copy of the atom `lane` takes part in (see _copy_shift)."""
    n = size(atom.ThrID)
    return 0 if n == 32 else (lane >> 2) & 3 if n == 8 else lane


def _logical_thread(atom, lane):
    """lane -> logical thread of the atom. Lanes outside ThrID's image (Volta's quad-pairs 1-3, lanes
    1-31 of a one-thread atom) run the same atom on their own product: lane 4q + x of Volta plays the
    part of lane x of quad-pair 0."""
    if not is_int(lane) or not 0 <= lane < 32:
        raise ValueError(f"fragment_of: lane must be an int in 0..31, got {lane!r}")
    inverse = {atom.ThrID(t): t for t in range(size(atom.ThrID))}
    return inverse[lane - _copy_shift(atom, _copy_of(atom, lane))]


def quadpair_lanes(q):
    """The 8 lanes of quad-pair q (0..3) of a warp executing mma.m8n8k4: 4q..4q+3 and 4q+16..4q+19."""
    if not is_int(q) or not 0 <= q < 4:
        raise ValueError(f"quadpair_lanes: q must be an int in 0..3, got {q!r}")
    return [4 * q + i for i in range(4)] + [16 + 4 * q + i for i in range(4)]


def fragment_of(atom, operand, lane):
    """The elements `lane` holds of operand "A", "B" or "C" (D too): a list of (register, (row, col)),
    register being the value index v (the PTX ISA's i), in order.

    For an SM70 atom the coordinates are within the lane's own quad-pair product; for a one-thread atom
    (UniversalFMA, SM61_DP4A) within the lane's own product.
    Post: fragment_of(atom, op, lane)[v] == (v, rc) exactly when owner_of(atom, op, *rc) == (lane, v)
          (quad-pair 0 lanes; a lane of quad-pair q answers for its own product).
    """
    tv = _tv(atom, operand, "fragment_of")
    t = _logical_thread(atom, lane)
    return [(v, _row_col(atom, operand, tv(t, v))) for v in range(size(tv, 1))]


def owner_of(atom, operand, row, col, quadpair=0):
    """(lane, register) holding element (row, col) of operand "A", "B" or "C" (for SM70 atoms: of the
    product of quad-pair `quadpair`; for one-thread atoms: of lane `quadpair`'s own product).
    Raises ValueError for an element outside the tile."""
    _tv(atom, operand, "owner_of")
    rows, cols = tile_shape(atom, operand)
    if not (is_int(row) and is_int(col) and is_int(quadpair)):
        raise TypeError(f"owner_of: row, col and quadpair must be ints, got {row!r}, {col!r}, {quadpair!r}")
    if not (0 <= row < rows and 0 <= col < cols):
        raise ValueError(f"owner_of: ({row}, {col}) is outside the {rows}x{cols} tile of {operand}")
    copies = {8: 4, 1: 32}.get(size(atom.ThrID), 1)   # copies of the atom in a warp (see _copy_shift)
    if not 0 <= quadpair < copies:
        raise ValueError(f"owner_of: quadpair must be in 0..{copies - 1} for {atom.name} (a warp runs {copies} "
                         f"cop{'y' if copies == 1 else 'ies'} of it), got {quadpair}")
    tv = _tv(atom, operand, "owner_of")
    T, V = size(tv, 0), size(tv, 1)
    M, N, K = atom.Shape_MNK
    idx = {"A": row + col * M, "B": col + row * N, "C": row + col * M}[operand]   # CuTe's tile index
    inv = right_inverse(tv)                           # index -> (t, v) as t + v*T, where tv is one-to-one
    if idx < size(inv) and tv(inv(idx) % T, inv(idx) // T) == idx:
        candidates = [(inv(idx) % T, inv(idx) // T)]
    else:                                             # not one-to-one here: search
        candidates = [(t, v) for t in range(T) for v in range(V) if tv(t, v) == idx]
    if not candidates:
        raise ValueError(f"owner_of: no thread of {atom.name} holds {operand}({row}, {col})")
    t, v = candidates[0]
    return atom.ThrID(t) + _copy_shift(atom, quadpair), v


# ---- the NumPy model of one instruction --------------------------------------------------------------------
def _index_table(atom, operand, op):
    """(rows, cols) integer arrays of shape (T, V): where thread t's value v sits."""
    import numpy as np  # NumPy only for fragment data: the atoms themselves need none
    tv = _tv(atom, operand, op)
    T, V = size(tv, 0), size(tv, 1)
    rc = np.array([[_row_col(atom, operand, tv(t, v)) for v in range(V)] for t in range(T)], dtype=np.int64)
    return rc[..., 0], rc[..., 1]


def gather_fragments(atom, operand, matrix):
    """A whole operand matrix (PTX orientation) -> the fragments, an array (T, V): [t, v] is what logical
    thread t holds as value v."""
    import numpy as np  # NumPy only for fragment data: the atoms themselves need none
    rows, cols = _index_table(atom, operand, "gather_fragments")
    matrix = np.asarray(matrix)
    if matrix.shape != tile_shape(atom, operand):
        raise ValueError(f"gather_fragments: {operand} must be {tile_shape(atom, operand)}, got {matrix.shape}")
    return matrix[rows, cols]


def scatter_fragments(atom, operand, frags):
    """The inverse of gather_fragments: fragments (T, V) -> the operand matrix. Every element must be
    written exactly once (a TV layout of an MMA operand is a bijection onto its tile)."""
    import numpy as np  # NumPy only for fragment data: the atoms themselves need none
    rows, cols = _index_table(atom, operand, "scatter_fragments")
    frags = np.asarray(frags)
    if frags.shape != rows.shape:
        raise ValueError(f"scatter_fragments: {operand} fragments must be {rows.shape}, got {frags.shape}")
    hits = np.zeros(tile_shape(atom, operand), dtype=np.int64)
    np.add.at(hits, (rows, cols), 1)
    if not (hits == 1).all():
        raise ValueError(f"scatter_fragments: Layout{operand}_TV of {atom.name} is not a bijection onto the tile")
    out = np.empty(tile_shape(atom, operand), dtype=frags.dtype)
    out[rows, cols] = frags
    return out


def mma_reference(atom, A, B, C):
    """What the instruction computes, on fragments: A, B, C are (T, V) arrays (thread t's values, as
    gather_fragments makes them); returns D's fragments (T, V), laid out as C.

    The model: scatter each operand's fragments into its matrix by its TV layout, D = A @ B + C (float64
    sums, rounded to C's dtype), gather D by LayoutC_TV.
    """
    import numpy as np  # NumPy only for fragment data: the atoms themselves need none
    _need_atom(atom, "mma_reference")
    for name, frags, op in (("A", A, "A"), ("B", B, "B"), ("C", C, "C")):
        want = (size(_tv(atom, op, "mma_reference"), 0), size(_tv(atom, op, "mma_reference"), 1))
        arr = np.asarray(frags)
        if arr.dtype.kind not in "biuf" or arr.shape != want:
            raise TypeError(f"mma_reference: {name} must be a numeric array of shape {want}, got {frags!r}")
    a = scatter_fragments(atom, "A", A).astype(np.float64)
    b = scatter_fragments(atom, "B", B).astype(np.float64)
    c = scatter_fragments(atom, "C", C)
    d = (a @ b + c.astype(np.float64)).astype(c.dtype)
    return gather_fragments(atom, "C", d)


# ---- pictures for the widget: which elements a lane holds, who holds an element --------------------------
def fragment_grids(atom, lane=None, element=None):
    """For each operand "A", "B", "C": a (rows, cols) grid of strings "T{lane}.{v}" (the owner of each element,
    for SM70 within quad-pair 0's product, lanes renumbered to the lane's own quad-pair or, for a one-thread
    atom, to the lane itself) and a boolean mask of
    the elements to highlight: those `lane` holds, or the one `element` = (operand, row, col) names."""
    _need_atom(atom, "fragment_grids")
    if lane is not None and not (is_int(lane) and 0 <= lane < 32):
        raise ValueError(f"fragment_grids: lane must be an int in 0..31 or None, got {lane!r}")
    if element is not None:
        if not (isinstance(element, tuple) and len(element) == 3 and element[0] in _OPERANDS
                and is_int(element[1]) and is_int(element[2])):
            raise TypeError(f"fragment_grids: element must be (operand, row, col), e.g. ('A', 1, 2), got {element!r}")
        rows, cols = tile_shape(atom, element[0])
        if not (0 <= element[1] < rows and 0 <= element[2] < cols):
            raise ValueError(f"fragment_grids: element {element} is outside the {rows}x{cols} tile of {element[0]}")
    import numpy as np  # NumPy only for fragment data: the atoms themselves need none
    shift = 0 if lane is None else _copy_shift(atom, _copy_of(atom, lane))
    out = {}
    for op in _OPERANDS:
        rows, cols = _index_table(atom, op, "fragment_grids")
        T, V = rows.shape
        labels = np.empty(tile_shape(atom, op), dtype=object)
        mask = np.zeros(tile_shape(atom, op), dtype=bool)
        for t in range(T):
            ln = atom.ThrID(t) + shift
            for v in range(V):
                labels[rows[t, v], cols[t, v]] = f"T{ln}.{v}"
                mask[rows[t, v], cols[t, v]] = (ln == lane)
        if element is not None:
            mask[:] = False
            if element[0] == op:
                mask[element[1], element[2]] = True
        out[op] = (labels, mask)
    return out
