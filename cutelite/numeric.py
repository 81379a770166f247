"""Numeric types: the element types that atoms, layouts and kernels name, in one table.

One element type has a name in each world the book touches: NumPy's ("float16"; for a type NumPy lacks,
the name ml_dtypes and PyTorch give it, "bfloat16"), C++ CuTe's ("half_t"), the PTX ISA's (".f16"; CuTe's op
names spell it in capitals: SM80_16x8x16_F32F16F16F32_TN), the CuTe DSL's (cutlass.Float16, which prints as
its MLIR type "f16"). Its width in bits is what layouts recast by; a float's exponent and mantissa widths
say how its bits encode a value. `numpy` is the NumPy dtype that holds it on the host: its own where NumPy
has one, else its bits (bfloat16 in uint16), None below a byte.

Every table of element types in cutelite and kernels reads this one: a new type is one row here (and the
atoms that use it).
"""

from dataclasses import dataclass

from .errors import quote

__all__ = ["Numeric", "NUMERICS", "CPP_NAMES", "numeric", "Float16", "BFloat16", "TFloat32", "Float32", "Float64",
           "Float8E4M3FN", "Float8E5M2", "Int8", "Uint8", "Int16", "Uint16", "Int32", "Uint32", "Int64", "Uint64",
           "Int4", "Uint4", "Uint1", "Uint128", "Complex128"]


@dataclass(frozen=True)
class Numeric:
    """An element type (see the module docstring). A float has exponent and mantissa bits (an integer 0 and
    0); `finite`: the type has no infinities, its all-ones pattern is NaN (e4m3's "FN")."""
    name: str
    cpp: str
    ptx: str
    bits: int
    numpy: str
    dsl: str
    mlir: str
    exponent: int = 0
    mantissa: int = 0
    finite: bool = False

    @property
    def is_float(self):
        return self.exponent > 0

    @property
    def letters(self):
        """How CuTe's op names spell the type: the PTX name in capitals (F16, BF16, E4M3, S8)."""
        return self.ptx.upper()

    def __repr__(self):
        return self.dsl or self.name


#                      name             C++                PTX     bits NumPy         CuTe DSL        MLIR        exp man finite
Float16      = Numeric("float16",       "half_t",          "f16",  16,  "float16",    "Float16",      "f16",      5,  10)
BFloat16     = Numeric("bfloat16",      "bfloat16_t",      "bf16", 16,  "uint16",     "BFloat16",     "bf16",     8,  7)
TFloat32     = Numeric("tf32",          "tfloat32_t",      "tf32", 32,  "float32",    "TFloat32",     "tf32",     8,  10)
Float32      = Numeric("float32",       "float",           "f32",  32,  "float32",    "Float32",      "f32",      8,  23)
Float64      = Numeric("float64",       "double",          "f64",  64,  "float64",    "Float64",      "f64",      11, 52)
Float8E4M3FN = Numeric("float8_e4m3fn", "float_e4m3_t",    "e4m3", 8,   "uint8",      "Float8E4M3FN", "f8E4M3FN", 4,  3,  True)
Float8E5M2   = Numeric("float8_e5m2",   "float_e5m2_t",    "e5m2", 8,   "uint8",      "Float8E5M2",   "f8E5M2",   5,  2)
Int8         = Numeric("int8",          "int8_t",          "s8",   8,   "int8",       "Int8",         "i8")
Uint8        = Numeric("uint8",         "uint8_t",         "u8",   8,   "uint8",      "Uint8",        "i8")
Int16        = Numeric("int16",         "int16_t",         "s16",  16,  "int16",      "Int16",        "i16")
Uint16       = Numeric("uint16",        "uint16_t",        "u16",  16,  "uint16",     "Uint16",       "i16")
Int32        = Numeric("int32",         "int32_t",         "s32",  32,  "int32",      "Int32",        "i32")
Uint32       = Numeric("uint32",        "uint32_t",        "u32",  32,  "uint32",     "Uint32",       "i32")
Int64        = Numeric("int64",         "int64_t",         "s64",  64,  "int64",      "Int64",        "i64")
Uint64       = Numeric("uint64",        "uint64_t",        "u64",  64,  "uint64",     "Uint64",       "i64")
Int4         = Numeric("int4",          "int4b_t",         "s4",   4,   None,         "Int4",         "i4")
Uint4        = Numeric("uint4",         "uint4b_t",        "u4",   4,   None,         None,           None)
Uint1        = Numeric("uint1",         "uint1b_t",        "b1",   1,   None,         None,           None)
Uint128      = Numeric("uint128",       "uint128_t",       "b128", 128, None,         "Uint128",      "i128")
Complex128   = Numeric("complex128",    "complex<double>", None,   128, "complex128", None,           None)

NUMERICS = (Float16, BFloat16, TFloat32, Float32, Float64, Float8E4M3FN, Float8E5M2, Int8, Uint8, Int16, Uint16,
            Int32, Uint32, Int64, Uint64, Int4, Uint4, Uint1, Uint128, Complex128)

# every C++ spelling: each row's own, and `int` (int32_t) and cute::uint1_t (cutlass::uint1b_t)
CPP_NAMES = {**{t.cpp: t for t in NUMERICS}, "int": Int32, "uint1_t": Uint1}
_BY_NAME = {**{t.ptx: t for t in NUMERICS if t.ptx}, **{t.name: t for t in NUMERICS}, **CPP_NAMES}


def numeric(t, op="numeric"):
    """The Numeric that `t` names: a Numeric, NumPy's name ("float16"), C++'s ("half_t", "cute::half_t",
    "cutlass::bfloat16_t"), PTX's ("f16") or an object with a NumPy dtype's `.name` (np.dtype("float16")).
    A ValueError naming `op` for a name not in the table, a TypeError for anything else."""
    if isinstance(t, Numeric):
        return t
    name = t if isinstance(t, str) else getattr(t, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"{op}: an element type is a name such as 'float16' or 'half_t', got {quote(t)}")
    found = _BY_NAME.get(name.strip().removeprefix("cute::").removeprefix("cutlass::"))
    if found is None:
        raise ValueError(f"{op}: unknown element type {quote(repr(name))}; known: "
                         + ", ".join(f"{x.name} ({x.cpp})" for x in NUMERICS))
    return found
