"""kernels.cutejit's Hopper pieces, checked on the code they write (no GPU):

- the wgmma descriptors of chapter 8's kernels are the PTX ISA's "Matrix Descriptor Format" for the
  128-byte-swizzled K-major stages: start address >> 4, LBO 1, SBO 1024 bytes (64), swizzle mode 1;
- the pipeline protocol, recorded by running the warp-specialised kernel in Numba's simulator with
  recording stand-ins for the mbarrier, TMA and wgmma instructions: the producer waits and loads, the
  consumers wait, issue, wait_group 1 and release, in exactly the order and with exactly the parities of
  cutelite.pipeline's model (PTX's mbarrier phases), and the recording runs to the end on its MBarriers;
- the epilogue's store buffers, the consumers' turns and the named barriers' registry, on the code they write;
- the TensorMap's box and bytes, and misuse refused by name (the tile scheduler: tests/test_tile_scheduler.py).
"""

import re

import numpy as np
import pytest

import kernels

kernels.setup(verbose=False, simulator=True)

from cutelite import pipeline as P  # noqa: E402
from kernels.cutejit import TensorMap  # noqa: E402
from mbarrier_replay import EventLog, replay  # noqa: E402
from kernels.hopper import objects as hopper_objects, warp_specialized, wgmma_cp_async  # noqa: E402

SW128_K = 1 << 62          # PTX ISA: layout type 1 = 128-byte swizzle, bits 62-63
LBO, SBO = 1, 1024 // 16   # 16-byte units: LBO unused for swizzled K-major (1), SBO = 8 rows x 128 bytes


def _ptx_desc(byte_address):
    return (byte_address >> 4) | LBO << 16 | SBO << 32 | SW128_K


def _preamble_env(source, tid, smem_base):
    """Evaluate the kernel's hoisted lines (thread-invariant values) for one thread."""
    class _Idx:
        x = tid
    env = {"cuda": type("cuda", (), {"threadIdx": _Idx, "blockIdx": type("b", (), {"x": 0}),
                                     "gridDim": type("g", (), {"x": 1}),
                                     "shared": type("s", (), {"array": staticmethod(lambda n, t: None)})}),
           "int64": int, "shared_address": lambda arr, i: smem_base, "min": min}
    for t in ("smem_uint16_type", "smem_uint64_type", "smem_float32_type"):
        env[t] = None
    lines = source.splitlines()[1:]
    for line in lines:
        m = re.match(r"^    (\w+) = (.+)$", line)
        if not m:
            if line.startswith("    ") and not line.startswith("     "):
                if not re.match(r"^    \w+ = ", line):
                    break
            continue
        name, expr = m.groups()
        if "[" in expr and "shape" in expr or "strides" in expr:
            env[name] = 4096
            continue
        try:
            env[name] = eval(expr, env)
        except Exception:  # noqa: BLE001  (the body starts: everything above is the preamble)
            break
    return env


def _wgmma_descs(source):
    return re.findall(r"wgmma\(acc\d+, (.+?), (.+?), (?:acc_in\d+|1), 'f32\.f16\.f16', 0\)", source)


@pytest.mark.parametrize("make,stage_var", [(lambda: warp_specialized.make(BN=256, regs=(40, 232), persistent=True),
                                             "stage1"),
                                            (lambda: wgmma_cp_async.make(BN=128), "read0")])
