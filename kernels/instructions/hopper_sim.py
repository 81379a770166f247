"""Simulator twins of the Hopper (sm_90a) instructions of kernels.instructions.hopper_ptx.

The fences, commit/wait (wgmma's and the TMA store's bulk groups) and setmaxnreg are no-ops and mbarrier
waits succeed at once (a simulated block runs its threads to each barrier together); wgmma and the TMA
loads and stores raise CapabilityError ("needs sm_90a"): the simulator has no tensor-memory engine to stand
in for them. A launch that needs their results passes kernels.instructions.hopper_model's working model of
TMA loads, mbarriers and wgmma to the kernel's build as overrides. Under a profile below sm_90 (kernels.setup(profile="sm_75")) every twin but the named barriers
raises CapabilityError when it runs, as the compiler would for that GPU.
"""

from ..capability import CapabilityError
from ..runtime import check_target


def _need_sm90a(name):
    return CapabilityError("%s needs sm_90a (a Hopper GPU); Numba's simulator has no twin for it" % name)


# ---- simulator twins: no-ops where the hardware's effect is ordering only ------------------------
def wgmma_fence(*acc):
    check_target("wgmma")
    return acc[0] if acc else None

def wgmma_commit():
    check_target("wgmma")

def wgmma_wait(acc, n):
    check_target("wgmma")
    return acc

def fence_proxy_async():
    check_target("fence.proxy.async")

def fence_mbarrier_init():
    check_target("mbarrier.try_wait")

def setmaxnreg_inc(n):
    check_target("setmaxnreg")

def setmaxnreg_dec(n):
    check_target("setmaxnreg")

def named_barrier_sync(bar_id, count):
    pass

def named_barrier_arrive(bar_id, count):
    pass

def mbarrier_init(bar, idx, count):
    check_target("mbarrier.try_wait")
    bar[idx] = 0

def tma_store_commit():
    check_target("cp.async.bulk.tensor")

def tma_store_wait_read(n):
    check_target("cp.async.bulk.tensor")

def tma_store_wait(n):
    check_target("cp.async.bulk.tensor")

def mbarrier_arrive(bar, idx):
    check_target("mbarrier.try_wait")

def mbarrier_arrive_expect_tx(bar, idx, nbytes):
    check_target("mbarrier.try_wait")

def mbarrier_arrive_cluster(bar, idx, cta):
    check_target("mbarrier.try_wait")
    if cta != 0:
        raise CapabilityError("mbarrier_arrive_cluster: an arrival on block %d of a cluster; Numba's simulator runs "
                              "one block at a time (clusters of one block only)" % cta)

def cluster_arrive():
    check_target("mbarrier.try_wait")

def cluster_wait():
    check_target("mbarrier.try_wait")

def mbarrier_try_wait(bar, idx, parity):
    check_target("mbarrier.try_wait")
    return 1

def shared_address(arr, idx):
    return idx * arr.itemsize

def wgmma_zero(n):
    check_target("wgmma")
    return (0.0,) * (n // 2)

wgmma_uninit = wgmma_zero

def _refuse(name):
    def twin(*args):
        raise _need_sm90a(name)
    twin.__name__ = name
    return twin

wgmma = _refuse("wgmma.mma_async")
wgmma_rs = _refuse("wgmma.mma_async (A from registers)")
tma_load_2d = _refuse("cp.async.bulk.tensor")
tma_prefetch_desc = _refuse("prefetch.tensormap")
tma_store_2d = _refuse("cp.async.bulk.tensor (store)")
tma_load_2d_multicast = _refuse("cp.async.bulk.tensor (multicast)")
tma_load_4d = _refuse("cp.async.bulk.tensor.4d")
tma_store_4d = _refuse("cp.async.bulk.tensor.4d (store)")
tma_reduce_add_2d = _refuse("cp.reduce.async.bulk.tensor (add)")
