"""kernels: the parts that need no numba (fragment maps, capability table, bf16 helpers, layout codegen
as plain Python). Importing this module must not import numba."""

import itertools
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from kernels import capability as cap
import ptx_fragments as F
from kernels.layout_codegen import layout_pyfunc, layout_source
from kernels.numeric import as_b32, from_bf16_bits, to_bf16_bits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_import_kernels_does_not_import_numba():
    code = "import sys, kernels, kernels.capability, kernels.layout_codegen; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


# ---- fragment maps: every operand element is held by exactly one (lane, element) -----------------------
@pytest.mark.parametrize("fmap, n, rows, cols", [
    (F.a_m16n8k16, 8, 16, 16), (F.b_m16n8k16, 4, 16, 8), (F.c_m16n8, 4, 16, 8),
    (F.a_m16n8k8, 4, 16, 8), (F.b_m16n8k8, 2, 8, 8),
])
def test_m16n8_fragments_are_bijections(fmap, n, rows, cols):
    seen = {fmap(lane, i) for lane in range(32) for i in range(n)}
    assert len(seen) == 32 * n == rows * cols
    assert seen == set(itertools.product(range(rows), range(cols)))


@pytest.mark.parametrize("fmap, n, rows, cols", [
    (F.a_m8n8k4, 4, 8, 4), (F.b_m8n8k4, 4, 4, 8), (F.c_m8n8k4_f32, 8, 8, 8), (F.c_m8n8k4_f16, 8, 8, 8),
])
def test_m8n8k4_fragments_cover_each_quadpair_once(fmap, n, rows, cols):
    for q in range(4):
        lanes = [lane for lane in range(32) if F.quadpair(lane) == q]
        assert lanes == [4 * q, 4 * q + 1, 4 * q + 2, 4 * q + 3, 16 + 4 * q, 17 + 4 * q, 18 + 4 * q, 19 + 4 * q]
        seen = {fmap(lane, i) for lane in lanes for i in range(n)}
        assert seen == set(itertools.product(range(rows), range(cols)))


def test_m8n8k4_f32_accumulator_rows_match_the_isa():
    # lanes 16..31 hold rows 4..7 (the ">= 16" of the facts note, not "> 16")
    assert {F.c_m8n8k4_f32(lane, i)[0] >= 4 for lane in range(16, 32) for i in range(8)} == {True}
    assert {F.c_m8n8k4_f32(lane, i)[0] < 4 for lane in range(16) for i in range(8)} == {True}


def test_ldmatrix_maps():
    assert [F.ldmatrix_row_of(lane) for lane in (0, 7, 8, 31)] == [(0, 0), (0, 7), (1, 0), (3, 7)]
    for trans in (False, True):
        seen = {F.ldmatrix_elem(lane, h, trans) for lane in range(32) for h in range(2)}
        assert seen == set(itertools.product(range(8), range(8)))
    assert F.ldmatrix_elem(5, 1, True) == tuple(reversed(F.ldmatrix_elem(5, 1, False)))


# ---- capability table ------------------------------------------------------------------------------------
@pytest.mark.parametrize("atom_name,shape", [
    ("SM80_16x8x16_F32F16F16F32_TN", "m16n8k16"), ("SM80_16x8x16_F32BF16BF16F32_TN", "m16n8k16"),
    ("SM80_16x8x16_F16F16F16F16_TN", "m16n8k16"), ("SM75_16x8x8_F32F16F16F32_TN", "m16n8k8"),
    ("SM80_16x8x8_F32BF16BF16F32_TN", "m16n8k8")])
def test_mma_atoms_hold_the_ptx_isa_fragments(atom_name, shape):
    """The instructions take their operand placement from cutelite's atoms (kernels.instructions): here the
    atoms agree with the PTX ISA's figures, element by element (f16 accumulators: two per register)."""
    from cutelite import fragment_of, make_mma_atom
    atom = make_mma_atom(atom_name)
    amap, na, bmap, nb, cmap, nc, *_ = F.MMA_SHAPES[shape]
    for lane in range(32):
        assert [rc for _, rc in fragment_of(atom, "A", lane)] == [amap(lane, i) for i in range(na)]
        assert [rc for _, rc in fragment_of(atom, "B", lane)] == [bmap(lane, i) for i in range(nb)]
        assert [rc for _, rc in fragment_of(atom, "C", lane)] == [cmap(lane, i) for i in range(nc)]