def test_descriptors_are_the_ptx_format(make, stage_var):
    k = make()
    BM, BN, BK = k.tile
    stages = k.config["stages"]
    a_bytes = BM * BK * 2 * stages
    descs = _wgmma_descs(k.source)
    assert len(descs) == BK // 16
    base = 3 * 1024      # a 1024-byte aligned shared address (the field holds 14 bits of address >> 4)
    for tid in (128, 300, 383) if "tmA" in k.source.splitlines()[0] else (0, 200):
        w = (tid - 128) // 128 if "tmA" in k.source.splitlines()[0] else tid // 128
        env = _preamble_env(k.source, tid, base)
        for s in range(stages):
            env[stage_var] = s
            for kb, (da, db) in enumerate(descs):
                a = base + s * BM * BK * 2 + w * 64 * BK * 2 + kb * 32
                b = base + a_bytes + s * BN * BK * 2 + kb * 32
                assert eval(da, env) == _ptx_desc(a), (tid, s, kb)
                assert eval(db, env) == _ptx_desc(b), (tid, s, kb)


class _Recorder(EventLog):
    """Stand-ins for the instructions, recording (thread, event) in the order the simulator runs them."""

    def overrides(self):
        def try_wait(bars, i, parity):
            self.log("wait", int(i), int(parity))
            return 1

        def expect_tx(bars, i, n):
            self.log("expect_tx", int(i), int(n))

        def tma(dst, off, tmap, bars, i, c0, c1):
            self.log("tma", int(i), int(c0), int(c1))

        def arrive(bars, i):
            self.log("arrive", int(i))

        def wgmma(acc, da, db, scale, types, trans):
            self.log("wgmma", int(bool(scale)))
            return acc

        def wait(acc, n):
            self.log("wait_group", int(n))
            return acc

        def commit():
            self.log("commit")
        noop = lambda *a: None  # noqa: E731
        return {"mbarrier_try_wait": try_wait, "mbarrier_arrive_expect_tx": expect_tx, "tma_load_2d": tma,
                "mbarrier_arrive": arrive, "wgmma": wgmma, "wgmma_wait": wait, "wgmma_commit": commit,
                "tma_prefetch_desc": noop, "wgmma_fence": lambda acc: acc, "mbarrier_init": noop}


@pytest.fixture(scope="module")
def recorded():
    """The instructions of a persistent block (BM 128, BN 128, 4 stages) over 2 tiles of 5 k-tiles (10 stage
    uses), recorded with stand-ins: (events, objects, stages)."""
    rec = _Recorder()
    o = hopper_objects.objects(128, 128, 4, 2)
    k = warp_specialized.gemm_warp_specialized.build(
        *hopper_objects.operand_matrices(o), o.tmA, o.tmB, o.tmC, o.mma, o.sA, o.sB, o.sC, None, 1, True,
        False, False, None, None, None, None, None, False, threads=384, overrides=rec.overrides())
    M, N, K = 128, 256, 5 * 64
    A, Bt = np.zeros((M, K), np.uint16), np.zeros((N, K), np.uint16)
    C = np.zeros((M, N), np.float32)
    tm = np.zeros(16, np.uint64)
    k.launch(A, Bt, C, tm, tm, tm, grid=1)
    return rec.events, o, 4


def test_protocol_follows_the_pipeline_model(recorded):
    events, o, stages = recorded
    producer = [e[1:] for e in events if e[0] == 0]
    uses = 2 * 5
    # the producer: acquire (wait empty[s] with the parity of its state, from phase 1), expect_tx, two TMA
    # loads, per use
    bar0 = min(e[1] for e in producer if e[0] == "expect_tx")       # full[0]'s index; empty[s] = full + stages
    want = []
    for it in range(uses):
        s = P.stage_of(it, stages)
        tile, kt = divmod(it, 5)
        want += [("wait", bar0 + stages + s, P.empty_parity(it, stages)), ("expect_tx", bar0 + s, o.tx_bytes),
                 ("tma", bar0 + s, kt * 64, 0), ("tma", bar0 + s, kt * 64, tile * 128)]
    assert producer == want
    # a consumer thread: wait full (parity of the model), 4 wgmmas (the first of a tile overwrites),
    # commit, wait_group 1, and the release of the k-tile before (its warp's lane 0 arrives on empty)
    consumer = [e[1:] for e in events if e[0] == 128]
    want = []
    for it in range(uses):
        s = P.stage_of(it, stages)
        tile, kt = divmod(it, 5)
        want += [("wait", bar0 + s, P.full_parity(it, stages))] + [("wgmma", int(kt > 0 or kb > 0)) for kb in range(4)]
        want += [("commit",), ("wait_group", 1)]
        if kt > 0:
            want.append(("arrive", bar0 + stages + P.stage_of(it - 1, stages)))
        if kt == 4:
            want += [("wait_group", 0), ("arrive", bar0 + stages + s)]
    assert consumer == want
    # every consumer warp releases every use once; lanes other than 0 never arrive
    arrivals = [e for e in events if e[1] == "arrive"]
    assert sorted({e[0] for e in arrivals}) == list(range(128, 384, 32))
    assert len(arrivals) == 8 * uses


