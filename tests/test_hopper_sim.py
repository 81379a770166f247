"""kernels.instructions (Hopper) in Numba's CUDA simulator: the ordering-only intrinsics are no-ops (a kernel using them
runs), and wgmma / TMA refuse with a clear "needs sm_90a" (no twin can stand in for the async engines)."""
import numpy as np
import pytest
from numba import cuda

from kernels import instructions as H
from kernels.capability import CapabilityError

pytestmark = pytest.mark.numba("simulator")


def test_sim_noops_and_refusals():
    @cuda.jit
    def k(out):
        bars = cuda.shared.array(2, np.uint64)
        H.mbarrier_init(bars, 0, 1)
        H.fence_mbarrier_init()
        cuda.syncthreads()
        H.mbarrier_arrive_expect_tx(bars, 0, 128)
        while H.mbarrier_try_wait(bars, 0, 0) == 0:
            pass
        H.fence_proxy_async()
        H.named_barrier_arrive(1, 256)
        H.named_barrier_sync(2, 256)
        acc = H.wgmma_wait(H.wgmma_fence(H.wgmma_zero(16)), 0)
        H.wgmma_commit()
        H.tma_store_commit()
        H.tma_store_wait_read(1)
        H.tma_store_wait(0)
        out[cuda.threadIdx.x] = len(acc) + acc[0]

    out = np.zeros(4, np.float32)
    k[1, 4](out)
    assert (out == 8).all()
    with pytest.raises(CapabilityError, match="needs sm_90a"):
        H.wgmma((0.0,) * 8, 0, 0, 1, "f32.f16.f16", 0)
    with pytest.raises(CapabilityError, match="needs sm_90a"):
        H.tma_load_2d(None, 0, None, None, 0, 0, 0)
    with pytest.raises(CapabilityError, match="needs sm_90a"):
        H.tma_store_2d(None, None, 0, 0, 0)
    with pytest.raises(CapabilityError, match="needs sm_90a"):
        H.tma_reduce_add_2d(None, None, 0, 0, 0)


def test_ladder_steps_and_option_errors():
    from kernels.hopper import EXPLORE, LADDER, MATMUL_CONFIG, HopperGemm, step
    assert [s.label[0] for s in LADDER] == list("123456") and not any(s.label for s in EXPLORE)
    assert LADDER[0].config.get("cp_async") and step(LADDER[4].name) is LADDER[4] and LADDER[4].config is MATMUL_CONFIG
    assert [s.module.__name__.rsplit(".", 1)[1] for s in LADDER] == ["wgmma_cp_async"] + ["warp_specialized"] * 4 + [
        "pingpong"] and all(callable(getattr(s.module, s.quoted).fn) for s in LADDER)
    g = HopperGemm(BN=128, stages=3, cp_async=True)
    assert (g.BM, g.kernel.threads, g.kernel.smem_bytes) == (128, 256, 3 * 2 * (128 + 128) * 64)
    for bad in (dict(persistent=True), dict(tma_store=True), dict(regs=(40, 232))):
        with pytest.raises(ValueError, match="cp_async=True is step 1"):
            HopperGemm(cp_async=True, **bad)