@pytest.mark.parametrize("op,num,trans", [("SM75_U32x1_LDSM_N", 1, False), ("SM75_U32x4_LDSM_N", 4, False),
                                          ("SM75_U16x2_LDSM_T", 1, True), ("SM75_U16x8_LDSM_T", 4, True)])
def test_ldmatrix_atoms_deliver_the_ptx_isa_elements(op, num, trans):
    """What kernels.instructions' ldmatrix twin computes from the copy atom's layouts: lane l's value v of
    matrix j is element ldmatrix_elem(l, v % 2) of the 8x8 matrix whose rows lanes 8j..8j+7 address."""
    from cutelite import make_copy_atom
    atom = make_copy_atom(op, "half_t")
    src, dst = atom.ValLayoutSrc, atom.ValLayoutDst
    row_of = {src(lane, 0) // 8: lane for lane in reversed(range(32))}   # which lane gives each row
    for lane in range(32):
        for v in range(2 * num):
            j, h = v // 2, v % 2
            r, c = F.ldmatrix_elem(lane, h, trans)
            want_lane = 8 * j + r                     # the lane that gave row r of matrix j
            assert (dst(lane, v) // 8, dst(lane, v) % 8) == (src(want_lane, 0) // 8, c)
            assert row_of[dst(lane, v) // 8] == want_lane


def test_t4_capabilities():
    t4 = (7, 5)
    for name in ("mma.m8n8k4.f16", "mma.m16n8k8.f16", "ldmatrix", "ld.global.v4"):
        assert cap.supports(name, t4)
    for name in ("mma.m16n8k16.f16", "mma.m16n8k16.bf16", "mma.m16n8k8.bf16", "cp.async"):
        assert not cap.supports(name, t4) and cap.supports(name, (8, 0))
    assert cap.best_mma_for(t4) == "m16n8k8"
    assert cap.best_mma_for((8, 0)) == "m16n8k16" == cap.best_mma_for((9, 0))
    assert cap.best_mma_for((7, 0)) == "m8n8k4"
    with pytest.raises(cap.CapabilityError):
        cap.best_mma_for((7, 5), "bf16")


def test_require_names_instruction_and_device():
    with pytest.raises(cap.CapabilityError, match=r"cp.async needs sm_80 .* Tesla T4 \(sm_75\)"):
        cap.require("cp.async", (7, 5), "Tesla T4")
    cap.require("ldmatrix", (7, 5), "Tesla T4")
    with pytest.raises(KeyError, match="unknown instruction"):
        cap.supports("tcgen05.mma", (10, 0))


# ---- bf16 and packing helpers --------------------------------------------------------------------------
def test_capability_is_the_floor():
    """kernels.capability imports nothing of kernels or numba, only cutelite (whose atoms name the instructions):
    kernels.runtime builds on it, not the other way round."""
    import ast
    tree = ast.parse(open(cap.__file__).read())
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert all(isinstance(n, ast.ImportFrom) and n.level == 0 and n.module.split(".")[0] == "cutelite" for n in imports)


def test_bf16_round_to_nearest_even():
    x = np.array([1.0, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, -2.5, np.inf, np.nan, 3.4e38], np.float32)
    b = to_bf16_bits(x)
    assert list(b[:4]) == [0x3F80, 0x3F80, 0x3F82, 0xC020]   # ties go to even
    assert b[4] == 0x7F80 and np.isnan(from_bf16_bits(b[5:6]))[0]
    assert np.isinf(from_bf16_bits(b[6:7]))[0]               # rounds past the largest bf16
    y = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    rounded = from_bf16_bits(to_bf16_bits(y))
    assert np.all(np.abs(rounded - y) <= np.abs(y) * 2 ** -8)
    assert np.array_equal(from_bf16_bits(to_bf16_bits(rounded)), rounded)


def test_as_b32_low_half_first():
    h = np.array([[1.0, 2.0]], np.float16)
    assert as_b32(h)[0, 0] == (0x4000 << 16) | 0x3C00
    with pytest.raises(ValueError):
        as_b32(np.zeros(3, np.float16))


# ---- layout codegen, as plain Python, against cutelite ---------------------------------------------------
cutelite = pytest.importorskip("cutelite")
Layout, Swizzle, composition, size = cutelite.Layout, cutelite.Swizzle, cutelite.composition, cutelite.size
ComposedLayout = cutelite.ComposedLayout


def _random_shape(rng, depth=2):
    if depth == 0 or rng.random() < 0.5:
        return rng.choice([1, 2, 3, 4, 5, 8])
    return tuple(_random_shape(rng, depth - 1) for _ in range(rng.randint(1, 3)))


def _random_stride(rng, shape):
    if isinstance(shape, int):
        return rng.choice([0, 1, 2, 3, 7, 16, 64])
    return tuple(_random_stride(rng, s) for s in shape)


def _mode_sizes(layout):
    shape = layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)
    return [size(s) for s in shape]


def _check(layout):
    f, g = layout_pyfunc(layout), layout_pyfunc(layout, by_mode=True)
    for i in range(size(layout)):
        assert f(i) == layout(i), (str(layout), i)
    for c in itertools.product(*[range(n) for n in _mode_sizes(layout)]):
        assert g(*c) == layout(*c), (str(layout), c)


def test_codegen_matches_cutelite_on_random_layouts():
    rng = random.Random(7)
    for _ in range(150):
        shape = _random_shape(rng)
        _check(Layout(shape, _random_stride(rng, shape)))


@pytest.mark.parametrize("sw, inner", [
    ((3, 3, 3), ((8, 64), (64, 1))), ((2, 3, 3), ((16, 32), (32, 1))), ((1, 3, 3), ((32, 16), (16, 1))),
    ((2, 4, -3), ((16, 16), (1, 16))), ((3, 2, 4), (((4, 2), 64), ((1, 256), 4))),
])
def test_codegen_matches_cutelite_on_swizzled_layouts(sw, inner):
    _check(composition(Swizzle(*sw), Layout(*inner)))


def test_codegen_folds_constants():
    src = layout_source(Layout((8, 8), (8, 1)))
    assert "return (i & 7) * 8 + (i >> 3)" in src
    assert "// 1" not in layout_source(Layout((4, 3), (3, 1)))
    assert "% 3" in layout_source(Layout((3, 4), (4, 1)))
    assert layout_source(Layout((4, 1, 3), (1, 0, 4))).endswith("return (i & 3) + (i >> 2) * 4\n")
    sw = layout_source(composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))
    assert "o = o ^ ((o & 448) >> 3)  # Sw<3,3,3>" in sw


def test_codegen_prints_what_the_expression_computes():
    from kernels.expr import Sym, src
    from kernels.layout_codegen import _text
    a, b, c = Sym("a"), Sym("b"), Sym("c")
    exprs = [a - (b + c), a - (b - c), (a - b) + c, a + (b - c), a * (b + c), (a & 7) * 8 + (b >> 3),
             a ^ ((a & 448) >> 3), (a % 3) * 4 + b // 3, a - b * 2 + 5, (a << 2) | (b & 1), a * -3 + (-b)]
    for e in exprs:
        for v in itertools.product((0, 1, 6, 37, 500), repeat=3):
            env = dict(zip("abc", v))
            assert eval(_text(e), env) == eval(src(e), env), (src(e), _text(e))
    assert _text(a - (b + c)) == "a - (b + c)" and _text(a + (b - c)) == "a + b - c"


def test_codegen_matches_cutelite_with_an_outer_layout():
    _check(ComposedLayout(Layout((4, 8), (8, 1)), 3, Layout((2, 4), (1, 2))))
    _check(ComposedLayout(composition(Swizzle(1, 2, 3), Layout(32, 1)), 0, Layout((4, 8), (8, 1))))


def test_codegen_names_the_function_and_takes_only_layouts():
    f = layout_pyfunc(Layout((4, 8), (8, 1)), name="row_major")
    assert f.__name__ == "row_major" and [f(i) for i in (0, 1, 4)] == [0, 8, 1]
    assert "def row_major(i):" in f.source
    for not_a_layout in (42, ((4, 8), (8, 1))):
        with pytest.raises(TypeError, match="layout_source: expected a Layout"):
            layout_source(not_a_layout)