def _replay(roles, o, bar0, stages):
    """Run each role's recorded instructions against cutelite's MBarrier model: a role steps until it waits
    for a parity its barrier does not pass yet. The TMA's bytes land at once (the k-th load after an
    expect_tx is A's box for k = 0, B's for k = 1). Returns the roles left waiting: {role: (barrier, parity)}."""
    bars = {bar0 + s: P.MBarrier("full[%d]" % s, 1) for s in range(stages)}
    bars.update({bar0 + stages + s: P.MBarrier("empty[%d]" % s, P.empty_arrivals(2)) for s in range(stages)})
    left = replay(roles, bars, lambda role, bar, k: (o.tmA, o.tmB)[k].bytes)
    return {r: e[1:] for r, e in left.items()}


def test_model_and_kernel_wait_on_the_same_phases(recorded):
    """One schedule through both: the waits and arrivals cutejit's kernel emits (recorded above: the producer
    and lane 0 of each consumer warp) run against cutelite's mbarrier model to the end, no role left waiting;
    and each role waits on the (barrier, parity) sequence of cutelite's PipelineStates: the producer's from
    make_producer_start_state (phase 1: its first round passes on fresh empty barriers), a consumer's from
    PipelineState (phase 0), as consumer_ops writes the consumer's program. A producer that started at
    phase 0 hangs on the first fresh empty barrier."""
    events, o, stages = recorded
    roles = {tid: [e[1:] for e in events if e[0] == tid and e[1] in ("wait", "expect_tx", "tma", "arrive")]
             for tid in [0] + list(range(128, 384, 32))}
    bar0 = min(e[1] for e in roles[0] if e[0] == "expect_tx")      # full[0]; empty[s] = full[0] + stages + s
    assert _replay(roles, o, bar0, stages) == {}
    uses = 2 * 5
    producer = P.make_producer_start_state(stages)
    want = []
    for _ in range(uses):
        want.append((bar0 + stages + producer.index, producer.phase))
        producer.advance()
    assert [e[1:] for e in roles[0] if e[0] == "wait"] == want
    want = [(bar0 + op.stage, op.arg) for op in P.consumer_ops(uses, stages) if op.kind == "wait_full"]
    for tid in range(128, 384, 32):
        assert [e[1:] for e in roles[tid] if e[0] == "wait"] == want
    flipped = {**roles, 0: [e[:2] + (e[2] ^ 1,) if e[0] == "wait" else e for e in roles[0]]}
    assert _replay(flipped, o, bar0, stages)[0] == (bar0 + stages, 0)


