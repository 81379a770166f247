"""The table of numeric types (cutelite.numeric) and the host's view of it (kernels.numeric).

Expected values: the real CuTe DSL's types (width, MLIR type), NumPy's float16 rounding (the generic encoder
run on float16's format must agree with it bit for bit), and the 8-bit float formats' documented values (OCP
8-bit floating point specification; Micikevicius et al., "FP8 Formats for Deep Learning": E4M3 has no
infinities, largest 448, NaN S.1111.111; E5M2 is IEEE-like, largest 57344, infinity S.11111.00), all 256 codes
of each valued from that definition and rounding checked against the defined grid by brute force; ml_dtypes'
or PyTorch's float8 casts where installed (neither is in this venv).
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



def _defined(t):
    """Every code of an 8-bit float type, valued by the format's definition (OCP 8-bit floating point
    specification), with plain Python arithmetic: sign, a biased exponent field e and a fraction f; e = 0 is
    subnormal, f/2^m * 2^(1-bias); otherwise (1 + f/2^m) * 2^(e-bias); the all-ones exponent is infinity
    (f = 0) or NaN for E5M2, and only S.1111.111 is NaN for E4M3 (no infinities)."""
    e_bits, m_bits = t.exponent, t.mantissa
    bias, top = 2 ** (e_bits - 1) - 1, 2 ** e_bits - 1
    values = []
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e, f = (code >> m_bits) & top, code & (2 ** m_bits - 1)
        if t.finite and e == top and f == 2 ** m_bits - 1:
            values.append(float("nan"))
        elif not t.finite and e == top:
            values.append(sign * float("inf") if f == 0 else float("nan"))
        elif e == 0:
            values.append(sign * f / 2 ** m_bits * 2.0 ** (1 - bias))
        else:
            values.append(sign * (1 + f / 2 ** m_bits) * 2.0 ** (e - bias))
    return values


def _nearest_even(x, t):
    """x rounded by brute force over the defined grid: the nearest code among the non-negative finite ones
    and the one just past the largest (E5M2: infinity 0x7C; E4M3: 0x7F, NaN), a tie to the even code (its
    last mantissa bit 0); past that last one, the same overflow code; the sign bit added back."""
    table = _defined(t)
    grid = [c for c in range(0x80) if np.isfinite(table[c])]
    overflow = grid[-1] + 1
    past = table[grid[-1]] + (table[grid[-1]] - table[grid[-2]])     # the overflow code's value, were it finite
    if np.isnan(x):
        return None
    a = abs(float(x))
    candidates = [(abs(a - table[c]), c & 1, c) for c in grid] + [(abs(a - past), overflow & 1, overflow)]
    code = overflow if a > past else min(candidates)[2]
    return code | (0x80 if np.signbit(x) else 0)


@pytest.mark.parametrize("t", [Float8E4M3FN, Float8E5M2])
def test_the_8_bit_floats_exhaustively(t):
    """Oracle: the format's definition (neither PyTorch nor ml_dtypes is in this venv; the next test compares
    with them where they are). decode: all 256 codes against _defined. encode: round to nearest, ties to
    even, of the defined grid (brute force), on random values, every midpoint between neighbours (the ties)
    and values past the largest: E4M3 turns them into NaN (it has no infinity), E5M2 into infinity."""
    table = np.array(_defined(t), dtype=np.float64)
    assert np.array_equal(decode(np.arange(256, dtype=np.uint8), t).astype(np.float64), table, equal_nan=True)
    finite = np.unique(np.abs(table[np.isfinite(table)]))                     # 0 and the positive values
    mids = (finite[1:] + finite[:-1]) / 2
    rng = np.random.default_rng(1)
    x = np.concatenate([mids, -mids, rng.standard_normal(3000) * finite[-1] / 4,
                        rng.uniform(0, finite[1] * 8, 1000), finite[-1] * np.array([1.03, 1.07, 1.2, 3.0])])
    got = encode(x, t)
    want = np.array([_nearest_even(v, t) for v in x], dtype=np.uint8)
    assert np.array_equal(got, want), x[got != want][:5]
    assert np.isnan(decode(encode(np.nan, t), t))


def test_the_8_bit_floats_as_a_library_rounds_them():
    """Where ml_dtypes or PyTorch is installed: the same bits as their float8_e4m3fn / float8_e5m2 casts, and
    the same values for all 256 codes."""
    try:
        import ml_dtypes
        kinds = {Float8E4M3FN: ml_dtypes.float8_e4m3fn, Float8E5M2: ml_dtypes.float8_e5m2}
        to_bits = lambda x, k: x.astype(k).view(np.uint8)                                       # noqa: E731
        from_bits = lambda b, k: b.view(k).astype(np.float32)                                   # noqa: E731
    except ImportError:
        torch = pytest.importorskip("torch", reason="neither ml_dtypes nor PyTorch is installed")
        kinds = {Float8E4M3FN: torch.float8_e4m3fn, Float8E5M2: torch.float8_e5m2}
        to_bits = lambda x, k: torch.from_numpy(x).to(k).view(torch.uint8).numpy()              # noqa: E731
        from_bits = lambda b, k: torch.from_numpy(b).view(k).float().numpy()                    # noqa: E731
    rng = np.random.default_rng(2)
    bits = np.arange(256, dtype=np.uint8)
    for t, kind in kinds.items():
        assert np.array_equal(decode(bits, t), from_bits(bits, kind), equal_nan=True)
        largest = float(np.nanmax(decode(bits[:0x7F], t)))
        x = (rng.standard_normal(20000) * np.exp2(rng.uniform(-20, 1, 20000)) * largest).astype(np.float32)
        ours, theirs = encode(x, t), to_bits(x, kind)
        same = (ours == theirs) | (np.isnan(decode(ours, t)) & np.isnan(decode(theirs, t)))
        assert np.all(same), x[~same][:5]
