"""A cp.async pipeline at its smallest (chapter 7's find-the-bug exercise): SIMT fp32, 32x32 tiles of C,
BK = 8, STAGES shared buffers, 64 threads each computing a 4x4 block, written with the CuTe layer: a
TiledCopy of cp.async atoms (16 bytes a thread, bypassing registers) for each operand, and a TiledMMA of
UniversalFMA (one multiply-add a thread) over an 8x8 grid of threads.

The pipeline: STAGES - 1 k-tiles are put in flight before the loop; at the top of iteration kt the thread
waits until k-tile kt's group has landed (cp.async.wait_group WAIT: at most WAIT newer groups may still be
in flight), a barrier makes every thread's copies visible and frees the buffer read in iteration kt - 1,
then k-tile kt + STAGES - 1 is sent into that buffer and k-tile kt is multiplied.

In Numba's simulator every cp.async lands at once, so a wrong WAIT could not show. Here the simulator uses
`StrictCpAsync` instead: a copy lands only when a wait_group covers its group, the latest moment PTX allows.
A pipeline that is right under this model is right on any GPU; a wrong one reads stale shared memory.

    import kernels; kernels.setup()
    from kernels.gemm import pipeline_demo as pd
    C = pd.run(A, B)            # the right WAIT (STAGES - 2)
    C = pd.run(A, B, wait=2)    # one group too many left in flight
    C = pd.run(A, B, wait=2, groups=2)   # A's and B's copies as two groups a k-tile: 2 (STAGES - 2) is right
"""

import threading

import numpy as np
from numba import cuda

from cutelite import Layout, Major, _, make_copy_atom, make_mma_atom, make_tiled_copy, make_tiled_mma, size

from ..cutejit import (
    Matrix, assign, block_idx, copy, cp_async_fence, cp_async_wait, fill, gemm, if_, kernel, local_tile,
    make_fragment_like, make_smem_tensor, range_, syncthreads, thread_idx, var,
)
from ..runtime import in_simulator

f32 = np.float32
BM, BN, BK, STAGES, THREADS = 32, 32, 8, 3, 64