def test_tensor_maps_are_encoded_from_the_tma_atoms(monkeypatch):
    """What encode_tensor_map passes to cuTensorMapEncodeTiled for chapter 8's maps, as the driver API reads
    them (innermost dimension first): A (M, K) row-major fp16 -> dims (K, M), row pitch 2K bytes, box 64 x BM
    (128 bytes = the 128-byte swizzle's span), swizzle 3 (128B); C (M, N) f32 -> box 32 x 64; bytes per tile."""
    import ctypes
    from numba import cuda
    from kernels.cutejit import tma as T
    calls = []

    class Lib:
        def cuTensorMapEncodeTiled(self, _map, dtype, rank, addr, dims, strides, box, estrides, il, sw, l2, oob):
            r = rank.value
            calls.append((dtype.value, r, addr.value, tuple(dims[:r]), tuple(strides[:r - 1]), tuple(box[:r]),
                          tuple(estrides[:r]), il.value, sw.value, l2.value, oob.value))
            return 0

    class Array:
        def __init__(self, shape, dtype):
            self.shape, self.dtype = shape, np.dtype(dtype)
            self.strides = (shape[1] * self.dtype.itemsize, self.dtype.itemsize)
            self.__cuda_array_interface__ = {"data": (1 << 20, False)}

    monkeypatch.setattr(T, "ctypes", type("ctypes", (), dict(vars(ctypes), CDLL=staticmethod(lambda name: Lib()))))
    monkeypatch.setattr(cuda, "to_device", lambda a: a)
    o = hopper_objects.objects(128, 256, 4, 2)
    M, N, K = 1024, 768, 512
    T.encode_tensor_map(Array((M, K), "float16"), o.tmA)
    T.encode_tensor_map(Array((N, K), "float16"), o.tmB)
    T.encode_tensor_map(Array((M, N), "float32"), o.tmC)
    assert calls == [(6, 2, 1 << 20, (K, M), (2 * K,), (64, 128), (1, 1), 0, 3, 3, 0),
                     (6, 2, 1 << 20, (K, N), (2 * K,), (64, 256), (1, 1), 0, 3, 3, 0),
                     (7, 2, 1 << 20, (N, M), (4 * N,), (32, 64), (1, 1), 0, 3, 3, 0)]
    assert (o.tmA.bytes, o.tmB.bytes, o.tmC.bytes, o.tx_bytes) == (16384, 32768, 8192, 49152)
    with pytest.raises(ValueError, match="16-byte aligned"):
        bad = Array((M, K), "float16")
        bad.__cuda_array_interface__ = {"data": ((1 << 20) + 8, False)}
        T.encode_tensor_map(bad, o.tmA)
    with pytest.raises(TypeError, match="takes a TMA atom"):
        TensorMap("float16")


def test_misuse_is_refused_by_name():
    from kernels.cutejit import kernel, warpgroup_wait, setmaxnreg
    from kernels.cutejit.wgmma import Accumulator

    @kernel
    def bad_wait(x):
        warpgroup_wait(9, x)

    with pytest.raises(ValueError, match="warpgroup_wait takes 0..7"):
        bad_wait.build(None, threads=128)

    @kernel
    def bad_regs(x):
        setmaxnreg(100, grow=True)

    with pytest.raises(ValueError, match="setmaxnreg takes a multiple of 8"):
        bad_regs.build(None, threads=128)

    @kernel
    def not_acc(x):
        warpgroup_wait(1, x)

    with pytest.raises(TypeError, match="accumulator of partition_fragment_C"):
        not_acc.build(3, threads=128)
    assert Accumulator


def test_mn_major_operands_take_a_box_per_64_rows():
    """B^T (N, K) MN-major (B row-major): the stage is 64 x 8 atoms walked K first, so the (256, 64) tile is
    four 8 KB runs of shared memory, one 64 x 64 TMA box each, at N = 0, 64, 128, 192 (TMA coordinates:
    N first, it is the contiguous mode); wgmma reads B transposed (its trans-b bit, 2)."""
    k = warp_specialized.make(BN=256, regs=(40, 232), group=16, persistent=True, tma_store=True, majors=("K", "MN"))
    loads = [ln.strip() for ln in k.source.splitlines() if ln.strip().startswith("tma_load_2d(") and "tmB" in ln]
    assert len(loads) == 4
    for j, ln in enumerate(loads):
        args = [a.strip() for a in re.match(r"tma_load_2d\((.*)\)$", ln).group(1).split(", ")]
        assert args[1] == "((stage0 * 16384) + %d)" % (32768 + 4096 * j)     # A's 4 stages (32768), then box j
        assert args[5] == ("(bn0 * 256)" if j == 0 else "((bn0 * 256) + %d)" % (64 * j)) and args[6] == "(i1 * 64)"
    assert all(ln.rstrip().endswith("'f32.f16.f16', 2)") for ln in k.source.splitlines() if "wgmma(" in ln)


