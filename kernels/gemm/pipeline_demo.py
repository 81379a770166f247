"""A cp.async pipeline at its smallest (chapter 7's find-the-bug exercise): SIMT fp32, 32x32 tiles of C,
BK = 8, STAGES shared buffers, 64 threads each computing a 4x4 block. Each thread copies one float4 of the
A tile and one of the B tile per k-tile with cp.async (16 bytes, bypassing registers).

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
"""

import threading

import numpy as np
from numba import cuda

from cutelite import Layout

from ..instructions import SMEM_ALIGN
from ..layout_codegen import layout_fn
from ..runtime import in_simulator

f32 = np.float32
BM, BN, BK, STAGES, THREADS = 32, 32, 8, 3, 64
A_SZ, B_SZ = BM * BK, BK * BN
SA, SB = STAGES * A_SZ, STAGES * B_SZ
sA_at = layout_fn(Layout((BM, BK), (BK, 1)), by_mode=True, name="sA_at")    # (m, k): a float4 = 4 k
sB_at = layout_fn(Layout((BK, BN), (BN, 1)), by_mode=True, name="sB_at")    # (k, n): a float4 = 4 n


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
if in_simulator():
    cp_async_cg_16, cp_async_commit, cp_async_wait = MODEL.copy16, MODEL.commit, MODEL.wait
else:
    from ..instructions import cp_async_cg_16, cp_async_commit, cp_async_wait


def make_kernel(wait=STAGES - 2):
    """gemm_pipelined(A, B, C): C (M, N) = A (M, K) @ B (K, N), fp32 row-major, M and N multiples of 32,
    K of 8; grid (N // 32, M // 32), 64 threads. `wait`: the wait_group count of the main loop."""
    WAIT = wait

    @cuda.jit
    def gemm_pipelined(A, B, C):
        sA = cuda.shared.array(SA, f32, alignment=SMEM_ALIGN)
        sB = cuda.shared.array(SB, f32, alignment=SMEM_ALIGN)
        acc = cuda.local.array(16, f32)
        t = cuda.threadIdx.x
        N, K = C.shape[1], A.shape[1]
        m0, n0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
        tm, tn = (t // 8) * 4, (t % 8) * 4             # this thread's 4x4 block of C
        ar, ak = t // 2, 4 * (t % 2)                   # its float4 of the A tile: row ar, k ak..ak+3
        br, bc = t // 8, 4 * (t % 8)                   # and of the B tile: row br, n bc..bc+3
        for i in range(16):
            acc[i] = f32(0.0)
        KT = K // BK
        for s in range(STAGES - 1):                    # prologue: k-tiles 0 .. STAGES-2 in flight
            if s < KT:
                cp_async_cg_16(sA, s * A_SZ + sA_at(ar, ak), A, (m0 + ar) * K + s * BK + ak)
                cp_async_cg_16(sB, s * B_SZ + sB_at(br, bc), B, (s * BK + br) * N + n0 + bc)
            cp_async_commit()
        for kt in range(KT):
            cp_async_wait(WAIT)                        # my copies of k-tile kt have landed ...
            cuda.syncthreads()                         # ... everyone's; buffer (kt-1) % STAGES is free
            nxt = kt + STAGES - 1
            if nxt < KT:
                s = nxt % STAGES
                cp_async_cg_16(sA, s * A_SZ + sA_at(ar, ak), A, (m0 + ar) * K + nxt * BK + ak)
                cp_async_cg_16(sB, s * B_SZ + sB_at(br, bc), B, (nxt * BK + br) * N + n0 + bc)
            cp_async_commit()                          # one group per iteration, even an empty one
            st = kt % STAGES
            for k in range(BK):
                for i in range(4):
                    a = sA[st * A_SZ + sA_at(tm + i, k)]
                    for j in range(4):
                        acc[4 * i + j] += a * sB[st * B_SZ + sB_at(k, tn + j)]
        cp_async_wait(0)
        for i in range(4):
            for j in range(4):
                C[m0 + tm + i, n0 + tn + j] = acc[4 * i + j]

    gemm_pipelined.wait = WAIT
    return gemm_pipelined


_KERNELS = {}


def run(A, B, wait=STAGES - 2, out=None):
    """C = A @ B (NumPy float32, or device arrays) with the pipeline's wait_group count `wait`; the output
    is poisoned with NaN first. Returns a NumPy array."""
    if wait not in _KERNELS:
        _KERNELS[wait] = make_kernel(wait)
    M, K = A.shape
    N = B.shape[1]
    if M % BM or N % BN or K % BK:
        raise ValueError("pipeline_demo.run: M, N must be multiples of %d and K of %d, got %dx%dx%d"
                         % (BM, BK, M, N, K))
    C = np.full((M, N), np.nan, f32) if out is None else out
    MODEL.reset()
    dA, dB, dC = (cuda.to_device(np.ascontiguousarray(x, dtype=f32)) for x in (A, B, C))
    _KERNELS[wait][(N // BN, M // BM), THREADS](dA, dB, dC)
    MODEL.reset()
    return dC.copy_to_host()
