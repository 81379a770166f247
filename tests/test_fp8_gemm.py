"""The FP8 GEMM (kernels.hopper.fp8) in Numba's simulator, its TMA loads, mbarriers and wgmma played by
kernels.instructions.hopper_model: C against a float64 product of the dequantized inputs (kernels.numeric's
decode, checked against the formats' definitions in test_numeric), outputs poisoned first.

The model is checked where the hardware has been: chapter 8's f16 kernel, verified on H100s, gives NumPy's
product through it. Also: what the wgmma intrinsic takes (K from the type: 32 for 8-bit inputs, PTX ISA), the
register arithmetic of cutejit.elementwise (bf16 rounding against the bit formula for ties-to-even), refusals.
"""

import numpy as np
import pytest

import kernels

kernels.setup(verbose=False, simulator=True)

from kernels.hopper import fp8, objects as hopper_objects, warp_specialized  # noqa: E402
from kernels.instructions.hopper_model import HopperModel  # noqa: E402
from kernels.numeric import decode, encode  # noqa: E402

pytestmark = pytest.mark.numba("simulator")

E4M3, E5M2 = "float8_e4m3fn", "float8_e5m2"


def _bf16_bits(x):
    """float32 -> bfloat16 bits, rounded to nearest even: the top 16 bits after adding 0x7FFF + the kept lsb."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def _run(M, N, K, dtype=E4M3, scales="tensor", seed=0, grid=1, **config):
    """(C as float64, the float64 reference) of one launch of the FP8 kernel through the model."""
    rng = np.random.default_rng(seed)
    a, bt = encode(rng.standard_normal((M, K)) * 2, dtype), encode(rng.standard_normal((N, K)) * 2, dtype)
    A, Bt = decode(a, dtype).astype(np.float64), decode(bt, dtype).astype(np.float64)
    la, lb = fp8.scale_shapes(M, N, K, scales)
    sizes = [(lay.shape[0][1], lay.shape[1][1]) for lay in (la, lb)]          # (MN blocks, K blocks)
    sa, sb = (rng.uniform(0.25, 4, s).astype(np.float32) for s in sizes)
    # the reference: each element times its scale, found through the scale layouts
    ia = np.array([[la(m, k) for k in range(K)] for m in range(M)])
    ib = np.array([[lb(n, k) for k in range(K)] for n in range(N)])
    want = (A * sa.reshape(-1, order="F")[ia]) @ (Bt * sb.reshape(-1, order="F")[ib]).T
    model = HopperModel()
    k = fp8.make(dtype=dtype, scales=scales, overrides=model.overrides(), **config)
    out = k.config["out"]
    C = np.full((M, N), np.nan, np.float32) if out == "float32" else np.full((M, N), 0x7FFF, np.uint16)  # NaN
    o = k.objects
    k.launch(a, bt, C, np.asfortranarray(sa), np.asfortranarray(sb), model.tensor_map(a, o.tmA),
             model.tensor_map(bt, o.tmB), grid=grid)
    got = C if out == "float32" else decode(C, out)
    return got.astype(np.float64), want


def _rel(got, want):
    assert not np.isnan(got).any(), "an output was never written"
    return np.abs(got - want).max() / np.abs(want).max()


@pytest.mark.parametrize("case", [
    dict(M=100, N=72, K=208, promote=1, out="float32"),                     # edges in M, N, K (16-byte rows: TMA)
    dict(M=64, N=128, K=384, promote=2, out="float32", dtype=E5M2),         # a promotion left over at the end
    dict(M=128, N=64, K=256, promote=0, out="float16"),                     # no promotion, fp16 out
    dict(M=96, N=130, K=144, promote=1, out="bfloat16", scales="blockwise", grid=1),   # blockwise, 2 tiles
    dict(M=256, N=72, K=640, promote=4, out="float32", stages=3, grid=1),   # 2 tiles a block: stages drift (5 % 3)
])
def test_fp8_gemm_matches_float64(case):
    case = dict(dict(BN=128, stages=2), **case)
    M, N, K = case.pop("M"), case.pop("N"), case.pop("K")
    got, want = _run(M, N, K, **case)
    tol = {"float32": 1e-6, "float16": 2e-3, "bfloat16": 8e-3}[case["out"]]
    assert _rel(got, want) < tol


def test_model_gives_numpys_product_for_chapter_8s_kernel():
    """The chapter 8 f16 kernel (GPU-verified) through the model: NumPy's product."""
    model = HopperModel()
    o = hopper_objects.objects(128, 128, 2, 2)
    k = warp_specialized.gemm_warp_specialized.build(
        *hopper_objects.operand_matrices(o), o.tmA, o.tmB, o.tmC, o.mma, o.sA, o.sB, o.sC, None, 1, False,
        False, False, None, None, None, None, None, False, threads=384, overrides=model.overrides())
    rng = np.random.default_rng(3)
    a, bt = (rng.standard_normal(s).astype(np.float16) for s in ((128, 192), (128, 192)))
    C = np.full((128, 128), np.nan, np.float32)
    k.launch(a, bt, C, model.tensor_map(a, o.tmA), model.tensor_map(bt, o.tmB), model.tensor_map(a, o.tmA), grid=1)
    assert _rel(C.astype(np.float64), a.astype(np.float64) @ bt.astype(np.float64).T) < 1e-6