def test_which_operands_the_hopper_path_takes():
    """The Hopper kernel's rules for its operands, from the tensor maps' (cuTensorMapEncodeTiled): a matrix with unit stride along K
    is K-major, along its rows MN-major, neither is refused; the other stride (the pitch) must be a multiple
    of 16 bytes, whatever the extents: a view of the real shape into a wider buffer is readable."""
    from kernels.hopper import operand_major, tma_readable
    a = np.zeros((6, 10), np.float16)
    assert operand_major(a) == "K" and operand_major(np.asfortranarray(a)) == "MN" and operand_major(a[:, ::2]) is None
    assert operand_major(np.zeros((1, 8), np.float16)) == "K" and operand_major(np.zeros((8, 1), np.float16)) == "K"
    assert not tma_readable(a) and tma_readable(np.zeros((6, 16), np.float16))      # 20-byte rows, 32-byte rows
    assert tma_readable(np.zeros((6, 16), np.float16)[:, :10])                      # K = 10 in 32-byte rows
    assert not tma_readable(np.asfortranarray(a)) and tma_readable(np.zeros((8, 10), np.float16, order="F"))
    assert tma_readable(np.zeros((2500, 40), np.float16).T) and not tma_readable(np.zeros((40, 2500), np.float16))
    assert not tma_readable(np.zeros((4, 3002), np.float32)) and tma_readable(np.zeros((4, 3004), np.float32))
    assert not tma_readable(np.zeros((8, 1), np.float16))       # a column read as K-major: 2-byte rows
    for bad in (None, 3, "x", np.zeros(4, np.float16), np.zeros((2, 2, 2), np.float16)):
        for fn in (operand_major, tma_readable):
            with pytest.raises(TypeError, match=fn.__name__):
                fn(bad)


def test_name_map_is_cutes():
    """Chapter 8's table of CuTe's names against PTX, traced from the layer: the same instructions as C++ CuTe
    and CUTLASS emit for those names (cute/arch/mma_sm90_gmma.hpp: warpgroup_arrive is wgmma.fence,
    warpgroup_commit_batch wgmma.commit_group, warpgroup_wait<N> wgmma.wait_group; cute/arch/copy_sm90_tma.hpp:
    tma_store_fence is fence.proxy.async.shared::cta, tma_store_arrive cp.async.bulk.commit_group,
    tma_store_wait<N> cp.async.bulk.wait_group.read; cutlass/pipeline/sm90_pipeline.hpp: consumer_wait waits
    on the full barrier's parity, consumer_release arrives on the empty one, producer_acquire waits on the
    empty one and arrives on the full one with the transaction bytes; a named barrier's sync is bar.sync)."""
    from kernels.hopper.chapter import NAME_MAP, name_map, name_map_table
    got = {call.split("(")[0]: ptx for call, ptx, _ in name_map()}
    assert len(got) == len(NAME_MAP)
    assert got["warpgroup_arrive"] == ["wgmma.fence.sync.aligned"]
    assert got["gemm"] == ["wgmma.mma_async.sync.aligned (x4)"]              # BK 64 = 4 k-blocks of 16
    assert got["warpgroup_commit"] == ["wgmma.commit_group.sync.aligned"]
    assert got["warpgroup_wait"] == ["wgmma.wait_group.sync.aligned"]
    assert got["pipe.producer_acquire"] == ["mbarrier.try_wait.parity.shared::cta.b64",
                                            "mbarrier.arrive.expect_tx.shared::cta.b64"]
    assert got["tma_load"][0].startswith("cp.async.bulk.tensor.2d.shared::cluster.global")
    assert got["pipe.consumer_wait"] == ["mbarrier.try_wait.parity.shared::cta.b64"]
    assert got["pipe.consumer_release"] == ["mbarrier.arrive.shared::cta.b64"]
    assert got["fence_proxy_async"] == ["fence.proxy.async.shared::cta"]
    assert got["named_barrier_sync"] == ["bar.sync"] and got["named_barrier_arrive"] == ["bar.arrive"]
    assert got["tma_store_commit"] == ["cp.async.bulk.commit_group"]
    assert got["tma_store_wait"] == ["cp.async.bulk.wait_group.read"]
    assert got["setmaxnreg"] == ["setmaxnreg.dec.sync.aligned.u32"]
    assert "| `warpgroup_arrive(acc)` | `wgmma.fence.sync.aligned` |" in name_map_table()


