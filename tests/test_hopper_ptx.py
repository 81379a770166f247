"""kernels.instructions (Hopper) offline: every Hopper intrinsic compiled by numba for sm_90a in a tiny kernel, then
assembled by `ptxas -arch=sm_90a`; the GEMM kernels too (and ptxas must not serialize their wgmma).
Refused for sm_80 by our target check. No GPU needed, but numba must run without the simulator (the
simulator's side is tests/test_hopper_sim.py)."""
import os
import re
import shutil
import subprocess
import tempfile
from unittest import mock

import pytest
from numba import cuda
from numba.cuda import types as T

from kernels import instructions as H

pytestmark = pytest.mark.numba("cuda")
PTXAS = shutil.which("ptxas") or next((os.path.join(h, "bin", "ptxas") for h in (os.environ.get("CUDA_HOME"),
                                       os.environ.get("CUDA_PATH")) if h and os.path.exists(os.path.join(h, "bin", "ptxas"))), None)
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not found (install the CUDA toolkit's nvcc)")


def _ptxas_ptx_version():
    """The newest PTX ISA this ptxas knows (numba may stamp a newer .version than it accepts)."""
    out = subprocess.run([PTXAS, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    major, minor = (int(m.group(1)), int(m.group(2))) if m else (12, 8)
    return "9.%d" % minor if major == 13 else "8.%d" % min(minor, 8)


class _FakeDevice:
    compute_capability = (9, 0)


def _compile(fn, sig, cc=(9, 0, "a")):
    from numba import cuda
    from numba.cuda import dispatcher as _dispatcher
    with mock.patch.object(_dispatcher, "get_current_device", lambda: _FakeDevice()):
        ptx, _ = cuda.compile_ptx(fn, sig, cc=cc)
    return ptx


def _ptxas(ptx, extra=()):
    ptx = re.sub(r"^\.version \S+", ".version " + _ptxas_ptx_version(), ptx, flags=re.M)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        open(src, "w").write(ptx)
        r = subprocess.run([PTXAS, "-arch=sm_90a", "-v", src, "-o", os.path.join(d, "k.cubin"), *extra],
                           capture_output=True, text=True)
    return r.returncode, r.stderr


def k_wgmma(a, out):
    s = cuda.shared.array(4096, T.uint16)
    acc = H.wgmma_uninit(64)
    acc = H.wgmma_fence(acc)
    d = a[0] | ((H.shared_address(s, 0) >> 4) & 0x3FFF)
    acc = H.wgmma(acc, d, d, 0, "f32.f16.f16", 0)
    acc = H.wgmma(acc, d, d, 1, "f32.bf16.bf16", 3)
    H.wgmma_commit()
    acc = H.wgmma_wait(acc, 0)
    H.st_global_v2_f32(out, 2 * cuda.threadIdx.x, (acc[0], acc[1]))


def k_wgmma_fp8(a, out):
    s = cuda.shared.array(4096, T.uint8)
    acc = H.wgmma_uninit(64)
    acc = H.wgmma_fence(acc)
    d = a[0] | ((H.shared_address(s, 0) >> 4) & 0x3FFF)
    acc = H.wgmma(acc, d, d, 0, "f32.e4m3.e4m3", 0)
    acc = H.wgmma(acc, d, d, 1, "f32.e5m2.e4m3", 0)
    H.wgmma_commit()
    acc = H.wgmma_wait(acc, 0)
    H.st_global_v2_f32(out, 2 * cuda.threadIdx.x, (acc[0], acc[1]))


def k_mbarrier_tma(tm, out):
    s = cuda.shared.array(8192, T.uint16)
    bars = cuda.shared.array(2, T.uint64)
    H.mbarrier_init(bars, 0, 1)
    H.fence_mbarrier_init()
    H.tma_prefetch_desc(tm)
    H.mbarrier_arrive_expect_tx(bars, 0, 16384)
    H.tma_load_2d(s, 0, tm, bars, 0, 0, 0)
    while H.mbarrier_try_wait(bars, 0, 0) == 0:
        pass
    H.mbarrier_arrive(bars, 1)
    H.fence_proxy_async()
    out[0] = s[5]


def k_regs_barriers(out):
    s = cuda.shared.array(1024, T.uint16)
    if cuda.threadIdx.x < 128:
        H.setmaxnreg_dec(40)
    else:
        H.setmaxnreg_inc(232)
    if cuda.threadIdx.x < 128:
        H.named_barrier_arrive(1, 256)
    else:
        H.named_barrier_sync(1, 256)
    out[0] = s[3]


def k_tma_store(tm, out):
    s = cuda.shared.array(2048, T.float32)
    t = cuda.threadIdx.x
    acc = H.wgmma_zero(64)
    H.tma_store_wait_read(1)
    H.st_shared_v2_f32(s, 4 * t, (acc[0], acc[1]))
    H.fence_proxy_async()
    H.named_barrier_sync(1, 128)
    if t == 0:
        H.tma_store_2d(tm, s, 0, 32, 64)
        H.tma_reduce_add_2d(tm, s, 0, 32, 64)
        H.tma_store_commit()
        H.tma_store_wait(0)


def k_tma_4d(tm, out):
    s = cuda.shared.array(8192, T.uint16)
    bars = cuda.shared.array(1, T.uint64)
    H.mbarrier_init(bars, 0, 1)
    H.fence_mbarrier_init()
    H.mbarrier_arrive_expect_tx(bars, 0, 16384)
    H.tma_load_4d(s, 0, tm, bars, 0, 0, 64, 1, 2)
    while H.mbarrier_try_wait(bars, 0, 0) == 0:
        pass
    H.fence_proxy_async()
    H.tma_store_4d(tm, s, 0, 0, 128, 1, 2)
    H.tma_store_commit()
    H.tma_store_wait(0)
    out[0] = s[5]


def k_cluster(tm, out):
    s = cuda.shared.array(8192, T.uint16)
    bars = cuda.shared.array(2, T.uint64)
    H.mbarrier_init(bars, 0, 1)
    H.fence_mbarrier_init()
    H.cluster_arrive()
    H.cluster_wait()
    H.mbarrier_arrive_expect_tx(bars, 0, 16384)
    H.tma_load_2d_multicast(s, 0, tm, bars, 0, 0, 64, 3)
    while H.mbarrier_try_wait(bars, 0, 0) == 0:
        pass
    H.mbarrier_arrive_cluster(bars, 1, cuda.threadIdx.x & 1)
    out[0] = s[5]


CASES = {
    "wgmma": (k_wgmma, (T.int64[::1], T.float32[::1]),
              ["wgmma.fence.sync.aligned", "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "p, 1, 1, 1, 1;",
               "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0", "st.global.v2.f32"]),
    "wgmma fp8": (k_wgmma_fp8, (T.int64[::1], T.float32[::1]),
                  ["wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3",
                   "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e4m3", "p, 1, 1;"]),
    "mbarrier+tma": (k_mbarrier_tma, (T.uint64[::1], T.uint16[::1]),
                     ["mbarrier.init.shared::cta.b64", "mbarrier.arrive.expect_tx.shared::cta.b64",
                      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                      "mbarrier.try_wait.parity.shared::cta.b64", "mbarrier.arrive.shared::cta.b64",
                      "fence.proxy.async.shared::cta", "prefetch.tensormap", "fence.mbarrier_init"]),
    "tma store": (k_tma_store, (T.uint64[::1], T.int64[::1]),
                  ["cp.async.bulk.tensor.2d.global.shared::cta.bulk_group", "cp.async.bulk.commit_group",
                   "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.bulk_group",
                   "cp.async.bulk.wait_group.read 1", "cp.async.bulk.wait_group 0", "st.shared.v2.f32",
                   "fence.proxy.async.shared::cta", "bar.sync 1, 128;"]),
    "tma 4d": (k_tma_4d, (T.uint64[::1], T.uint16[::1]),
               ["cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group"]),
    "cluster": (k_cluster, (T.uint64[::1], T.uint16[::1]),
                ["barrier.cluster.arrive.release.aligned", "barrier.cluster.wait.acquire.aligned",
                 "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
                 "mapa.shared::cluster.u32", "mbarrier.arrive.release.cluster.shared::cluster.b64"]),
    "setmaxnreg+named barriers": (k_regs_barriers, (T.uint16[::1],),
                            ["setmaxnreg.dec.sync.aligned.u32 40", "setmaxnreg.inc.sync.aligned.u32 232",
                             "bar.arrive 1, 256;",
                             "bar.sync 1, 256;"]),
}


@needs_ptxas
@pytest.mark.parametrize("name", list(CASES))
def test_intrinsic_assembles_for_sm90a(name):
    fn, sig, expect = CASES[name]
    ptx = _compile(fn, sig)
    assert ".target sm_90a" in ptx
    for text in expect:
        assert text in ptx, text
    rc, err = _ptxas(ptx)
    assert rc == 0, err


def test_ptx_table_is_what_the_intrinsics_emit():
    """hopper_ptx.PTX, which chapter 8 prints against CuTe's names, holds the instructions the intrinsics
    compile to: each one is in the PTX of the kernels above, which call every Hopper intrinsic."""
    from kernels.instructions.hopper_ptx import PTX
    ptx = "\n".join(_compile(fn, sig) for fn, sig, _ in CASES.values())
    for name, text in PTX.items():
        for instruction in text.split("; "):
            assert instruction + " " in ptx or instruction + ";" in ptx or instruction + "." in ptx, (name, instruction)


@pytest.mark.parametrize("name", list(CASES))
def test_refused_below_sm90a(name):
    from kernels.capability import CapabilityError
    fn, sig, _ = CASES[name]
    with pytest.raises(Exception) as e:
        _compile(fn, sig, cc=(8, 0))
    assert isinstance(e.value, CapabilityError) or "needs sm_90a" in str(e.value)


def _gemm_ptx(kernel):
    """The PTX of a built kernels.hopper step (A, Bt f16, C f32, three tensor maps)."""
    f16, f32, tmap = T.float16[:, ::1], T.float32[:, ::1], T.uint64[::1]
    maps = kernel.source.splitlines()[0].count("tm")        # the TensorMap parameters: tmA, tmB[, tmC]
    sig = (f16, f16, f32) + (tmap,) * maps
    return _compile(kernel.function, sig)


@needs_ptxas
@pytest.mark.parametrize("cfg", [dict(BN=128), dict(BN=256, regs=(40, 232), group=8),
                                 dict(BN=256, regs=(40, 232), group=8, persistent=True),
                                 dict(BN=256, regs=(40, 232), group=16, persistent=True, tma_store=True),
                                 dict(BM=64, BN=256, pingpong=True), dict(BM=128, BN=128, pingpong=True),
                                 dict(BN=256, regs=(40, 232), group=16, persistent=True, tma_store=True,
                                      majors=("MN", "MN"))] + [
    # matmul's other tiles (kernels.lib.shapes): 128 x 128, 64 x 256, 64 x 128, split-K and stream-K
    dict(BN=bn, consumers=c, regs=(40, 232) if c == 2 else None, group=16, persistent=True, tma_store=True,
         **({split: True} if split else {}))
    for bn, c, split in ((128, 2, None), (256, 1, None), (128, 1, None), (128, 1, "split_k"), (128, 2, "stream_k"))])
def test_gemm_assembles_without_serialized_wgmma(cfg):
    """Every TMA step: 4 wgmma a k-tile and 64-row atom (BK 64 = 4 x k16), one TMA load a K-major tile (an
    MN-major one takes a 64 x 64 box per 64 rows: 2 for A's 128, 4 for B's 256), and, for the TMA-store epilogue, one store per 64 x 32 box of a warpgroup's 64 x BN accumulator, unrolled (split-K: one reduce-add; stream-K: a store and a reduce-add, one taken)); ptxas keeps
    the wgmma pipeline (no C7515 "serialized"), honours setmaxnreg, spills nothing."""
    from kernels.hopper import pingpong, warp_specialized
    cfg = dict(cfg)
    k = pingpong.make(**cfg) if cfg.pop("pingpong", False) else warp_specialized.make(**cfg)
    ptx = _gemm_ptx(k)
    assert ptx.count("wgmma.mma_async") == 4 * cfg.get("BM", 64) // 64
    boxes = (2 if cfg.get("majors", "K")[0] == "MN" else 1) + (4 if cfg.get("majors", "KK")[1] == "MN" else 1)
    stores = cfg["BN"] // 32 if cfg.get("tma_store") else 0     # split-K adds its boxes (cp.reduce...)
    assert ptx.count("cp.async.bulk.tensor") == boxes + (0 if cfg.get("split_k") else stores)
    adds = stores if cfg.get("split_k") or cfg.get("stream_k") else 0
    assert ptx.count("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add") == adds
    extra = ["-maxrregcount=%d" % ((65536 // k.threads) // 8 * 8)] if k.config.get("regs") else []
    rc, err = _ptxas(ptx, extra)
    assert rc == 0, err
    assert "C7515" not in err and "serialized" not in err, err      # wgmma pipeline intact
    assert "C7508" not in err, err                                   # setmaxnreg honoured
    assert "0 bytes spill stores" in err, err


@needs_ptxas
@pytest.mark.parametrize("cfg", [dict(promote=4, out="bfloat16"), dict(promote=1, scales="blockwise", out="float32")])
def test_fp8_gemm_assembles_without_serialized_wgmma(cfg):
    """kernels.hopper.fp8 (A, Bt e4m3 bits, C, the scales, two tensor maps): 4 k32 wgmma a k-tile (BK 128 =
    4 x 32) and consumer; the promotions' reads of the accumulators keep ptxas's wgmma pipeline (no C7515),
    no spills under setmaxnreg's cap."""
    from kernels.hopper import fp8
    k = fp8.make(**cfg)
    u8, tmap = T.uint8[:, ::1], T.uint64[::1]
    c = T.float32[:, ::1] if cfg["out"] == "float32" else T.uint16[:, ::1]
    ptx = _compile(k.function, (u8, u8, c, T.float32[::1, :], T.float32[::1, :], tmap, tmap))
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3") == 4
    assert ("cvt.rn.bf16x2.f32" in ptx) == (cfg["out"] == "bfloat16")
    rc, err = _ptxas(ptx, ["-maxrregcount=%d" % ((65536 // k.threads) // 8 * 8)])
    assert rc == 0, err
    assert "C7515" not in err and "serialized" not in err, err
    assert "C7508" not in err, err
    assert "0 bytes spill stores" in err, err


@needs_ptxas
def test_cp_async_step_assembles_without_serialized_wgmma():
    from kernels.hopper import wgmma_cp_async
    k = wgmma_cp_async.make(BN=128, stages=4)
    assert (k.threads, k.smem_bytes) == (256, 2 * (128 + 128) * 64 * 4)
    ptx = _gemm_ptx(k)
    assert ptx.count("wgmma.mma_async") == 4 and "cp.async.bulk" not in ptx and "mbarrier" not in ptx
    assert "cp.async.cg.shared.global" in ptx and "fence.proxy.async" in ptx
    rc, err = _ptxas(ptx)
    assert rc == 0, err
    assert "C7515" not in err and "serialized" not in err, err
    assert "0 bytes spill stores" in err, err
