"""The fused epilogues as real PTX, offline: chapter 7's T4 step and the SIMT kernel with an epilogue assemble for
sm_75 in registers only; chapter 8's TMA-store kernel with one assembles for sm_90a with its wgmma pipeline
intact, nothing spilled, one TMA store per 64 x 128-byte box; GELU is one tanh.approx.f32 a value."""

import pytest

from kernels.cutejit import Epilogue
from test_hopper_ptx import _compile, _ptxas
from test_kernels_ptx import PTXAS, T, compile_kernel_ptx, ptxas, toolchain  # noqa: F401  (the fixture)

pytestmark = pytest.mark.numba("cuda")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not found")

EPI = Epilogue(out="bfloat16", alpha=True, beta=True, bias="col", activation="gelu")


def _arguments(epi, d, bias):
    """The Numba types of an Epilogue's run-time arguments after D (C is D's type)."""
    return tuple(t for t, m in zip((d, bias, T.float32, T.float32), epi.matrices()) if m is not None)


@needs_ptxas
@pytest.mark.parametrize("epi", [EPI])      # every option at once: one compile of a minute or more
def test_t4_step_with_an_epilogue_is_t4_legal(toolchain, epi):  # noqa: F811
    from kernels.gemm import tc_sm75
    k = tc_sm75.make(**dict(tc_sm75.BEST, epi=epi))
    sig = (T.uint16[:, :], T.uint16[:, :], T.uint16[:, :]) + _arguments(epi, T.uint16[:, :], T.float32[:, :])
    ptx = compile_kernel_ptx(k.numba, sig, (7, 5))
    assert "ld.local" not in ptx and "cvt.rn.bf16x2" not in ptx        # sm_75 rounds to bf16 in integers
    assert ptx.count("tanh.approx.f32") == (128 if epi.activation == "gelu" else 0)   # 128 values a thread
    rc, err = ptxas(ptx, "sm_75")
    assert rc == 0, err


@needs_ptxas
def test_simt_kernel_with_an_epilogue_is_t4_legal(toolchain):  # noqa: F811
    from kernels.gemm import simt_unrolled
    epi = Epilogue(out="float16", alpha=True, beta=True, bias="col", activation="gelu")
    f2 = T.float32[:, ::1]
    sig = (f2, f2, T.uint16[:, ::1]) + _arguments(epi, T.uint16[:, ::1], T.float32[:, :])
    ptx = compile_kernel_ptx(simt_unrolled.make(epi), sig, (7, 5))
    assert "ld.local" not in ptx and ptx.count("tanh.approx.f32") == 64
    rc, err = ptxas(ptx, "sm_75")
    assert rc == 0, err


def _hopper_epilogue_ptx(epi, tile):
    """(PTX, ptxas's report, the kernel) of matmul's Hopper kernel for `tile` with Epilogue `epi`."""
    from kernels.hopper import warp_specialized
    from kernels.lib.wgmma import config_for
    config = config_for(tile)
    k = warp_specialized.make(BN=config["BN"], stages=config["stages"], consumers=config["consumers"],
                              regs=config["regs"], group=16, persistent=True, tma_store=True, epi=epi)
    d = T.uint16[:, ::1] if epi.out != "float32" else T.float32[:, ::1]
    sig = (T.float16[:, ::1], T.float16[:, ::1], d) + (T.uint64[::1],) * 3 + _arguments(epi, d, T.float32[:, :])
    ptx = _compile(k.function, sig)
    rc, err = _ptxas(ptx, ["-maxrregcount=%d" % ((65536 // k.threads) // 8 * 8)])
    assert rc == 0, err
    return ptx, err, k


@needs_ptxas
@pytest.mark.parametrize("epi", [EPI])
def test_hopper_kernel_with_an_epilogue_keeps_its_pipeline(epi):
    """matmul's 64 x 128 tile (choose_tile's for M <= 64 and small products: one consumer warpgroup, no
    setmaxnreg, 8 stages) with every option: its wgmma pipeline and one TMA store a box, nothing spilled.
    `python tests/test_epilogue_ptx.py` assembles the 64 x 256 and 128 x 256 tiles the same way (a minute and
    more each, left out of CI; 64 x 256 with every option: no spills, 2026-11-27)."""
    from kernels.lib.shapes import Tile
    ptx, err, k = _hopper_epilogue_ptx(epi, Tile(64, 128, 1))
    boxes = 128 // (64 if epi.out != "float32" else 32)
    assert ptx.count("wgmma.mma_async") == 4 and ptx.count("cp.async.bulk.tensor") == 2 + boxes
    assert ("cvt.rn.bf16x2.f32" in ptx) == (epi.out == "bfloat16")
    assert "C7515" not in err and "serialized" not in err, err
    assert "0 bytes spill stores" in err, err


def test_pack_bf16x2_is_cvt_from_sm80_and_integer_rounding_before(toolchain):  # noqa: F811
    """One pack_bf16x2: cvt.rn.bf16x2.f32 where the target has it (sm_80 on), integer rounding on a T4."""
    from kernels.instructions import selftest
    f1, u1 = T.float32[::1], T.uint32[::1]
    sig = (f1, f1, f1, u1, f1)
    assert "cvt.rn.bf16x2.f32" in compile_kernel_ptx(selftest.k_fast_math, sig, (8, 0))
    assert "cvt.rn.bf16x2.f32" not in compile_kernel_ptx(selftest.k_fast_math, sig, (7, 5))


if __name__ == "__main__":
    import kernels
    kernels.setup(simulator=False, verbose=False)
    from kernels.lib.shapes import Tile
    for tile in (Tile(64, 128, 1), Tile(64, 256, 1), Tile(128, 256, 1)):
        ptx, err, _ = _hopper_epilogue_ptx(EPI, tile)
        spills = "0 bytes spill stores" in err and "C7515" not in err
        print("%dx%d with %s: %s" % (tile.BM, tile.BN, EPI, "no spills, pipeline kept" if spills else err))