def test_chapter_quotes_the_records():
    """What chapter 8 prints of the records, against the tables of RESULTS_HOPPER.md and RESULTS.md: steps 1-5
    in runs 9 and 10 (0.68 and 0.66 for step 1, ...) beside run 8's hand-indexed kernels; run 11's and 14's
    comparison with the CuTe DSL; step 5 at 4096^3 over runs 9-14; matmul at 2048^3 from PyTorch tensors."""
    from kernels.hopper import chapter as C
    table = C.ladder_table()
    for row in ("| 1. wgmma, fed by cp.async from every thread | 0.66-0.68 | 0.65 |",
                "| 3. 128 x 256 tiles, setmaxnreg, grouped raster | 0.90-0.93 | 0.89 |",
                "| 5. C out through shared memory and a TMA store | 0.97-1.00 | 0.93 |"):
        assert row in table
    dsl = C.dsl_table()
    assert "| run 11 | 1.01 / 1.02 | 0.99 / 0.97 | 0.98 / 0.97 |" in dsl
    assert "| run 14 | 1.01 / 1.02 | 1.05 / 0.99 | 0.97 / 1.00 |" in dsl
    spread = C.spread_4096()
    assert "0.93-1.01 of cuBLAS" in spread and "run 9, run 10, run 11, run 12, run 13, run 14" in spread
    host = C.host_path_2048()
    assert "0.30 of cuBLAS (run 11)" in host and "0.90 of cuBLAS (run 12)" in host and "0.41 of cuBLAS (run 14)" in host
    assert "0.92-0.94 of cuBLAS" in host and "99.1 us" in host
    assert "223 us" in C.profile_lines() and "30 % of that waiting at a CTA barrier" in C.profile_lines()
    assert "rows of 8000 and 6000 bytes: the kernel 0.142 ms" in C.odd_shape_lines()


def _trace(body, threads=384):
    """The source a kernel whose body is `body()` writes (its arguments unused)."""
    from kernels.cutejit import kernel

    @kernel
    def k(x):
        body()
    return k.build(None, threads=threads).source


def test_named_barriers_come_from_one_registry():
    """Ids 1-15 in order (0 is __syncthreads), refused past 15 with who holds the others; an id by hand that an
    owner holds is refused, as are ids outside 1-15 and a thread count that is not whole warps."""
    from kernels.cutejit import NamedBarrier, named_barrier_sync
    got = {}

    def body():
        got["a"], got["b"] = NamedBarrier(128, 2, "epilogue").ids, NamedBarrier(256, 3, "order").ids
        named_barrier_sync(6, 128)                       # by hand: the next free id
        got["c"] = NamedBarrier(128, 1, "more").ids
        for bad, match in ((lambda: NamedBarrier(128, 9, "too many"), "too many needs 9 named barriers, but "
                            "ids 1-15 .* are 1,2: epilogue; 3,4,5: order; 6: named_barrier_sync/arrive by hand; "
                            "7: more"),
                           (lambda: named_barrier_sync(3, 256), "barrier 3 is held by order"),
                           (lambda: named_barrier_sync(0, 128), "ids are 1-15 .0 is __syncthreads"),
                           (lambda: named_barrier_sync(16, 128), "ids are 1-15"),
                           (lambda: NamedBarrier(100, 1, "odd"), "odd: a named barrier counts whole warps")):
            with pytest.raises(ValueError, match=match):
                bad()
    src = _trace(body)
    assert (got["a"], got["b"], got["c"]) == ((1, 2), (3, 4, 5), (7,)) and "named_barrier_sync(6, 128)" in src


