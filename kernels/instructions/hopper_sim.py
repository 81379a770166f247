"""Simulator twins of the Hopper (sm_90a) instructions of kernels.instructions.hopper_ptx.

The fences, commit/wait (wgmma's and the TMA store's bulk groups) and setmaxnreg are no-ops and mbarrier
waits succeed at once (a simulated block runs its threads to each barrier together); wgmma and the TMA
loads and stores raise CapabilityError ("needs sm_90a"): the simulator has no tensor-memory engine to stand
in for them.
"""

from ..capability import CapabilityError


def _need_sm90a(name):
    return CapabilityError("%s needs sm_90a (a Hopper GPU); Numba's simulator has no twin for it" % name)


# ---- simulator twins: no-ops where the hardware's effect is ordering only ------------------------
def wgmma_fence(*acc):
    return acc[0] if acc else None

def wgmma_commit():
    pass

def wgmma_wait(acc, n):
    return acc

def fence_proxy_async():
    pass

def fence_mbarrier_init():
    pass

def setmaxnreg_inc(n):
    pass

def setmaxnreg_dec(n):
    pass

def named_barrier_sync(bar_id, count):
    pass

def named_barrier_arrive(bar_id, count):
    pass

def mbarrier_init(bar, idx, count):
    bar[idx] = 0

def tma_store_commit():
    pass

def tma_store_wait_read(n):
    pass

def tma_store_wait(n):
    pass

def mbarrier_arrive(bar, idx):
    pass

def mbarrier_arrive_expect_tx(bar, idx, nbytes):
    pass

def mbarrier_try_wait(bar, idx, parity):
    return 1

def shared_address(arr, idx):
    return idx * arr.itemsize

def wgmma_zero(n):
    return (0.0,) * (n // 2)

wgmma_uninit = wgmma_zero

def _refuse(name):
    def twin(*args):
        raise _need_sm90a(name)
    twin.__name__ = name
    return twin

wgmma = _refuse("wgmma.mma_async")
tma_load_2d = _refuse("cp.async.bulk.tensor")
tma_prefetch_desc = _refuse("prefetch.tensormap")
tma_store_2d = _refuse("cp.async.bulk.tensor (store)")
stage_acc_f32_sw128 = _refuse("stage_acc_f32_sw128 (a wgmma accumulator)")