class StrictCpAsync:
    """cp.async as late as PTX allows: each simulated thread's copies are held in groups (commit_group
    closes one) and land only when wait_group(n) leaves at most n newer groups pending. The source is
    read when the copy is issued (16 bytes); until the copy lands its destination is undefined, which the
    model makes visible by filling it with 0xFF bytes (NaN as f32 and as f16) at issue.

    Post: after wait(0) every issued and committed copy of the calling thread has landed.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.state = {}        # thread ident -> (groups: list of lists of (dst view, bytes), open group)

    def reset(self):
        with self.lock:
            self.state.clear()

    def _mine(self):
        with self.lock:
            return self.state.setdefault(threading.get_ident(), ([], []))

    def copy16(self, dst, dst_idx, src, src_idx):
        from ..instructions.sim import _span
        view = _span(dst, dst_idx, 16, "cp.async")
        self._mine()[1].append((view, _span(src, src_idx, 16, "cp.async").copy()))
        view[:] = 0xFF

    def commit(self):
        groups, current = self._mine()
        groups.append(list(current))
        current.clear()

    def wait(self, n):
        groups, _ = self._mine()
        while len(groups) > n:
            for view, data in groups.pop(0):
                view[:] = data


MODEL = StrictCpAsync()


def objects():
    """The copies and the TiledMMA: A (32, 8) and B seen as (N, K) = (32, 8), each copied 4 floats a thread
    along its contiguous mode; UniversalFMA<float> over 8x8 threads, each 4x4 values of C."""
    cp = make_copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "float")
    g2s_A = make_tiled_copy(cp, Layout((32, 2), (2, 1)), Layout((1, 4)))
    g2s_B = make_tiled_copy(cp, Layout((8, 8), (1, 8)), Layout((4, 1)))
    mma = make_tiled_mma(make_mma_atom("UniversalFMA<float>"), Layout((8, 8, 1)))
    return g2s_A, g2s_B, mma


@kernel
def gemm_pipelined(mA, mB, mC, g2s_A, g2s_B, mma, wait, groups):
    tid, bid = thread_idx(), block_idx()
    n_tiles = mC.shape[1] // BN
    m, n = bid // n_tiles, bid % n_tiles
    gA = local_tile(mA, (BM, BK), (m, _))               # (32, 8, k)
    gB = local_tile(mB, (BN, BK), (n, _))               # (32, 8, k): B seen as (N, K)
    gC = local_tile(mC, (BM, BN), (m, n))
    sA = make_smem_tensor(Layout((BM, BK, STAGES), (BK, 1, BM * BK)), "float32")   # K-major
    sB = make_smem_tensor(Layout((BN, BK, STAGES), (1, BN, BN * BK)), "float32")   # N-major
    thr_A, thr_B = g2s_A.get_slice(tid), g2s_B.get_slice(tid)
    tAgA, tAsA = thr_A.partition_S(gA), thr_A.partition_D(sA)
    tBgB, tBsB = thr_B.partition_S(gB), thr_B.partition_D(sB)
    thr_mma = mma.get_slice(tid)
    tCsA, tCsB = thr_mma.partition_A(sA), thr_mma.partition_B(sB)    # (1, 4, 8, stages)
    tCrA, tCrB = make_fragment_like(tCsA[_, _, _, 0]), make_fragment_like(tCsB[_, _, _, 0])
    tCrC = thr_mma.partition_fragment_C(gC)                           # (1, 4, 4)
    fill(tCrC, 0.0)
    k_tiles = gA.shape[2]
    for s in range(STAGES - 1):                         # prologue: k-tiles 0 .. STAGES-2 in flight
        with if_(s < k_tiles):
            copy(g2s_A, tAgA[_, _, _, s], tAsA[_, _, _, s])
        if groups == 2:
            cp_async_fence()                            # A's copies: a group of their own
        with if_(s < k_tiles):
            copy(g2s_B, tBgB[_, _, _, s], tBsB[_, _, _, s])
        cp_async_fence()
    read, write = var(0, "read"), var(STAGES - 1, "write")
    for kt in range_(k_tiles):
        cp_async_wait(wait)                             # my copies of k-tile kt have landed ...
        syncthreads()                                   # ... everyone's; stage `write` is free
        with if_(kt + STAGES - 1 < k_tiles):
            copy(g2s_A, tAgA[_, _, _, kt + STAGES - 1], tAsA[_, _, _, write])
        if groups == 2:
            cp_async_fence()
        with if_(kt + STAGES - 1 < k_tiles):
            copy(g2s_B, tBgB[_, _, _, kt + STAGES - 1], tBsB[_, _, _, write])
        cp_async_fence()                                # groups per iteration, even empty ones
        assign(write, (write + 1) % STAGES)
        copy(tCsA[_, _, _, read], tCrA)                 # this k-tile's values, shared -> registers
        copy(tCsB[_, _, _, read], tCrB)
        gemm(mma, tCrA, tCrB, tCrC)
        assign(read, (read + 1) % STAGES)
    cp_async_wait(0)
    copy(tCrC, thr_mma.partition_C(gC))


def make_kernel(wait=STAGES - 2, groups=1):
    """The kernel k: k.launch(A, B, C) for C (M, N) = A (M, K) @ B (K, N), fp32 row-major, M and N multiples
    of 32, K of 8. `wait`: the wait_group count of the main loop; `groups`: the cp.async groups a k-tile's
    copies form, 1 (A and B together) or 2 (A's, then B's). In the simulator its cp.async runs on MODEL
    (StrictCpAsync): a copy lands only when a wait_group covers it."""
    if groups not in (1, 2):
        raise ValueError(f"pipeline_demo.make_kernel: groups must be 1 or 2, got {groups!r}")
    overrides = (dict(cp_async_cg_16=MODEL.copy16, cp_async_commit=MODEL.commit, cp_async_wait=MODEL.wait)
                 if in_simulator() else None)
    k = gemm_pipelined.build(Matrix("float32"), Matrix("float32", Major.MN, transposed=True), Matrix("float32"),
                             *objects(), wait, groups, threads=THREADS, overrides=overrides)
    k.wait, k.groups = wait, groups
    k.grid = lambda A, B, C: (C.shape[0] // BM) * (C.shape[1] // BN)
    return k


_KERNELS = {}


def run(A, B, wait=STAGES - 2, groups=1, out=None):
    """C = A @ B (NumPy float32, or device arrays) with the pipeline's wait_group count `wait` and `groups`
    cp.async groups per k-tile; the output is poisoned with NaN first. Returns a NumPy array."""
    if (wait, groups) not in _KERNELS:
        _KERNELS[wait, groups] = make_kernel(wait, groups)
    M, K = A.shape
    N = B.shape[1]
    if M % BM or N % BN or K % BK:
        raise ValueError("pipeline_demo.run: M, N must be multiples of %d and K of %d, got %dx%dx%d"
                         % (BM, BK, M, N, K))
    C = np.full((M, N), np.nan, f32) if out is None else out
    MODEL.reset()
    dA, dB, dC = (cuda.to_device(np.ascontiguousarray(x, dtype=f32)) for x in (A, B, C))
    _KERNELS[wait, groups].launch(dA, dB, dC)
    MODEL.reset()
    return dC.copy_to_host()