def test_wgmma_k_follows_the_input_width():
    """PTX ISA (wgmma.mma_async shapes): K is 16 for .f16/.bf16, 32 for .e4m3/.e5m2, and 8-bit types in any pair."""
    from kernels.instructions.hopper_ptx import WGMMA_K
    assert WGMMA_K["f32.f16.f16"] == WGMMA_K["f32.bf16.bf16"] == 16
    assert {WGMMA_K["f32.%s.%s" % (x, y)] for x in ("e4m3", "e5m2") for y in ("e4m3", "e5m2")} == {32}


def test_fp8_stage_is_128_elements_and_4_wgmmas():
    k = fp8.make(BN=128, stages=4)
    assert k.tile == (128, 128, 128)                  # one 128-byte swizzle row of 8-bit elements
    assert k.source.count("'f32.e4m3.e4m3', 0)") == 4    # four k32 wgmmas a stage
    assert k.smem_bytes >= 4 * (128 + 128) * 128
    assert k.smem_bytes == hopper_objects.shared_bytes(128, 128, 4)   # the formula the stages are chosen by


SM90_SHARED = 227 * 1024       # CUDA C++ Programming Guide: the most shared memory a block may opt in to on 9.0


@pytest.mark.parametrize("BN", [128, 256])
def test_fp8_default_stages_are_the_most_that_fit(BN):
    """Built by default, the kernel fits an sm_90 block's shared memory, and one stage more would not."""
    k = fp8.make(BN=BN, promote=0)
    more = fp8.make(BN=BN, promote=0, stages=k.config["stages"] + 1)
    assert k.smem_bytes <= SM90_SHARED < more.smem_bytes


def test_launch_asking_too_much_shared_memory_is_refused_by_name(monkeypatch):
    """The bench's first BN = 256, 6-stage configuration (295,008 bytes): refused before any launch, by the
    kernel, and by matmul with its configuration."""
    from kernels.lib import fp8 as lib_fp8, matmul
    k = fp8.make(BN=256, stages=6, promote=0)
    a, bt, C = np.zeros((8, 16), np.uint8), np.zeros((8, 16), np.uint8), np.zeros((8, 8), np.float32)
    s = np.ones((1, 1), np.float32)
    with pytest.raises(ValueError, match=r"gemm_fp8 \(.*stages=6.*\): launch asks for 295,008 bytes .* 232,448"):
        k.prepare(a, bt, C, s, s, None, None, grid=1)
    monkeypatch.setitem(lib_fp8.CONFIG, "BN", 256)
    monkeypatch.setitem(lib_fp8.CONFIG, "stages", 6)
    with pytest.raises(ValueError, match=r"matmul: fp8 \(.*BN=256.*stages=6.*\) asks for 295,008 bytes .* 232,448"):
        matmul(a, bt.T, fp8_format="e4m3")


def test_convert_rounds_to_bf16_and_packs_pairs():
    from cutelite import Layout
    from kernels.cutejit import Matrix, copy, kernel, local_tile, make_fragment, thread_idx
    from kernels.cutejit.elementwise import axpy, convert, load_scalar

    @kernel
    def k(mX, mS, mY):
        gX = local_tile(mX, (1, 8), (thread_idx(), 0))
        gY = local_tile(mY, (1, 8), (thread_idx(), 0))
        x = make_fragment(Layout((1, 8)), "float32")
        copy(gX, x)
        y = make_fragment(Layout((1, 8)), "float32")
        copy(gX, y)
        axpy(y, x, lambda c: load_scalar(mS, 0, 0))       # y = x + x * s
        copy(convert(y, "bfloat16"), gY)

    built = k.build(Matrix("float32"), Matrix("float32"), Matrix("bfloat16"), threads=4)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 8)) * 100).astype(np.float32)
    x[0, :4] = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8), 3.0], np.float32) / 1.5   # ties at bf16
    s = np.full((1, 1), 0.5, np.float32)
    y = np.zeros((4, 8), np.uint16)
    built.launch(x, s, y, grid=1)
    assert (y == _bf16_bits(x + x * np.float32(0.5))).all()


