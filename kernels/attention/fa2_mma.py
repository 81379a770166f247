"""FlashAttention-2 on mma.sync, written with the CuTe layer: O = softmax(scale Q K^T [+ causal]) V and the
log-sum-exp of every row, for Q (B, S_q, H, D), K and V (B, S_k, H_kv, D) with D contiguous (a (B, H, S, D)
array is passed as its transposed view), H a multiple of H_kv (grouped-query heads share a K/V head).

A CTA owns BM rows of Q for one (batch, head), BM / warps rows a warp, and walks the keys BN at a time. Its Q
tile is read once into registers (the A operand of every S = Q K^T), or with q_regs=False read again from
shared memory beside each K tile (registers left for more rows a warp); each K and V tile comes through shared
memory (cp.async on sm_80+; on a T4, 16-byte loads into registers stored after the math), K's copy overlapping
the softmax and P V, V's the Q K^T. Between the two GEMMs the online softmax keeps, per row, the running max m
and sum l: S is scaled by scale * log2(e) so that every exponential is one ex2.approx; the row max is reduced
across the lanes that share a row (a fact of the C layout: cutejit.accumulator.AccRows); O is rescaled by
2^(m_old - m_new) when the max grows. P, converted to 16 bits, is already laid out as the A operand of P V in
the registers that held it as C (retile_C_as_A). Edges are predicated with identity tensors: keys past S_k
are -inf, Q rows past S_q are not written; with `causal`, key j is seen by query i when j <= i + S_k - S_q
(the diagonal aligned bottom-right, as FlashAttention does). A row with no key gives O = 0 and LSE = -inf.
"""

import math

from cutelite import Layout, Major, _, make_layout, size, tile_to_shape
from cutelite.atoms import make_mma_atom
from cutelite.copy_atoms import make_copy_atom
from cutelite.numeric import numeric
from cutelite.tensorcore import ATOMS, g2s_copy, swizzle_atom
from cutelite.tiled import make_tiled_copy_A, make_tiled_copy_B, make_tiled_mma

from ..cutejit import (
    Matrix, block_idx, copy, cp_async_fence, cp_async_wait, elem_less, fill, gemm, if_, kernel, local_tile,
    make_fragment_like, make_identity_tensor, make_smem_tensor, min_, range_, syncthreads, thread_idx,
)
from ..cutejit.accumulator import AccRows, bind, convert, exp2, log, retile_C_as_A, row_reduce, store, val, where
from ..cutejit.trace import current

# the tiles make() takes by default: 8 warps of 16 rows where registers allow (sm_80+: 209 registers at D = 128),
# 4 warps and 32-key tiles on a T4 (tiles staged in registers; tests/test_attention_ptx.py prints the counts)
BEST = {"sm80": dict(BM=128, BN=64, warps=8), "sm75": dict(BM=64, BN=32, warps=4)}
# FlashAttention-2's own tiles for A100 and H100 (its flash_fwd_launch_template.h, cited in book/references.bib):
# 4 warps of 32 rows, Q read from shared memory beside each K tile, 128 keys a tile at D = 64 and 64 at D = 128
FA2_TILES = {64: dict(BM=128, BN=128, warps=4, q_regs=False), 128: dict(BM=128, BN=64, warps=4, q_regs=False)}
LOG2E = 1.0 / math.log(2.0)


def objects(BM, BN, D, warps, arch, dtype):
    """The CuTe objects of one configuration: the TiledMMA (warps along M), the g2s copies of Q and of K/V
    (16 bytes a thread), the ldmatrix copies of Q (A), K (B, K-major) and V (B read as (D, BN): .trans), the
    swizzled shared layouts of Q (BM, D) and of a K or V tile (BN, D)."""
    mma = make_tiled_mma(make_mma_atom(ATOMS[arch, dtype]), Layout((warps, 1, 1)), (16 * warps, 16, 16))
    elem, threads = numeric(dtype).cpp, 32 * warps
    op = "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>" if arch == "sm80" else "UniversalCopy<uint128_t>"
    return dict(mma=mma, g2s_Q=g2s_copy(op, BM, D, threads, Major.K, elem),
                g2s_KV=g2s_copy(op, BN, D, threads, Major.K, elem),
                s2r_Q=make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", elem), mma),
                s2r_K=make_tiled_copy_B(make_copy_atom("SM75_U32x4_LDSM_N", elem), mma),
                s2r_V=make_tiled_copy_B(make_copy_atom("SM75_U16x8_LDSM_T", elem), mma),
                sQ=tile_to_shape(swizzle_atom(Major.K, D, dtype), (BM, D)),
                sKV=tile_to_shape(swizzle_atom(Major.K, D, dtype), (BN, D)))


