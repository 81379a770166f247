"""The table of numeric types (cutelite.numeric) and the host's view of it (kernels.numeric).

Expected values: the real CuTe DSL's types (width, MLIR type), NumPy's float16 rounding (the generic encoder
run on float16's format must agree with it bit for bit), and the 8-bit float formats' documented values (OCP
8-bit floating point specification: E4M3 has no infinities, largest 448, NaN S.1111.111; E5M2 is IEEE-like,
largest 57344, infinity S.11111.00).
"""

import dataclasses

import numpy as np
import pytest

from cutelite.numeric import (CPP_NAMES, NUMERICS, BFloat16, Float8E4M3FN, Float8E5M2, Float16, Float32, Int4,
                              Numeric, numeric)
from kernels.numeric import decode, encode, holds, storage


def test_every_name_finds_its_row():
    for t in NUMERICS:
        assert numeric(t.name) is t and numeric(t.cpp) is t and numeric(t) is t
        assert t.ptx is None or numeric(t.ptx) is t
    assert numeric("cute::half_t") is Float16 and numeric("cutlass::bfloat16_t") is BFloat16
    assert numeric("int").bits == 32 and CPP_NAMES["uint1_t"].bits == 1
    assert numeric(np.dtype("float16")) is Float16
    assert (Float16.letters, BFloat16.letters, Float8E4M3FN.letters) == ("F16", "BF16", "E4M3")


def test_unknown_names_are_refused_naming_the_operation():
    with pytest.raises(ValueError, match="make_thing: unknown element type 'half'; known: float16 \\(half_t\\)"):
        numeric("half", "make_thing")
    with pytest.raises(TypeError, match="make_thing: an element type is a name"):
        numeric(16, "make_thing")


def test_the_table_is_the_dsls():
    """Each type the CuTe DSL has: the same width, and it prints as the MLIR type the table says."""
    from kernels.dsl import missing
    why = missing()
    if why:
        pytest.skip(why)
    import cutlass
    from cutlass._mlir import ir
    with ir.Context():
        for t in NUMERICS:
            if t.dsl:
                theirs = getattr(cutlass, t.dsl)
                assert (theirs.width, str(theirs.mlir_type)) == (t.bits, t.mlir), t


def test_storage_and_holds():
    assert [storage(t) for t in (Float16, BFloat16, Float8E4M3FN, Float32)] == ["uint16", "uint16", "uint8", "float32"]
    assert holds(np.float16, "float16") and holds(np.uint16, "float16") and not holds(np.float32, "float16")
    assert holds(np.uint16, "bfloat16") and not holds(np.float16, "bfloat16")
    with pytest.raises(ValueError, match="storage: int4 elements \\(4 bits\\) are smaller than a byte"):
        storage(Int4)


def test_the_generic_encoder_rounds_as_numpy_does():
    """float16's format run through the generic encoder (not NumPy's): the same bits as NumPy's float16 for
    normal and subnormal values, ties, overflow to infinity, NaN; decode of every pattern as NumPy reads it."""
    generic = dataclasses.replace(Float16, name="float16_generic")
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(20000) * np.exp2(rng.uniform(-28, 17, 20000))).astype(np.float32)
    x = np.concatenate([x, [0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 65519, 65520, 2.0**-24, 2.0**-25,
                            3 * 2.0**-25, 1 + 2.0**-11, 1 + 3 * 2.0**-11]]).astype(np.float32)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    got = encode(x, generic)
    same = (got == want) | (np.isnan(x) & ((got & 0x7C00) == 0x7C00) & ((got & 0x3FF) != 0))
    assert np.all(same), x[~same][:5]
    bits = np.arange(1 << 16, dtype=np.uint16)
    ours, numpys = decode(bits, generic), bits.view(np.float16).astype(np.float32)
    assert np.array_equal(ours, numpys, equal_nan=True)


@pytest.mark.parametrize("t, largest, top, special", [
    (Float8E4M3FN, 448.0, 0x7E, {0x7F: "nan", 0x01: 2.0**-9}),
    (Float8E5M2, 57344.0, 0x7B, {0x7C: np.inf, 0x7D: "nan", 0x01: 2.0**-16}),
])
def test_the_8_bit_floats(t, largest, top, special):
    bits = np.arange(256, dtype=np.uint8)
    values = decode(bits, t)
    assert np.nanmax(values[np.isfinite(values)]) == largest and values[top] == largest
    for b, v in special.items():
        assert np.isnan(values[b]) if v == "nan" else values[b] == v
    finite = np.isfinite(values)
    assert np.array_equal(encode(values[finite], t), bits[finite])            # every value round-trips
    beyond = encode([largest * 1.25, -largest * 1.25], t)                      # past the largest finite value
    assert (np.all(np.isnan(decode(beyond, t))) if t.finite else list(decode(beyond, t)) == [np.inf, -np.inf])

