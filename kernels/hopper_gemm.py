"""A first Hopper GEMM: TMA loads on an mbarrier pipeline, wgmma from shared memory, warp-specialised.

    C (M x N, float32) = A (M x K, fp16, row-major) @ Bt (N x K, fp16, row-major).T

Both operands are K-major, the layout wgmma reads without transposing. One block computes a
(64 * CONSUMERS) x BN tile of C with 1 + CONSUMERS warpgroups:
  * warpgroup 0, the producer: one thread waits until a stage is free ("empty" mbarrier), announces the
    bytes to come (`arrive.expect_tx` on the stage's "full" mbarrier) and issues two TMA copies (a BM x 64
    slab of A and a BN x 64 slab of Bt) that the copy engine writes 128-byte swizzled;
  * warpgroups 1.., the consumers: each waits for the stage to be full, runs 4 wgmma m64nBNk16 over its
    64 rows (descriptors from cutelite.gmma: K-major, 128-byte swizzle, SBO 1024 B), keeps one wgmma group
    in flight, and frees the previous stage (one arrival per warp on its "empty" mbarrier).
With `regs` set, the producer gives registers back (setmaxnreg.dec) and the consumers take them.

`python -m kernels.hopper_gemm` checks against NumPy (outputs poisoned first) and times against cuBLAS.
"""

import ctypes
import sys

import numpy as np

from .runtime import allow_dynamic_shared

BK = 64          # K per stage: 64 halves = 128 bytes, one 128-byte swizzle row
_F16, _F32, _BF16 = 6, 7, 9     # CUtensorMapDataType
EPI_BOX = (64, 32)     # the TMA-store epilogue's box of C: 64 rows x 32 float32 (128 bytes, one swizzle row)
_SWIZZLE_128B, _L2_256B = 3, 3


def smem_descriptor_hi(rows):
    """The constant part of the wgmma descriptor of a (rows x 64) K-major fp16 stage with the 128-byte
    swizzle, from cutelite (start address 0: the kernel ORs in address >> 4)."""
    from cutelite.gmma import Layout_K_SW128_Atom, gmma_desc_blocks, tile_to_smem
    descs = gmma_desc_blocks("K", tile_to_smem(Layout_K_SW128_Atom("half_t"), (rows, BK)), (64 if rows >= 64 else rows, 16))
    assert all(d.desc == descs[0].desc + 2 * i for i, d in enumerate(descs)), "k-blocks must be 32 bytes apart"
    return descs[0].desc


def staging_layout():
    """The shared-memory layout of one epilogue box of C (EPI_BOX, float32, row-major) as the TMA store reads
    it with the 128-byte swizzle: Sw<3,4,3> o smem_ptr[32b] o (64, 32):(32, 1), in elements Sw<3,2,3>.
    kernels.hopper.stage_acc_f32_sw128 writes the accumulator fragment in it."""
    from cutelite.gmma import Layout_K_SW128_Atom, tile_to_smem
    return tile_to_smem(Layout_K_SW128_Atom("float"), EPI_BOX)


def make_tensor_map(arr, box_rows, dtype=_F16, box_cols=BK):
    """A CUtensorMap (128 bytes, as a uint64 device array of 16) for the 2-D row-major device array `arr`,
    boxes of box_rows x box_cols elements (box_cols * itemsize = 128 bytes), 128-byte swizzle
    (cuTensorMapEncodeTiled through libcuda)."""
    from numba import cuda
    rows, cols = arr.shape
    lib = ctypes.CDLL("libcuda.so.1")
    raw = np.zeros(32, dtype=np.uint64)
    start = (-raw.ctypes.data % 64) // 8
    tm = raw[start:start + 16]
    u64, u32 = ctypes.c_uint64, ctypes.c_uint32
    rc = lib.cuTensorMapEncodeTiled(
        ctypes.c_void_p(tm.ctypes.data), ctypes.c_int(dtype), u32(2),
        ctypes.c_void_p(arr.__cuda_array_interface__["data"][0]), (u64 * 2)(cols, rows),
        (u64 * 1)(cols * arr.dtype.itemsize), (u32 * 2)(box_cols, box_rows), (u32 * 2)(1, 1),
        ctypes.c_int(0), ctypes.c_int(_SWIZZLE_128B), ctypes.c_int(_L2_256B), ctypes.c_int(0))
    if rc != 0:
        raise RuntimeError("cuTensorMapEncodeTiled failed with CUresult %d (shape %s, box %d x %d)"
                           % (rc, arr.shape, box_rows, box_cols))
    return cuda.to_device(tm.copy())


def pipeline_constants(BN=128, stages=4, consumers=2, BM=None):
    """The kernel's pipeline constants, from cutelite.pipeline (the model chapter 8 simulates): the bytes
    one stage's two TMA boxes announce (expect_tx) and the arrival count of an "empty" barrier (the
    consumers that read a stage). BM: the stage's rows of A, 64 per consumer unless given."""
    from cutelite.pipeline import empty_arrivals, expect_tx_bytes
    BM = BM or 64 * consumers
    return {"BM": BM, "BN": BN, "BK": BK, "stages": stages, "box_A": (BM, BK), "box_B": (BN, BK),
            "expect_tx": expect_tx_bytes([(BM, BK), (BN, BK)], 16), "empty_arrivals": empty_arrivals(consumers)}