def test_tma_store_pipeline_turns_its_buffers():
    """Two buffers a warpgroup: box b of warpgroup c goes through buffer 2c + b % 2, each acquire first waits
    (the leader thread) until at most one store may still read shared memory, the tail until none; the
    epilogue of step 5 takes 8 boxes a tile. A rotation that a run-time loop would restart mid-round is
    refused."""
    from cutelite import Layout
    from kernels.cutejit import PipelineTmaStore, make_smem_tensor, thread_idx
    seen = []

    def body():
        tid = thread_idx()
        store = PipelineTmaStore(make_smem_tensor(Layout((4, 8, 4)), "float32"), 2, tid // 128, (tid & 127) < 1)
        seen.extend(store.producer_acquire().start() for _ in range(4))
        store.producer_tail()
    src = _trace(body, threads=256)
    assert [s.src for s in seen] == ["(((tid >> 7) * 2) * 32)", "((((tid >> 7) * 2) + 1) * 32)"] * 2   # 32 a buffer
    assert src.count("tma_store_wait_read(1)") == 4 and src.count("tma_store_wait(0)") == 1
    assert src.count("if ((tid & 127) < 1):") == 5
    k = warp_specialized.make(BN=256, regs=(40, 232), group=16, persistent=True, tma_store=True)
    assert k.source.count("tma_store_wait_read(1)") == 8 and k.source.count("tma_store_wait(0)") == 1

    def odd():
        tid = thread_idx()
        store = PipelineTmaStore(make_smem_tensor(Layout((4, 8, 2)), "float32"), 2, 0, tid < 1)
        for _ in range(3):
            store.producer_acquire()
        store.producer_tail()
    with pytest.raises(ValueError, match="3 buffers acquired, not whole rounds of 2"):
        _trace(odd)


def test_pipeline_order_and_roles():
    """Ping-pong's turns: consumer c waits on barrier 1 + c and arrives on the other's (ids from the registry,
    256 threads: both warpgroups), its states start c tiles in (c x k_tiles stage uses) and skip the other's
    tile. producer_acquire refuses a consumer's state and consumer_wait the producer's."""
    from kernels.hopper import pingpong
    src = pingpong.make().source
    assert src.count("named_barrier_sync(1, 256)") == src.count("named_barrier_sync(2, 256)") == 1
    assert src.count("named_barrier_arrive(1, 256)") == src.count("named_barrier_arrive(2, 256)") == 1
    from kernels.cutejit import PipelineState, PipelineTmaAsync, make_producer_start_state

    def producer_with_consumer_state():
        PipelineTmaAsync(4, 1024, 2).producer_acquire(PipelineState(4))

    def consumer_with_producer_state():
        PipelineTmaAsync(4, 1024, 2).consumer_wait(make_producer_start_state(4))
    with pytest.raises(ValueError, match="producer_acquire: the state started at phase 0; the producer's starts at "
                                         "phase 1 .make_producer_start_state"):
        _trace(producer_with_consumer_state)
    with pytest.raises(ValueError, match="consumer_wait: the state started at phase 1; a consumer's starts at phase 0"):
        _trace(consumer_with_producer_state)
