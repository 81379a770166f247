"""kernels.instructions in Numba's CUDA simulator: every self-test against NumPy, and the twins' own checks."""

import numpy as np
import pytest
from numba import cuda

from cutelite import make_mma_atom
from kernels.instructions import (
    SIMULATOR, ld_global_v4_f32, ldmatrix_x4, mma_for, mma_m16n8k8_f32_f16, selftest, shfl_down_sync, shfl_sync,
    shfl_up_sync, sim, syncwarp,
)

pytestmark = pytest.mark.numba("simulator")
TEST_NAMES = list(selftest.TESTS)


def test_instructions_are_the_twins_built_from_the_atoms():
    assert SIMULATOR is True and mma_m16n8k8_f32_f16.__module__ == sim.__name__
    assert mma_for(make_mma_atom("SM75_16x8x8_F32F16F16F32_TN")) is mma_m16n8k8_f32_f16   # one per PTX


@pytest.mark.parametrize("name", TEST_NAMES)
def test_selftest_matches_numpy(name):
    r = selftest.run_all([name], seed=3)[0]
    assert r.ok, r.note


def test_poisoned_output_is_caught():
    r = selftest.check("x", np.array([1.0, np.nan]), np.array([1.0, 2.0]), 1e-3)
    assert not r.ok and "not written" in r.note


def test_setup_banner(capsys):
    import kernels
    info = kernels.setup()
    assert info.simulator and info.cc is None
    assert "kernels run in the CUDA simulator, sizes reduced" in capsys.readouterr().out
    assert kernels.pick_size(1024, 64) == 64 and kernels.in_simulator()
    kernels.require("cp.async")      # every instruction has a twin in the simulator


def test_shuffles_and_syncwarp_in_two_warps():
    @cuda.jit
    def k(out):
        t = cuda.threadIdx.x
        lane = t % 32
        syncwarp()
        out[0, t] = shfl_sync(0xFFFFFFFF, t * 10, 31 - lane)
        out[1, t] = shfl_down_sync(0xFFFFFFFF, t, 3)
        out[2, t] = shfl_up_sync(0xFFFFFFFF, t, 1)

    out = np.full((3, 64), -1, np.int64)
    k[1, 64](out)
    t = np.arange(64)
    lane, base = t % 32, t - t % 32
    assert np.array_equal(out[0], (base + 31 - lane) * 10)
    assert np.array_equal(out[1], np.where(lane + 3 < 32, t + 3, t))
    assert np.array_equal(out[2], np.where(lane >= 1, t - 1, t))


def test_misaligned_vector_load_is_an_error():
    @cuda.jit
    def k(a, out):
        v = ld_global_v4_f32(a, 2)          # 8 bytes in: the GPU would fault
        out[0] = v[0]

    with pytest.raises(ValueError, match="not 16-byte aligned"):
        k[1, 1](np.zeros(8, np.float32), np.zeros(1, np.float32))


def test_divergent_warp_instruction_is_reported(monkeypatch):
    monkeypatch.setattr(sim, "_TIMEOUT", 1.0)

    @cuda.jit
    def k(out):
        s = cuda.shared.array(256, np.uint16)
        if cuda.threadIdx.x < 16:           # half the warp never reaches ldmatrix
            r = ldmatrix_x4(s, 0)
            out[0] = r[0]

    with pytest.raises(RuntimeError, match="only 16 of the 32 lanes"):
        k[1, 32](np.zeros(1, np.uint32))


def test_twins_refuse_to_run_outside_a_kernel():
    with pytest.raises(RuntimeError, match="only inside a kernel"):
        shfl_sync(0xFFFFFFFF, 1, 0)