def make_gemm_cp_async(BN=128, stages=4, consumers=2):
    """Step 1 of the Hopper ladder: wgmma alone, fed the Ampere way. Every thread of the block copies its
    share of each (BM x 64) slab of A and (BN x 64) slab of Bt into shared memory with 16-byte cp.async,
    at the offsets of the 128-byte-swizzled K-major layout the wgmma descriptors describe
    (`tile_to_smem(Layout_K_SW128_Atom("half_t"), ...).element_layout()`, the layout the TMA writes in the
    later steps); `stages - 1` k-tiles are in flight. Per k-tile: wait for this thread's copies, fence the
    generic proxy's writes for wgmma's async proxy, barrier, start the next copy, and each warpgroup runs
    4 wgmma m64nBNk16 over its 64 rows, waiting for them before the next k-tile's barrier (a stage is
    overwritten only after every wgmma that read it is done). No producer, no mbarriers, no TMA: those are
    the next steps. Returns (kernel, threads, smem bytes)."""
    from numba import cuda, uint16, int64
    from cutelite.gmma import Layout_K_SW128_Atom, tile_to_smem
    from .layout_codegen import layout_fn
    from .instructions import cp_async_cg_16, cp_async_commit, cp_async_wait
    from .instructions import (fence_proxy_async, shared_address, store_acc_f32, wgmma, wgmma_commit, wgmma_fence,
                         wgmma_wait, wgmma_uninit)
    BM = 64 * consumers
    threads = 128 * consumers
    A_ELEMS, B_ELEMS = BM * BK, BN * BK
    STAGE = A_ELEMS + B_ELEMS
    smem_bytes = 2 * STAGE * stages + 1024
    A_COPIES, B_COPIES = A_ELEMS // 8 // threads, B_ELEMS // 8 // threads    # 16-byte copies per thread
    WAIT = stages - 2
    sA_at = layout_fn(tile_to_smem(Layout_K_SW128_Atom("half_t"), (BM, BK)).element_layout(), True, "sA_at")
    sB_at = layout_fn(tile_to_smem(Layout_K_SW128_Atom("half_t"), (BN, BK)).element_layout(), True, "sB_at")

    @cuda.jit(device=True)
    def load_stage(A, Bt, smem, off, m0, n0, k0, K, t):
        """cp.async the k-tile at k0 of A's rows m0.. and Bt's rows n0.. into the stage at element `off`:
        copy q of the block is row q // 8, columns 8 (q % 8) .. + 7 (16 bytes, one swizzle chunk)."""
        for i in range(A_COPIES):
            q = t + i * threads
            r, c = q // 8, 8 * (q % 8)
            cp_async_cg_16(smem, off + sA_at(r, c), A, (m0 + r) * K + k0 + c)
        for i in range(B_COPIES):
            q = t + i * threads
            r, c = q // 8, 8 * (q % 8)
            cp_async_cg_16(smem, off + A_ELEMS + sB_at(r, c), Bt, (n0 + r) * K + k0 + c)

    @cuda.jit
    def gemm_cp_async(A, Bt, C, M, N, K, desc_a_hi, desc_b_hi):
        smem = cuda.shared.array(0, uint16)
        t = cuda.threadIdx.x
        wg = t // 128                   # this warpgroup computes rows 64 wg .. 64 wg + 63 of the tile
        base = int64(shared_address(smem, 0))
        pad = ((1024 - (base & 1023)) & 1023) // 2
        m0, n0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
        ktiles = K // BK
        for kt in range(stages - 1):    # prologue: k-tiles 0 .. stages - 2 in flight
            if kt < ktiles:
                load_stage(A, Bt, smem, pad + kt * STAGE, m0, n0, kt * BK, K, t)
            cp_async_commit()
        acc = wgmma_uninit(BN)
        for kt in range(ktiles):
            cp_async_wait(WAIT)         # this thread's copies of k-tile kt have landed
            fence_proxy_async()         # ... and are visible to the async proxy that wgmma reads with
            cuda.syncthreads()          # everyone's copies; every wgmma of k-tile kt - 1 is done
            nxt = kt + stages - 1       # refill the stage k-tile kt - 1 used
            if nxt < ktiles:
                load_stage(A, Bt, smem, pad + (nxt % stages) * STAGE, m0, n0, nxt * BK, K, t)
            cp_async_commit()
            s = kt % stages
            a0 = base + 2 * (pad + s * STAGE + wg * 64 * BK)
            b0 = base + 2 * (pad + s * STAGE + A_ELEMS)
            da = desc_a_hi | ((a0 >> 4) & 0x3FFF)
            db = desc_b_hi | ((b0 >> 4) & 0x3FFF)
            acc = wgmma_fence(acc)
            for kb in range(BK // 16):
                acc = wgmma(acc, da + 2 * kb, db + 2 * kb, (kt | kb) != 0, "f32.f16.f16", 0)
            wgmma_commit()
            acc = wgmma_wait(acc, 0)
        lane = t % 32
        row0 = m0 + wg * 64 + 16 * ((t % 128) // 32) + lane // 4
        col0 = n0 + 2 * (lane % 4)
        store_acc_f32(C, row0, col0, N, acc)

    return gemm_cp_async, threads, smem_bytes


def make_gemm_ws(BN=128, stages=4, consumers=2, regs=None, group=0):
    """The kernel for a (64 * consumers) x BN tile; `regs` = (producer, consumer) register counts for
    setmaxnreg (the kernel is then capped at 65536 / threads registers); `group` > 0: a 1-D grid walked in
    groups of `group` row-tiles (L2 reuse of B). Returns (kernel, threads, smem
    bytes)."""
    from numba import cuda, uint16, uint64, int64
    from .instructions import (fence_mbarrier_init, mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_init,
                         mbarrier_try_wait, setmaxnreg_dec, setmaxnreg_inc, shared_address, store_acc_f32,
                         tma_load_2d, tma_prefetch_desc, wgmma, wgmma_commit, wgmma_fence, wgmma_wait,
                         wgmma_uninit)
    k = pipeline_constants(BN, stages, consumers)
    BM = k["BM"]
    A_ELEMS, B_ELEMS = BM * BK, BN * BK
    STAGE = A_ELEMS + B_ELEMS
    TX = k["expect_tx"]
    assert TX == 2 * STAGE
    threads = 128 * (1 + consumers)
    smem_bytes = 2 * STAGE * stages + 1024
    P_REGS, C_REGS = regs if regs else (0, 0)
    EMPTY_ARRIVALS = k["empty_arrivals"]
    GROUP = group
    NBARS = 2 * stages
    opts = {"max_registers": (65536 // threads) // 8 * 8} if regs else {}

    @cuda.jit(**opts)
    def gemm_ws(tmA, tmB, C, M, N, K, desc_a_hi, desc_b_hi):
        smem = cuda.shared.array(0, uint16)      # the stages, as raw 16-bit elements
        bars = cuda.shared.array(NBARS, uint64)     # [0, stages): full; [stages, 2 stages): empty
        tid = cuda.threadIdx.x
        wg = tid // 128
        base = int64(shared_address(smem, 0))
        pad = ((1024 - (base & 1023)) & 1023) // 2       # elements up to the next 1024-byte boundary
        if GROUP:   # grouped raster: GROUP row-tiles of C share their B slabs while they are in L2
            tiles_m = M // BM
            pid = cuda.blockIdx.x
            per_group = GROUP * (N // BN)
            first = (pid // per_group) * GROUP
            rows_here = min(tiles_m - first, GROUP)
            bm = first + (pid % per_group) % rows_here
            bn = (pid % per_group) // rows_here
        else:
            bn = cuda.blockIdx.x
            bm = cuda.blockIdx.y
        ktiles = K // BK
        if tid == 0:
            tma_prefetch_desc(tmA)
            tma_prefetch_desc(tmB)
            for s in range(stages):
                mbarrier_init(bars, s, 1)
                mbarrier_init(bars, stages + s, EMPTY_ARRIVALS)
            fence_mbarrier_init()
        cuda.syncthreads()
        if wg == 0:
            if P_REGS:
                setmaxnreg_dec(P_REGS)
            if tid == 0:
                for kt in range(ktiles):
                    s = kt % stages
                    if kt >= stages:
                        while mbarrier_try_wait(bars, stages + s, ((kt // stages) + 1) & 1) == 0:
                            pass
                    mbarrier_arrive_expect_tx(bars, s, TX)
                    off = pad + s * STAGE
                    tma_load_2d(smem, off, tmA, bars, s, kt * BK, bm * BM)
                    tma_load_2d(smem, off + A_ELEMS, tmB, bars, s, kt * BK, bn * BN)
        else:
            if C_REGS:
                setmaxnreg_inc(C_REGS)
            c = wg - 1
            acc = wgmma_uninit(BN)
            for kt in range(ktiles):
                s = kt % stages
                while mbarrier_try_wait(bars, s, (kt // stages) & 1) == 0:
                    pass
                a0 = base + 2 * (pad + s * STAGE + c * 64 * BK)
                b0 = base + 2 * (pad + s * STAGE + A_ELEMS)
                da = desc_a_hi | ((a0 >> 4) & 0x3FFF)
                db = desc_b_hi | ((b0 >> 4) & 0x3FFF)
                acc = wgmma_fence(acc)
                for kb in range(BK // 16):
                    acc = wgmma(acc, da + 2 * kb, db + 2 * kb, (kt | kb) != 0, "f32.f16.f16", 0)
                wgmma_commit()
                acc = wgmma_wait(acc, 1)
                if kt > 0 and tid % 32 == 0:
                    mbarrier_arrive(bars, stages + (kt - 1) % stages)
            acc = wgmma_wait(acc, 0)
            lane = tid % 32
            row0 = bm * BM + c * 64 + 16 * ((tid % 128) // 32) + lane // 4
            col0 = bn * BN + 2 * (lane % 4)
            store_acc_f32(C, row0, col0, N, acc)

    return gemm_ws, threads, smem_bytes


def make_gemm_persistent(BN=256, stages=4, consumers=2, regs=(40, 232), group=8, tma_store=False):
    """The persistent version: a grid of (at most) one block per SM, each walking output tiles
    blockIdx.x, blockIdx.x + gridDim.x, ... (grouped raster, `group` row-tiles at a time). The producer's
    k-tile counter `it` runs on across tiles, so stage = it % stages and the phases of cutelite.pipeline
    continue where the last tile left them: while the consumers store tile i's accumulators, the producer is
    already filling the stages with tile i+1's first k-tiles, and the consumers' next main loop starts on
    full stages. The consumers release a tile's last stage after their final wgmma_wait.

    tma_store=True: the kernel takes C's tensor map (make_tensor_map(C, 64, _F32, 32)) instead of C, and
    each consumer warpgroup writes its 64 x BN half in 64 x 32 boxes through two 8 KB staging buffers of its
    own (staging_layout(), after the pipeline stages): thread 0 of the warpgroup waits until the box stored
    two boxes ago has been read (cp.async.bulk.wait_group.read 1), barrier, every thread writes its fragment
    (st.shared.v2.f32) and fence.proxy.async, barrier, thread 0 issues the TMA store and commits its group.
    The stores then run while the warpgroup goes on to the next tile's main loop.
    Returns (kernel, threads, smem bytes)."""
    from numba import cuda, uint16, uint64, int64
    from .instructions import (fence_mbarrier_init, mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_init,
                         mbarrier_try_wait, setmaxnreg_dec, setmaxnreg_inc, shared_address, store_acc_f32,
                         tma_load_2d, tma_prefetch_desc, wgmma, wgmma_commit, wgmma_fence, wgmma_wait,
                         wgmma_uninit, fence_proxy_async, named_barrier_sync, stage_acc_f32_sw128, tma_store_2d,
                         tma_store_commit, tma_store_wait, tma_store_wait_read)
    k = pipeline_constants(BN, stages, consumers)
    BM = k["BM"]
    A_ELEMS, B_ELEMS = BM * BK, BN * BK
    STAGE = A_ELEMS + B_ELEMS
    TX = k["expect_tx"]
    threads = 128 * (1 + consumers)
    TMA_STORE = bool(tma_store)
    BOX = EPI_BOX[0] * EPI_BOX[1] * 2            # one staged box of C, in 16-bit smem elements (8 KB)
    NBOX = BN // EPI_BOX[1]
    smem_bytes = 2 * STAGE * stages + 1024 + (2 * BOX * 2 * consumers if TMA_STORE else 0)
    P_REGS, C_REGS = regs if regs else (0, 0)
    EMPTY_ARRIVALS = k["empty_arrivals"]
    GROUP = max(group, 1)

    @cuda.jit(device=True)
    def wg_sync(c):     # bar.sync among the 128 threads of consumer warpgroup c (barrier 1 + c)
        if c == 0:
            named_barrier_sync(1, 128)
        else:
            named_barrier_sync(2, 128)
    NBARS = 2 * stages
    opts = {"max_registers": (65536 // threads) // 8 * 8} if regs else {}

    @cuda.jit(**opts)
    def gemm_persistent(tmA, tmB, C, M, N, K, desc_a_hi, desc_b_hi):
        smem = cuda.shared.array(0, uint16)
        bars = cuda.shared.array(NBARS, uint64)
        tid = cuda.threadIdx.x
        wg = tid // 128
        base = int64(shared_address(smem, 0))
        pad = ((1024 - (base & 1023)) & 1023) // 2
        tiles_m = M // BM
        tiles_n = N // BN
        ntiles = tiles_m * tiles_n
        per_group = GROUP * tiles_n
        ktiles = K // BK
        if tid == 0:
            tma_prefetch_desc(tmA)
            tma_prefetch_desc(tmB)
            for s in range(stages):
                mbarrier_init(bars, s, 1)
                mbarrier_init(bars, stages + s, EMPTY_ARRIVALS)
            fence_mbarrier_init()
        cuda.syncthreads()
        if wg == 0:
            if P_REGS:
                setmaxnreg_dec(P_REGS)
            if tid == 0:
                it = 0
                tile = cuda.blockIdx.x
                while tile < ntiles:
                    first = (tile // per_group) * GROUP
                    rows_here = min(tiles_m - first, GROUP)
                    bm = first + (tile % per_group) % rows_here
                    bn = (tile % per_group) // rows_here
                    for kt in range(ktiles):
                        s = it % stages
                        if it >= stages:
                            while mbarrier_try_wait(bars, stages + s, ((it // stages) + 1) & 1) == 0:
                                pass
                        mbarrier_arrive_expect_tx(bars, s, TX)
                        off = pad + s * STAGE
                        tma_load_2d(smem, off, tmA, bars, s, kt * BK, bm * BM)
                        tma_load_2d(smem, off + A_ELEMS, tmB, bars, s, kt * BK, bn * BN)
                        it += 1
                    tile += cuda.gridDim.x
        else:
            if C_REGS:
                setmaxnreg_inc(C_REGS)
            c = wg - 1
            lane = tid % 32
            it = 0
            tile = cuda.blockIdx.x
            while tile < ntiles:
                first = (tile // per_group) * GROUP
                rows_here = min(tiles_m - first, GROUP)
                bm = first + (tile % per_group) % rows_here
                bn = (tile % per_group) // rows_here
                acc = wgmma_uninit(BN)
                for kt in range(ktiles):
                    s = it % stages
                    while mbarrier_try_wait(bars, s, (it // stages) & 1) == 0:
                        pass
                    a0 = base + 2 * (pad + s * STAGE + c * 64 * BK)
                    b0 = base + 2 * (pad + s * STAGE + A_ELEMS)
                    da = desc_a_hi | ((a0 >> 4) & 0x3FFF)
                    db = desc_b_hi | ((b0 >> 4) & 0x3FFF)
                    acc = wgmma_fence(acc)
                    for kb in range(BK // 16):
                        acc = wgmma(acc, da + 2 * kb, db + 2 * kb, (kt | kb) != 0, "f32.f16.f16", 0)
                    wgmma_commit()
                    acc = wgmma_wait(acc, 1)
                    if kt > 0 and lane == 0:
                        mbarrier_arrive(bars, stages + (it - 1) % stages)
                    it += 1
                acc = wgmma_wait(acc, 0)
                if lane == 0:
                    mbarrier_arrive(bars, stages + (it - 1) % stages)
                if TMA_STORE:
                    t = tid % 128
                    for b in range(NBOX):
                        buf = pad + stages * STAGE + (2 * c + b % 2) * BOX
                        if t == 0:
                            tma_store_wait_read(1)      # the box stored from buf two boxes ago is read
                        wg_sync(c)
                        stage_acc_f32_sw128(smem, buf, t, acc, b)
                        fence_proxy_async()             # the writes, before the async proxy reads them
                        wg_sync(c)
                        if t == 0:
                            tma_store_2d(C, smem, buf, bn * BN + b * EPI_BOX[1], bm * BM + c * 64)
                            tma_store_commit()
                else:
                    row0 = bm * BM + c * 64 + 16 * ((tid % 128) // 32) + lane // 4
                    col0 = bn * BN + 2 * (lane % 4)
                    store_acc_f32(C, row0, col0, N, acc)
                tile += cuda.gridDim.x
            if TMA_STORE and tid % 128 == 0:
                tma_store_wait(0)       # every store done before the block (and its shared memory) ends

    return gemm_persistent, threads, smem_bytes


def make_gemm_pingpong(BN=256, stages=5, regs=(40, 232), group=16, BM=64):
    """Persistent, with the two consumer warpgroups on alternate tiles ("ping-pong"): a tile is BM x BN
    and one warpgroup computes all of it (m64nBNk16; with BM = 128 two of them per k-step, rows 0-63 and
    64-127 of the stage, into two accumulators), so while consumer 0 runs tile j's main loop,
    consumer 1 stores tile j-1's accumulators, and the tensor cores never wait for an epilogue.

    The block's tiles are j = 0, 1, 2, ... (tile = blockIdx.x + j * gridDim.x); the producer loads them in
    that order, so tile j holds the stage iterations it = j * ktiles, ... and consumer j % 2 reads them.
    Two named barriers order the main loops: consumer c waits on barrier 1 + c (bar.sync, 256 threads)
    before tile j >= 1 until the other consumer, done issuing tile j-1, arrives on it (bar.arrive). Without
    that order a consumer could wait on a "full" barrier two phases early, where the parity test
    passes wrongly. Returns (kernel, threads, smem bytes)."""
    from numba import cuda, uint16, uint64, int64
    from .instructions import (fence_mbarrier_init, mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_init,
                         mbarrier_try_wait, named_barrier_arrive, named_barrier_sync, setmaxnreg_dec,
                         setmaxnreg_inc, shared_address, store_acc_f32, tma_load_2d, tma_prefetch_desc, wgmma,
                         wgmma_commit, wgmma_fence, wgmma_wait, wgmma_uninit)
    if BM not in (64, 128) or (BM == 128 and BN > 128):
        raise ValueError("make_gemm_pingpong: BM must be 64 or 128 (with BN <= 128: 128 accumulators a "
                         "thread at most), got BM=%d, BN=%d" % (BM, BN))
    k = pipeline_constants(BN, stages, consumers=1, BM=BM)      # one warpgroup reads each stage
    HALVES = BM // 64
    HALF = 2 * 64 * BK          # bytes from rows 0-63 of a stage's A to rows 64-127
    A_ELEMS, B_ELEMS = BM * BK, BN * BK
    STAGE = A_ELEMS + B_ELEMS
    TX = k["expect_tx"]
    threads = 128 * 3
    smem_bytes = 2 * STAGE * stages + 1024
    P_REGS, C_REGS = regs
    EMPTY_ARRIVALS = k["empty_arrivals"]
    GROUP = max(group, 1)
    NBARS = 2 * stages

    @cuda.jit(max_registers=(65536 // threads) // 8 * 8)
    def gemm_pingpong(tmA, tmB, C, M, N, K, desc_a_hi, desc_b_hi):
        smem = cuda.shared.array(0, uint16)
        bars = cuda.shared.array(NBARS, uint64)
        tid = cuda.threadIdx.x
        wg = tid // 128
        base = int64(shared_address(smem, 0))
        pad = ((1024 - (base & 1023)) & 1023) // 2
        tiles_m = M // BM
        tiles_n = N // BN
        ntiles = tiles_m * tiles_n
        per_group = GROUP * tiles_n
        ktiles = K // BK
        grid = cuda.gridDim.x
        if tid == 0:
            tma_prefetch_desc(tmA)
            tma_prefetch_desc(tmB)
            for s in range(stages):
                mbarrier_init(bars, s, 1)
                mbarrier_init(bars, stages + s, EMPTY_ARRIVALS)
            fence_mbarrier_init()
        cuda.syncthreads()
        if wg == 0:
            setmaxnreg_dec(P_REGS)
            if tid == 0:
                it = 0
                tile = cuda.blockIdx.x
                while tile < ntiles:
                    first = (tile // per_group) * GROUP
                    rows_here = min(tiles_m - first, GROUP)
                    bm = first + (tile % per_group) % rows_here
                    bn = (tile % per_group) // rows_here
                    for kt in range(ktiles):
                        s = it % stages
                        if it >= stages:
                            while mbarrier_try_wait(bars, stages + s, ((it // stages) + 1) & 1) == 0:
                                pass
                        mbarrier_arrive_expect_tx(bars, s, TX)
                        off = pad + s * STAGE
                        tma_load_2d(smem, off, tmA, bars, s, kt * BK, bm * BM)
                        tma_load_2d(smem, off + A_ELEMS, tmB, bars, s, kt * BK, bn * BN)
                        it += 1
                    tile += grid
        else:
            setmaxnreg_inc(C_REGS)
            c = wg - 1
            lane = tid % 32
            j = c
            tile = cuda.blockIdx.x + c * grid
            while tile < ntiles:
                first = (tile // per_group) * GROUP
                rows_here = min(tiles_m - first, GROUP)
                bm = first + (tile % per_group) % rows_here
                bn = (tile % per_group) // rows_here
                if j > 0:       # the other consumer has issued tile j-1: our stages are the next ones
                    if c == 0:
                        named_barrier_sync(1, 256)
                    else:
                        named_barrier_sync(2, 256)
                it = j * ktiles
                acc = wgmma_uninit(BN)
                acc2 = wgmma_uninit(BN)     # rows 64-127 of the tile (BM = 128 only)
                for kt in range(ktiles):
                    s = it % stages
                    while mbarrier_try_wait(bars, s, (it // stages) & 1) == 0:
                        pass
                    a0 = base + 2 * (pad + s * STAGE)
                    b0 = a0 + 2 * A_ELEMS
                    da = desc_a_hi | ((a0 >> 4) & 0x3FFF)
                    da2 = desc_a_hi | (((a0 + HALF) >> 4) & 0x3FFF)
                    db = desc_b_hi | ((b0 >> 4) & 0x3FFF)
                    acc = wgmma_fence(acc)
                    if HALVES == 2:
                        acc2 = wgmma_fence(acc2)
                    for kb in range(BK // 16):
                        acc = wgmma(acc, da + 2 * kb, db + 2 * kb, (kt | kb) != 0, "f32.f16.f16", 0)
                        if HALVES == 2:
                            acc2 = wgmma(acc2, da2 + 2 * kb, db + 2 * kb, (kt | kb) != 0, "f32.f16.f16", 0)
                    wgmma_commit()
                    acc = wgmma_wait(acc, 1)
                    if HALVES == 2:
                        acc2 = wgmma_wait(acc2, 1)
                    if kt > 0 and lane == 0:
                        mbarrier_arrive(bars, stages + (it - 1) % stages)
                    it += 1
                if tile + grid < ntiles:    # let the other consumer start tile j+1's main loop
                    if c == 0:
                        named_barrier_arrive(2, 256)
                    else:
                        named_barrier_arrive(1, 256)
                acc = wgmma_wait(acc, 0)
                if HALVES == 2:
                    acc2 = wgmma_wait(acc2, 0)
                if lane == 0:
                    mbarrier_arrive(bars, stages + (it - 1) % stages)
                row0 = bm * BM + 16 * ((tid % 128) // 32) + lane // 4
                col0 = bn * BN + 2 * (lane % 4)
                store_acc_f32(C, row0, col0, N, acc)
                if HALVES == 2:
                    store_acc_f32(C, row0 + 64, col0, N, acc2)
                j += 2
                tile += 2 * grid

    return gemm_pingpong, threads, smem_bytes


class HopperGemm:
    """A configured kernel with its tensor maps: call(a_dev, bt_dev, c_dev)."""

    def __init__(self, BN=128, stages=4, consumers=2, regs=None, group=0, persistent=False, pingpong=False,
                 tma_store=False, BM=None, cp_async=False):
        self.BN, self.stages, self.consumers, self.regs, self.group = BN, stages, consumers, regs, group
        self.persistent = persistent or pingpong
        self.tma_store = tma_store
        self.cp_async = cp_async
        if tma_store and (pingpong or not persistent):
            raise ValueError("HopperGemm: tma_store is an option of the persistent (cooperative) kernel")
        if cp_async and (self.persistent or tma_store or regs or group or BM not in (None, 64 * consumers)):
            raise ValueError("HopperGemm: cp_async=True is the first step's kernel (all threads load, no TMA): "
                             "it takes BN, stages and consumers only")
        if cp_async:
            self.BM = 64 * consumers
            self.kernel, self.threads, self.smem = make_gemm_cp_async(BN, stages, consumers)
        elif pingpong:    # BM x BN tiles (BM 64 or 128), one consumer warpgroup each
            self.BM = BM or 64
            self.kernel, self.threads, self.smem = make_gemm_pingpong(BN, stages, regs or (40, 232), group,
                                                                      self.BM)
        else:
            if BM not in (None, 64 * consumers):
                raise ValueError("HopperGemm: the cooperative kernels' BM is 64 per consumer (%d), got %d"
                                 % (64 * consumers, BM))
            self.BM = 64 * consumers
            make = make_gemm_persistent if persistent else make_gemm_ws
            extra = dict(tma_store=True) if tma_store else {}
            self.kernel, self.threads, self.smem = make(BN, stages, consumers, regs, group, **extra)
        self.desc_a, self.desc_b = smem_descriptor_hi(self.BM), smem_descriptor_hi(BN)
        self._ready = False
        self._maps = {}

    def __call__(self, a, bt, c, stream=0):
        M, K = a.shape
        N = bt.shape[0]
        if M % self.BM or N % self.BN or K % BK:
            raise ValueError("HopperGemm: M, N, K = %d, %d, %d must be multiples of %d, %d, %d"
                             % (M, N, K, self.BM, self.BN, BK))
        # a tensor map holds only the address, extents and pitch: key on those, never on id()
        if self.cp_async:       # the kernel reads A and Bt itself: row-major, K contiguous
            if not (a.is_c_contiguous() and bt.is_c_contiguous()):
                raise ValueError("HopperGemm(cp_async=True): A and Bt must be C-contiguous (K-major)")
            self._launch((N // self.BN, M // self.BM), (a, bt, c, np.int64(M), np.int64(N), np.int64(K),
                                                        np.int64(self.desc_a), np.int64(self.desc_b)), stream)
            return
        key = tuple((x.__cuda_array_interface__["data"][0], x.shape, x.strides) for x in (a, bt))
        if key not in self._maps:
            self._maps[key] = (make_tensor_map(a, self.BM), make_tensor_map(bt, self.BN))
        tma, tmb = self._maps[key]
        if self.tma_store:    # the kernel writes C through its tensor map (f32, 64 x 32 boxes)
            if c.shape != (M, N) or np.dtype(c.dtype) != np.float32 or not c.is_c_contiguous():
                raise ValueError("HopperGemm(tma_store=True): C must be a contiguous (M, N) float32 array")
            ckey = ("C", c.__cuda_array_interface__["data"][0], c.shape)
            if ckey not in self._maps:
                if len(self._maps) > 64:
                    self._maps.clear()
                self._maps[ckey] = make_tensor_map(c, EPI_BOX[0], _F32, EPI_BOX[1])
            c = self._maps[ckey]
        args = (tma, tmb, c, np.int64(M), np.int64(N), np.int64(K), np.int64(self.desc_a), np.int64(self.desc_b))
        tiles = (M // self.BM) * (N // self.BN)
        if self.persistent:
            from numba import cuda
            grid = (min(tiles, cuda.get_current_device().MULTIPROCESSOR_COUNT),)
        else:
            grid = (tiles,) if self.group else (N // self.BN, M // self.BM)
        self._launch(grid, args, stream)

    def _launch(self, grid, args, stream):
        if not self._ready:
            allow_dynamic_shared(self.kernel, args, self.smem)
            self._ready = True
        self.kernel[grid, self.threads, stream, self.smem](*args)

    def sass_counts(self):
        """Counts of HGMMA / UTMALDG / local-memory instructions in the compiled SASS (needs nvdisasm)."""
        try:
            sass = "\n".join(self.kernel.inspect_sass().values()) if isinstance(self.kernel.inspect_sass(), dict) \
                else self.kernel.inspect_sass()
        except Exception as e:  # noqa: BLE001
            return {"error": str(e)[:200]}
        return {k: sass.count(k) for k in ("HGMMA", "UTMALDG", "LDL", "STL", "HMMA")}


# what matmul("auto") runs: the fastest variant of RESULTS_HOPPER.md's run 5 (the TMA-store epilogue; 2.5%
# ahead of runs 3-4's persistent kernel in the same process, within the noise between runs)
MATMUL_CONFIG = dict(BN=256, stages=4, regs=(40, 232), group=16, persistent=True, tma_store=True)
_MATMUL = {}


def matmul_hopper(a, b, out=None, stream=0):
    """C = a @ b (float32) with the persistent Hopper kernel, or None where it does not apply: kernels.gemm's
    matmul(kernel="auto") asks this first on sm_90. Applies to float16 device-or-host arrays (uint16 views
    of f16 too) with A (M, K) row-major contiguous, B (K, N) column-major contiguous (B.T row-major: both
    operands K-major, as wgmma reads them without transposing), M, N, K multiples of the configured tile
    (MATMUL_CONFIG: 128 x 256 x 64), and an `out` that is None or a contiguous float32 (M, N) device array."""
    from numba import cuda
    M, K = a.shape
    N = b.shape[1]
    from .arrays import device_view, transposed
    bt = transposed(b)
    if _MATMUL.get("cfg") != MATMUL_CONFIG:
        _MATMUL.update(cfg=dict(MATMUL_CONFIG), g=HopperGemm(**MATMUL_CONFIG))
    g = _MATMUL["g"]
    if M % g.BM or N % g.BN or K % BK or M == 0 or N == 0 or K == 0:
        return None

    def kmajor(x):
        st = x.strides
        return st[1] == x.dtype.itemsize and st[0] == x.shape[1] * x.dtype.itemsize

    if not (kmajor(a) and kmajor(bt)):
        return None
    if out is not None and (isinstance(out, np.ndarray) or not hasattr(out, "__cuda_array_interface__")):
        return None
    da = cuda.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else device_view(a)
    dbt = cuda.to_device(np.ascontiguousarray(bt)) if isinstance(bt, np.ndarray) else device_view(bt)
    c = device_view(out) if out is not None else cuda.device_array((M, N), np.float32)
    if c.shape != (M, N) or np.dtype(c.dtype) != np.float32 or not c.is_c_contiguous():
        return None
    g(da, dbt, c, stream)
    return c


def time_vs_cublas(gemms, size=4096, reps=20):
    """Time each kernel of `gemms` (a dict name -> kernel called as kernel(a, bt, c), e.g. a HopperGemm; or
    one kernel) at size^3 against cuBLAS through torch or CuPy, whichever is installed, all on the same
    inputs and as GPU time (kernels.timing.gpu_time_ms). Each kernel's C is checked against cuBLAS first
    (poisoned with NaN before the run). Returns a Markdown table (device, date) for a notebook."""
    import datetime
    from numba import cuda
    from .timing import gpu_time_ms
    if not isinstance(gemms, dict):
        gemms = {"this kernel": gemms}
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((size, size)) * 0.5).astype(np.float16)
    bt = (rng.standard_normal((size, size)) * 0.5).astype(np.float16)
    da, dbt = cuda.to_device(a), cuda.to_device(bt)
    flops = 2.0 * size ** 3
    try:
        import torch
        ta, tbt = torch.from_numpy(a).cuda(), torch.from_numpy(bt).cuda()
        ref = torch.mm(ta.float(), tbt.float().T).cpu().numpy()
        try:        # the same work as the kernel: fp16 in, fp32 out
            torch.mm(ta, tbt.T, out_dtype=torch.float32)
            base = gpu_time_ms(lambda: torch.mm(ta, tbt.T, out_dtype=torch.float32), reps)
            lib = "cuBLAS fp16->fp32 (torch %s)" % torch.__version__
        except (TypeError, RuntimeError):       # a torch without out_dtype
            base = gpu_time_ms(lambda: torch.mm(ta, tbt.T), reps)
            lib = "cuBLAS fp16->fp16 (torch %s)" % torch.__version__
    except ImportError:
        try:
            import cupy
            ca, cbt = cupy.asarray(a), cupy.asarray(bt)
            ref = cupy.asnumpy(ca.astype(cupy.float32) @ cbt.astype(cupy.float32).T)
            base = gpu_time_ms(lambda: ca @ cbt.T, reps)
            lib = "cuBLAS fp16 (CuPy %s)" % cupy.__version__
        except ImportError:
            ref, base, lib = a.astype(np.float32) @ bt.astype(np.float32).T, None, None
    name = cuda.get_current_device().name
    lines = ["Measured %s on %s, %d^3, GPU time, median of %d" % (datetime.date.today(), name.decode()
                                                                if isinstance(name, bytes) else name, size, reps),
             "", "| kernel | ms | TFLOP/s | / cuBLAS |", "|---|---|---|---|"]
    if base is not None:
        lines.append("| %s | %.3f | %.1f | 1.00 |" % (lib, base, flops / base / 1e9))
    for label, gemm in gemms.items():
        dc = cuda.to_device(np.full((size, size), np.nan, np.float32))
        gemm(da, dbt, dc)
        out = dc.copy_to_host()
        err = float(np.linalg.norm(np.nan_to_num(out - ref, nan=1e30)) / np.linalg.norm(ref))
        if not (np.isfinite(out).all() and err < 1e-3):
            raise AssertionError("time_vs_cublas: %s's C differs from the reference (rel err %.2e)" % (label, err))
        ms = gpu_time_ms(lambda: gemm(da, dbt, dc), reps)
        lines.append("| %s | %.3f | %.1f | %s |" % (label, ms, flops / ms / 1e9, "%.2f" % (base / ms) if base else "-"))
    if base is None:
        lines.append("\n(no torch or CuPy here: no cuBLAS to compare with)")
    return "\n".join(lines)


# The ladder of chapter 8, one idea a step: (what the step adds, its kernel in VARIANTS)
LADDER = [("1. wgmma, fed by cp.async from every thread", "cp.async + wgmma BN128 st4"),
          ("2. TMA loads on mbarriers, a producer warpgroup", "ws BN128 st4"),
          ("3. 128 x 256 tiles, setmaxnreg, grouped raster", "ws BN256 st4 setmaxnreg group8"),
          ("4. a persistent grid", "persistent BN256 st4 group16"),
          ("5. C out through shared memory and a TMA store", "persistent BN256 st4 group16 tma-store")]


VARIANTS = {   # what main() checks and times, in this order: the ladder's steps, then the tuned variants
    "cp.async + wgmma BN128 st4": dict(BN=128, stages=4, cp_async=True),
    "ws BN128 st4": dict(BN=128, stages=4),
    "ws BN256 st4 setmaxnreg group8": dict(BN=256, stages=4, regs=(40, 232), group=8),
    "persistent BN256 st4 group8": dict(BN=256, stages=4, regs=(40, 232), group=8, persistent=True),
    "persistent BN256 st4 group16": dict(BN=256, stages=4, regs=(40, 232), group=16, persistent=True),
    "persistent BN256 st4 group16 tma-store": dict(BN=256, stages=4, regs=(40, 232), group=16, persistent=True,
                                                   tma_store=True),
    "pingpong BN256 st4 group16": dict(BN=256, stages=4, regs=(40, 232), group=16, pingpong=True),
    "pingpong 128x128 st4 group16": dict(BM=128, BN=128, stages=4, regs=(40, 232), group=16, pingpong=True),
}


def main(argv=None):
    """Check every variant on this GPU (NumPy reference, outputs poisoned with NaN first), then time it at
    4096^3 against cuBLAS through torch in the same process; print a table."""
    import kernels
    kernels.setup()
    from numba import cuda
    from .timing import gpu_time_ms
    rng = np.random.default_rng(7)
    variants = list(VARIANTS.items())
    if argv:
        variants = [v for v in variants if any(a in v[0] for a in argv)] or variants
    S = 4096
    flops = 2.0 * S ** 3
    a = (rng.standard_normal((S, S)) * 0.5).astype(np.float16)
    bt = (rng.standard_normal((S, S)) * 0.5).astype(np.float16)
    ref_big = a.astype(np.float32) @ bt.astype(np.float32).T
    da, dbt = cuda.to_device(a), cuda.to_device(bt)
    rows = []
    for name, cfg in variants:
        g = HopperGemm(**cfg)
        ok, ms = True, float("nan")
        for (M, N, K) in ((256, 512, 320), (384, 1024, 192), (S, S, S)):
            if (M, N, K) == (S, S, S):
                x, y, ref = da, dbt, ref_big
            else:
                xa = (rng.standard_normal((M, K)) * 0.5).astype(np.float16)
                xb = (rng.standard_normal((N, K)) * 0.5).astype(np.float16)
                ref = xa.astype(np.float32) @ xb.astype(np.float32).T
                x, y = cuda.to_device(xa), cuda.to_device(xb)
            dc = cuda.to_device(np.full((M, N), np.nan, dtype=np.float32))
            try:
                g(x, y, dc)
                cuda.synchronize()
            except Exception as e:  # noqa: BLE001
                print("%s: FAILED at %s: %s" % (name, (M, N, K), str(e)[:1500]), flush=True)
                ok = False
                break
            out = dc.copy_to_host()
            written = bool(np.isfinite(out).all())
            err = float(np.linalg.norm(np.nan_to_num(out - ref, nan=1e30)) / np.linalg.norm(ref))
            print("%s %s: rel err %.2e, every output written: %s" % (name, (M, N, K), err, written), flush=True)
            ok = ok and written and err < 1e-5
        if ok:
            dc = cuda.device_array((S, S), dtype=np.float32)
            ms = gpu_time_ms(lambda: g(da, dbt, dc), reps=30)
        rows.append((name, ok, ms, g.sass_counts() if ok else {}))
        print("%s: %s, %.3f ms, %.1f TFLOP/s, SASS %s" % (name, "PASS" if ok else "FAIL", ms, flops / ms / 1e9,
                                                          rows[-1][3]), flush=True)
    import torch
    ta, tbt = torch.from_numpy(a).cuda(), torch.from_numpy(bt).cuda()
    base = {}
    base["cuBLAS fp16->fp16 (torch.mm)"] = gpu_time_ms(lambda: torch.mm(ta, tbt.T), reps=30)
    try:
        base["cuBLAS fp16->fp32 (torch.mm out_dtype)"] = gpu_time_ms(
            lambda: torch.mm(ta, tbt.T, out_dtype=torch.float32), reps=30)
    except Exception as e:  # noqa: BLE001
        print("torch.mm out_dtype=float32 unavailable:", str(e)[:200])
    ref_name = list(base)[-1]
    print("\n| kernel (4096^3, fp16 in, fp32 accumulate) | ms | TFLOP/s | / %s |" % ref_name)
    print("|---|---|---|---|")
    for n, t in base.items():
        print("| %s | %.3f | %.1f | %.2f |" % (n, t, flops / t / 1e9, base[ref_name] / t))
    for name, ok, ms, sass in rows:
        print("| %s | %s | %s | %s |" % (name, "%.3f" % ms if ok else "FAIL", "%.1f" % (flops / ms / 1e9) if ok else "-",
                                        "%.2f" % (base[ref_name] / ms) if ok else "-"))
    print("torch", torch.__version__, "device", torch.cuda.get_device_name())
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