@kernel
def fa2_fwd(mQ, mK, mV, mO, mLSE, mma, g2s_Q, g2s_KV, s2r_Q, s2r_K, s2r_V, sQ_layout, sKV_layout, scale, causal,
            q_regs, longest_first):
    t, tid, bid = current(), thread_idx(), block_idx()
    BM, D, BN = size(sQ_layout, 0), size(sQ_layout, 1), size(sKV_layout, 0)
    S_q, H, S_k = mQ.shape[1], mQ.shape[2], mK.shape[1]
    m_tiles = t.let((S_q + BM - 1) // BM, "m_tiles")        # each index computed once, not in every use
    if causal and longest_first:                             # every head's last q-tile, then the tiles before
        m, h, b = m_tiles - 1 - bid // (H * mQ.shape[0]), bid % H, (bid // H) % mQ.shape[0]
    else:                                                    # a head's q-tiles one after another
        m, h, b = bid % m_tiles, (bid // m_tiles) % H, bid // (m_tiles * H)
        if causal:
            m = m_tiles - 1 - m                              # the longest rows of the head first
    m, h, b = t.let(m, "m"), t.let(h, "h"), t.let(b, "b")
    kv_h = t.let(h // (H // mK.shape[2]), "kv_h")            # grouped-query heads share K and V
    gQ = local_tile(mQ[b, _, h, _], (BM, D), (m, 0))         # (BM, D)
    gK = local_tile(mK[b, _, kv_h, _], (BN, D), (_, 0))      # (BN, D, n)
    gV = local_tile(mV[b, _, kv_h, _], (BN, D), (_, 0))
    gO = local_tile(mO[b, _, h, _], (BM, D), (m, 0))
    cQ = local_tile(make_identity_tensor((S_q, D)), (BM, D), (m, 0))     # coordinates, for the predicates
    cK = local_tile(make_identity_tensor((S_k, D)), (BN, D), (_, 0))
    cS = local_tile(make_identity_tensor((S_q, S_k)), (BM, BN), (m, _))
    sQ, sK, sV = (make_smem_tensor(x, mQ.dtype) for x in (sQ_layout, sKV_layout, sKV_layout))
    sVt = sV.compose(make_layout((D, BN), (BN, 1)))         # V's tile seen as (D, BN): P V's B operand
    g2s_q, g2s_kv = g2s_Q.get_slice(tid), g2s_KV.get_slice(tid)
    tQgQ, tQsQ, tQcQ = g2s_q.partition_S(gQ), g2s_q.partition_D(sQ), g2s_q.partition_S(cQ)
    tKgK, tKsK, tKcK = g2s_kv.partition_S(gK), g2s_kv.partition_D(sK), g2s_kv.partition_S(cK)
    tVgV, tVsV = g2s_kv.partition_S(gV), g2s_kv.partition_D(sV)
    thr_mma = mma.get_slice(tid)
    tSrQ = thr_mma.partition_fragment_A(sQ)                 # (MMA, MMA_M, MMA_K): Q, all of D, kept
    tSrK = thr_mma.partition_fragment_B(sK)
    tOrVt = thr_mma.partition_fragment_B(sVt)
    tOrO = thr_mma.partition_fragment_C(gO)                 # (MMA, MMA_M, MMA_N over D) float32
    fill(tOrO, 0.0)
    tXsQ, tXrQ = s2r_Q.get_slice(tid).partition_S(sQ), s2r_Q.get_slice(tid).retile_D(tSrQ)
    tXsK, tXrK = s2r_K.get_slice(tid).partition_S(sK), s2r_K.get_slice(tid).retile_D(tSrK)
    tXsV, tXrV = s2r_V.get_slice(tid).partition_S(sVt), s2r_V.get_slice(tid).retile_D(tOrVt)
    rows_S, rows_O = AccRows(mma, (BM, BN)), AccRows(mma, (BM, D))
    row_max, row_sum = running(rows_S)
    staged = g2s_KV.atom.op.startswith("UniversalCopy")     # a T4: no cp.async, tiles pass through registers
    rQ, rKV = (make_fragment_like(x) for x in (tQsQ, tKsK)) if staged else (None, None)

    def issue(g2s, src, dst, coords, bound, regs):          # a tile's copy starts ...
        copy(g2s, src, regs if staged else dst, pred=elem_less(coords, (bound, None)))
        if not staged:
            cp_async_fence()

    def land(*pairs):                                        # ... and has landed, for every thread
        for regs, dst in pairs if staged else ():
            copy(regs, dst)
        if not staged:
            cp_async_wait(0)
        syncthreads()

    def gemm_k(s2r, tXs, tXr, A, B, C, s2r_A=None):        # C += A B, B's k-blocks read just before their mma
        per = size(B.layout, 2) // size(tXr.layout, 2)      # mma k-blocks per ldmatrix: 2 for a T4's k8
        per_A = size(A.layout, 2) // size(tXrQ.layout, 2)
        for kb in range(size(tXr.layout, 2)):
            copy(s2r, tXs[_, _, kb], tXr[_, _, kb])
            for j in range(per * kb, per * (kb + 1)):
                if s2r_A is not None and j % per_A == 0:    # and A's, when A stays in shared memory (Q)
                    copy(s2r_A, tXsQ[_, _, j // per_A], tXrQ[_, _, j // per_A])
                gemm(mma, A[_, _, j], B[_, _, j], C)

    n_tiles = gK.shape[2]
    n_end = t.let(min_(n_tiles, (min_(S_q, (m + 1) * BM) + S_k - S_q + BN - 1) // BN) if causal else n_tiles, "n_end")
    issue(g2s_Q, tQgQ, tQsQ, tQcQ, S_q, rQ)
    issue(g2s_KV, tKgK[_, _, _, 0], tKsK, tKcK[_, _, _, 0], S_k, rKV)
    land((rQ, tQsQ), (rKV, tKsK))
    if q_regs:
        for kb in range(size(tXrQ.layout, 2)):              # Q into registers, once
            copy(s2r_Q, tXsQ[_, _, kb], tXrQ[_, _, kb])
    for n in range_(n_end):
        tSrS = thr_mma.partition_fragment_C(cS[_, _, 0])    # S = Q K^T of this key tile, float32
        fill(tSrS, 0.0)
        issue(g2s_KV, tVgV[_, _, _, n], tVsV, tKcK[_, _, _, n], S_k, rKV)
        gemm_k(s2r_K, tXsK, tXrK, tSrQ, tSrK, tSrS, None if q_regs else s2r_Q)
        land((rKV, tVsV))                                    # V is in; everyone is done with sK
        with if_(n + 1 < n_end):
            issue(g2s_KV, tKgK[_, _, _, n + 1], tKsK, tKcK[_, _, _, n + 1], S_k, rKV)
        mask(tSrS, thr_mma.partition_C(cS[_, _, n]), (n + 1) * BN, m * BM, S_q, S_k, causal)
        softmax_rescale_O(rows_S, rows_O, tSrS, tOrO, row_max, row_sum, scale * LOG2E)
        tOrP = retile_C_as_A(mma, convert(tSrS, mQ.dtype), (BM, BN))      # P, as P V's A operand
        gemm_k(s2r_V, tXsV, tXrV, tOrP, tOrVt, tOrO)
        with if_(n + 1 < n_end):
            land((rKV, tKsK))                                # K's next tile is in; everyone is done with sV
    tOcO = thr_mma.partition_C(cQ)
    normalize(rows_O, tOrO, row_max, row_sum, scale, tOcO, mLSE[b, h, _], S_q)
    copy(convert(tOrO, mO.dtype), thr_mma.partition_C(gO), pred=elem_less(tOcO, (S_q, None)))


# ---- the online softmax, on the accumulators ------------------------------------------------------------
def running(rows):
    """The running max (from -inf) and sum (from 0) of each row a thread holds: (ROW,) float32 registers."""
    from ..cutejit import make_fragment
    nrow = size(rows.layout, 0)
    row_max, row_sum = make_fragment(Layout(nrow), "float32", "mx"), make_fragment(Layout(nrow), "float32", "sm")
    for r in range(nrow):
        store(row_max[r], -math.inf)
        store(row_sum[r], 0.0)
    return row_max, row_sum


def mask(tSrS, tScS, end, row0, S_q, S_k, causal):
    """Scores a query may not see set to -inf: keys past S_k and, with `causal`, past the diagonal
    (j > i + S_k - S_q). Only in a tile that reaches past either (end: one past its last key; row0: its
    first query), a branch the whole CTA takes alike."""
    cond = end > S_k
    if causal:
        cond = cond | (end > row0 + S_k - S_q + 1)
    with if_(cond):
        for e in range(size(tSrS.layout)):
            i, j = tScS.coord(e)
            keep = j < S_k
            if causal:
                keep = keep & (j <= i + S_k - S_q)
            store(tSrS[e], where(keep, val(tSrS[e]), -math.inf))


def softmax_rescale_O(rows_S, rows_O, tSrS, tOrO, row_max, row_sum, scale_log2):
    """One key tile of the online softmax: the new row max (over the lanes sharing the row), P = 2^(S scale_log2
    - max scale_log2) in place of S, the running sum and O rescaled by 2^((old max - new max) scale_log2)."""
    S, O = rows_S.view(tSrS), rows_O.view(tOrO)
    new_max = row_reduce(S, "max", rows_S.masks, init=row_max)
    for r in range(size(S.layout, 0)):
        top = bind(where(val(new_max[r]) == -math.inf, 0.0, val(new_max[r]) * scale_log2), "top")  # 0: no key yet
        alpha = bind(exp2(val(row_max[r]) * scale_log2 - top), "alpha")
        store(row_max[r], val(new_max[r]))
        for c in range(size(S.layout, 1)):
            store(S[r, c], exp2(val(S[r, c]) * scale_log2 - top))
        for c in range(size(O.layout, 1)):
            store(O[r, c], val(O[r, c]) * alpha)
        store(row_sum[r], val(row_sum[r]) * alpha)
    tile_sum = row_reduce(S, "sum", ())         # this thread's part: the lanes of a row are summed at the end
    for r in range(size(S.layout, 0)):
        store(row_sum[r], val(row_sum[r]) + val(tile_sum[r]))


def normalize(rows_O, tOrO, row_max, row_sum, scale, tOcO, mLSE_row, S_q):
    """O divided by the row sum (summed over the lanes of the row now), and the row's LSE = max scale + ln(sum)
    stored by the row's first lane (LSE -inf and O 0 for a row that saw no key)."""
    O = rows_O.view(tOrO)
    total = row_reduce(row_sum, "sum", rows_O.masks)
    lane_bits = sum(rows_O.masks)
    for r in range(size(O.layout, 0)):
        l = val(total[r])
        inv = bind(where(l == 0.0, 0.0, 1.0 / l), "inv")
        for c in range(size(O.layout, 1)):
            store(O[r, c], val(O[r, c]) * inv)
        i = tOcO.coord(rows_O.layout(r, 0))[0]                  # the fragment is compact: index = position
        with if_(((thread_idx() & lane_bits) < 1) & (i < S_q)):
            store(mLSE_row[i], where(l == 0.0, -math.inf, val(row_max[r]) * scale + log(l)))


def default_arch():
    """"sm80" (m16n8k16, cp.async) where the current GPU (or profile) has them, else "sm75" (a T4's)."""
    from ..runtime import supports
    return "sm80" if supports("cp.async") else "sm75"


def make(D=64, dtype="float16", causal=False, scale=None, arch=None, BM=None, BN=None, warps=None, q_regs=True,
         longest_first=False):
    """The kernel for one configuration: a cutejit Kernel with .launch(Q, K, V, O, LSE) (Q, O (B, S_q, H, D),
    K, V (B, S_k, H_kv, D) of `dtype` (or its bits as uint16), LSE (B, H, S_q) float32), .source, .config.
    scale defaults to 1/sqrt(D); arch "sm80" (m16n8k16, cp.async) or "sm75" (a T4's m16n8k8), by default
    what the current GPU (or profile) has; BM, BN, warps default to BEST[arch].
    q_regs: Q's tile read into registers once (True), or from shared memory beside each K tile (False, as
    FlashAttention-2 does, freeing Q's registers; `python tests/test_attention_ptx.py` prints what each
    configuration uses and spills). longest_first (causal only): the grid
    runs every head's last q-tile first, then the tiles before it (the heaviest first across all heads), not
    one head's q-tiles after another."""
    arch = arch or default_arch()
    if arch not in BEST:
        raise ValueError("fa2_mma.make: arch must be one of %s, got %r" % (sorted(BEST), arch))
    BM, BN, warps = (BEST[arch][k] if v is None else v for k, v in (("BM", BM), ("BN", BN), ("warps", warps)))
    if (arch, dtype) not in ATOMS:
        raise ValueError("fa2_mma.make: no %s mma for %s; known: %s" % (arch, dtype, sorted(ATOMS)))
    if BM % (16 * warps):
        raise ValueError("fa2_mma.make: BM=%d is not a multiple of 16 rows for each of %d warps" % (BM, warps))
    scale = 1.0 / math.sqrt(D) if scale is None else float(scale)
    o = objects(BM, BN, D, warps, arch, dtype)
    qo, kv = Matrix(dtype, rank=4), Matrix(dtype, rank=4)
    k = fa2_fwd.build(qo, kv, kv, Matrix(dtype, rank=4), Matrix("float32", rank=3), o["mma"], o["g2s_Q"],
                      o["g2s_KV"], o["s2r_Q"], o["s2r_K"], o["s2r_V"], o["sQ"], o["sKV"], scale, causal,
                      bool(q_regs), bool(longest_first and causal), threads=32 * warps, min_blocks=1)
    k.objects, k.tile = o, (BM, BN, D)
    k.config = dict(BM=BM, BN=BN, D=D, warps=warps, dtype=dtype, causal=causal, scale=scale, arch=arch,
                    threads=32 * warps, smem=k.smem_bytes, q_regs=bool(q_regs),
                    longest_first=bool(longest_first and causal))
    k.grid = lambda Q, K, V, O, LSE: -(-Q.shape[1] // BM) * Q.shape[2] * Q.shape[0]
    return k