def test_refusals_name_the_value():
    with pytest.raises(ValueError, match="float8_e4m3fn or float8_e5m2, got 'float16'"):
        fp8.make(dtype="float16")
    with pytest.raises(ValueError, match="promote=1"):
        fp8.make(scales="blockwise", promote=4)
    with pytest.raises(ValueError, match="out must be one of"):
        fp8.make(out="int8")
    with pytest.raises(ValueError, match="scales must be one of"):
        fp8.scale_shapes(128, 128, 128, "rowwise")


# ---- matmul with 8-bit inputs (kernels.lib.fp8) -----------------------------------------------------------
def test_matmul_fp8_numpy_bits_with_scales():
    """uint8 bits + fp8_format: NumPy arrays, per-tensor scales, an MN-major A (a transposing copy), an odd N (C
    through a buffer of whole pairs), float32 out;
    then device arrays, blockwise scales on the device in matmul's orientation (A's (M, K/128), B's (K/128,
    N/128), row-major: copied into the kernel's MN-major order), a bf16 `out` (uint16 bits)."""
    from numba import cuda
    from kernels.lib import matmul
    rng = np.random.default_rng(8)
    M, N, K = 40, 48, 160
    a = encode(rng.standard_normal((M, K)), E4M3)
    b = encode(rng.standard_normal((K, N)), E4M3)
    A, B = decode(a, E4M3).astype(np.float64), decode(b, E4M3).astype(np.float64)
    got = matmul(np.asfortranarray(a), b[:, :45], scale_a=0.5, scale_b=np.float32(3.0), fp8_format="e4m3")
    assert got.shape == (M, 45) and got.dtype == np.float32 and _rel(got.astype(np.float64), 1.5 * A @ B[:, :45]) < 1e-6
    sa = rng.uniform(0.5, 2, (M, 2)).astype(np.float32)           # per 1 x 128 block of A's rows
    sb = rng.uniform(0.5, 2, (2, 1)).astype(np.float32)           # per 128 x 128 block of B (K, N)
    want = (A * np.repeat(sa, 128, 1)[:, :K]) @ (B * np.repeat(sb, 128, 0)[:K])
    out = cuda.to_device(np.full((M, N), 0x7FFF, np.uint16))      # bf16 bits, NaN
    da, db = cuda.to_device(a), cuda.to_device(b)
    assert matmul(da, db, out=out, scale_a=cuda.to_device(sa), scale_b=cuda.to_device(sb), fp8_format="e4m3") is out
    assert _rel(decode(out.copy_to_host(), "bfloat16").astype(np.float64), want) < 8e-3


def test_matmul_fp8_refusals():
    from kernels.lib import matmul
    a8, b8 = np.zeros((8, 16), np.uint8), np.zeros((16, 8), np.uint8)
    with pytest.raises(ValueError, match="fp8_format must be 'e4m3' or 'e5m2', got 'e3m4'"):
        matmul(a8, b8, fp8_format="e3m4")
    with pytest.raises(TypeError, match="A has dtype float16"):
        matmul(a8.astype(np.float16), b8, fp8_format="e4m3")
    with pytest.raises(TypeError, match="uint8 with fp8_format"):
        matmul(a8, b8)
    with pytest.raises(TypeError, match="scale 8-bit float inputs; A is float16"):
        matmul(a8.astype(np.float16), b8.astype(np.float16), scale_a=2.0)
    with pytest.raises(ValueError, match="both be per tensor"):
        matmul(a8, b8, fp8_format="e4m3", scale_a=np.ones((8, 1), np.float32), scale_b=1.0)
    with pytest.raises(ValueError, match=r"scale_a must have shape \(8, 1\).*got \(8, 2\)"):
        matmul(a8, b8, fp8_format="e4m3", scale_a=np.ones((8, 2), np.float32), scale_b=np.ones((1, 1), np.float32))
    with pytest.raises(ValueError, match=r"scale_b must have shape \(1, 1\).*got \(2, 1\)"):
        matmul(a8, b8, fp8_format="e4m3", scale_a=np.ones((8, 1), np.float32), scale_b=np.ones((2, 1), np.float32))
    with pytest.raises(TypeError, match="scale_a must hold float32 scales, got float64"):
        matmul(a8, b8, fp8_format="e4m3", scale_a=np.ones((8, 1)), scale_b=np.ones((1, 1), np.float32))
    with pytest.raises(ValueError, match=r"out must be a float32 \(8, 8\) array, got float64"):
        matmul(a8, b8, out=np.zeros((8, 8), np.float64), fp8_format="e4m3")
