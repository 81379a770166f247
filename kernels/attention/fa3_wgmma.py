"""FlashAttention-3's forward pass on Hopper, on cutejit: chapter 8's warp-specialized body with two GEMMs.

A block owns a BM-row tile of queries of one (batch, head). Warpgroup 0 is the producer: one of its threads
TMA-loads the Q tile once, then K's and V's tiles of BN keys, on two mbarrier pipelines (K's and V's), so the
consumers can start S = Q K^T while V is still on its way. Warpgroups 1.. are the consumers; each owns 64 rows
of the tile and, for every K/V tile:
  * S = Q K^T by wgmma from shared memory (SS): the scores of its 64 rows against the BN keys;
  * the online softmax on S's accumulator fragment: the scores are scaled into log2 units, masked (keys past
    S_k; with `causal`, keys past the query's diagonal, aligned bottom-right) through an identity tensor
    partitioned like S, the row maximum reduced over the thread's values and then over the lanes that hold
    the same rows (which lanes: read off the GMMA C layout, `acc_rows`), P = 2^(x - max), O rescaled;
  * O += P V by wgmma with P from registers (RS): the C fragment of S, rounded to 16 bits, is the A fragment
    of the RS atom, register for register (`p_as_a`, checked thread by thread on cutelite's layouts).
At the end each consumer divides O by the row sums, writes the row's log-sum-exp, puts O (16-bit) in Q's
shared memory and one thread TMA-stores the tile (rows past S_q clipped by the tensor map).

Q, K, V, O are seen through rank-4 tensor maps of modes (S, D, H, B) (V's (D, S, H, B): wgmma reads it as
an MN-major B), so one kernel reads (B, S, H, D) and (B, H, S, D) strides alike, and a box never crosses
into the next head: the TMA zero-fills rows past S, and the masks drop those keys.
"""

import math
from dataclasses import dataclass

import numpy as np

from cutelite import _, Layout, dyn, make_identity_tensor as identity_layout, make_tiled_mma, make_tma_atom, size
from cutelite.gmma import Layout_K_SW128_Atom, Layout_MN_SW128_Atom, make_gmma_atom, tile_to_smem
from cutelite.numeric import BFloat16, Float16, Float32, numeric

from ..cutejit import (
    Matrix, NamedBarrier, PipelineState, PipelineTmaAsync, Sym, TensorMap, block_idx, else_, fence_proxy_async,
    gemm, if_, kernel, local_tile, make_identity_tensor, make_producer_start_state, make_smem_tensor,
    prefetch_tensor_map, range_, setmaxnreg, thread_idx, tma_load, tma_store, tma_store_commit, tma_store_wait,
    warpgroup_arrive, warpgroup_commit, warpgroup_wait,
)
from ..expr import src
from ..cutejit.trace import current

__all__ = ["Int", "acc_rows", "p_as_a", "fa3_forward", "objects", "make", "DTYPES", "HEAD_DIMS"]

DTYPES = (Float16, BFloat16)
HEAD_DIMS = (64, 128)
LOG2E = math.log2(math.e)


class Int:
    """A run-time integer argument of a cutejit kernel (a sequence length, a head count)."""

    def bind(self, name, trace):
        return Sym(name, True)

    def check(self, a, what):
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError("%s: an int, got %r" % (what, a))

    def __repr__(self):
        return "Int()"


# ---- what the C layout says ------------------------------------------------------------------------------
def _coords(tiled, operand, tile, thread):
    """(m, n) of each value of `thread`'s partition of an identity tensor of `tile` (operand "A" or "C")."""
    part = getattr(tiled.get_slice(thread), "partition_" + operand)(identity_layout(tile))
    return [tuple(int(x) for x in part(i)) for i in range(size(part.layout))]


def acc_rows(tiled, tile):
    """(slot, masks) of one warpgroup's C fragment of `tile` (64 x N): slot[v] numbers the row of value v among
    the rows a thread holds (0, 1, ... in increasing row order); masks are the xor distances between lanes
    that hold the same rows, as a butterfly of powers of two. Derived from cutelite's C layout for all 128
    threads; a ValueError if some thread's rows are arranged differently."""
    threads = 128
    rows = [[m for m, _ in _coords(tiled, "C", tile, t)] for t in range(threads)]
    order = lambda r: sorted(set(r))                                   # noqa: E731
    slot = [order(rows[0]).index(m) for m in rows[0]]
    for t in range(threads):
        if [order(rows[t]).index(m) for m in rows[t]] != slot:
            raise ValueError("acc_rows: thread %d holds its rows in another order than thread 0" % t)
    xors = {t ^ u for t in range(threads) for u in range(threads) if set(rows[t]) & set(rows[u])}
    for t in range(threads):
        if {t ^ u for u in range(threads) if set(rows[t]) & set(rows[u])} != xors:
            raise ValueError("acc_rows: the lanes sharing thread %d's rows differ from thread 0's" % t)
    masks = tuple(sorted(x for x in xors if x and x & (x - 1) == 0))
    span = {0}
    for x in masks:
        span |= {s ^ x for s in span}
    if span != xors or max(xors) >= 32:
        raise ValueError("acc_rows: lanes sharing a row (xors %s) are no butterfly inside a warp" % sorted(xors))
    return slot, masks


def p_as_a(tiled_s, tiled_o, BN):
    """For each value of the RS atom's A fragment of P (64 x BN, k-blocks of 16), the index of the value of S's
    C fragment (64 x BN) at the same (row, key): P never leaves its thread. Checked for all 128 threads."""
    table = None
    for t in range(128):
        where = {mn: v for v, mn in enumerate(_coords(tiled_s, "C", (64, BN), t))}
        mine = [where.get(mk) for mk in _coords(tiled_o, "A", (64, BN), t)]
        if None in mine:
            raise ValueError("p_as_a: thread %d needs as A values of P it does not hold as C" % t)
        if table is not None and mine != table:
            raise ValueError("p_as_a: thread %d's A values sit elsewhere in its C fragment than thread 0's" % t)
        table = mine
    return table


# ---- the kernel --------------------------------------------------------------------------------------------
_NEG_INF = np.float32(-np.inf)


def _f32(t, x):
    """A float32 constant of the generated code (-inf by name)."""
    t.use("float32", np.float32)
    if x == -math.inf:
        return t.use("NEG_INF", _NEG_INF)
    return "float32(%r)" % float(x)


@kernel
def fa3_forward(mLSE, tmQ, tmK, tmV, tmO, S_q, S_k, H, group, mma_s, mma_o, sQ_layout, sK_layout, sV_layout,
                causal, scale, regs, slot, slot_o, masks, a_of_c):
    from .. import instructions
    t = current()
    tid = thread_idx()
    BM, D = size(sQ_layout, 0), size(sQ_layout, 1)
    BN, stages = size(sK_layout, 0), size(sK_layout, 2)
    consumers = BM // 64
    dtype = tmQ.spec.dtype
    sQ = make_smem_tensor(sQ_layout.element_layout(), dtype)             # (BM, D): Q, later O
    sK = make_smem_tensor(sK_layout.element_layout(), dtype)             # (BN, D, stages)
    sV = make_smem_tensor(sV_layout.element_layout(), dtype)             # (D, BN, stages): V read as V^T
    pipe_q = PipelineTmaAsync(1, tmQ.spec.bytes, consumers)
    pipe_k = PipelineTmaAsync(stages, tmK.spec.bytes, consumers)
    pipe_v = PipelineTmaAsync(stages, tmV.spec.bytes, consumers)
    # the tile: queries m of head (b, h), the longest rows first (causal: the last query tiles see most keys)
    m_tiles = t.let((S_q + (BM - 1)) // BM, "m_tiles")
    BH = t.let(mLSE.shape[0], "BH")
    tile = block_idx()
    m = t.let(m_tiles - 1 - tile // BH, "m")
    bh = t.let(tile % BH, "bh")
    b, h = t.let(bh // H, "b"), t.let(bh % H, "h")
    hk = t.let(h // group, "hk")                                         # grouped-query heads share K and V
    n_all = t.let((S_k + (BN - 1)) // BN, "n_all")
    if causal:   # the last key the tile's last row sees: row + S_k - S_q; at least one block (rows with no key)
        last = t.let(Sym("min((%s + 1) * %d, %s)" % (m.src, BM, S_q.src), True) - 1 + S_k - S_q, "last")
        n_blocks = t.let(Sym("max(min(%s, %s // %d + 1), 1)" % (n_all.src, last.src, BN), True), "n_blocks")
    else:
        n_blocks = n_all
    cQ = local_tile(make_identity_tensor((S_q, D)), (BM, D), (m, 0))     # (BM, D): coordinates
    cK = local_tile(make_identity_tensor((S_k, D)), (BN, D), (0, 0))     # K's tile 0; tile j: shifted
    cV = local_tile(make_identity_tensor((D, S_k)), (D, BN), (0, 0))
    for p in (pipe_q, pipe_k, pipe_v):
        p.init()
    with if_(tid < 128):                                                 # warpgroup 0: the producer
        setmaxnreg(regs[0], grow=False)
        with if_(tid < 1):
            for tm in (tmQ, tmK, tmV, tmO):
                prefetch_tensor_map(tm)
            q_state = make_producer_start_state(1)
            pipe_q.producer_acquire(q_state)
            tma_load(tmQ, cQ, sQ, *pipe_q.producer_barrier(q_state), h, b)
            ks, vs = make_producer_start_state(stages), make_producer_start_state(stages)
            for j in range_(n_blocks):
                pipe_k.producer_acquire(ks)
                tma_load(tmK, _shift(cK, j * BN, 0), sK[_, _, ks.index], *pipe_k.producer_barrier(ks), hk, b)
                ks.advance()
                pipe_v.producer_acquire(vs)
                tma_load(tmV, _shift(cV, j * BN, 1), sV[_, _, vs.index], *pipe_v.producer_barrier(vs), hk, b)
                vs.advance()
    with else_():                                                        # warpgroups 1..: the consumers
        setmaxnreg(regs[1], grow=True)
        thr_s, thr_o = mma_s.get_slice(tid - 128), mma_o.get_slice(tid - 128)
        tSrQ = thr_s.partition_fragment_A(sQ)                            # descriptors
        tSrK = thr_s.partition_fragment_B(sK)
        tOrV = thr_o.partition_fragment_B(sV)
        cS0 = local_tile(make_identity_tensor((S_q, S_k)), (BM, BN), (m, 0))
        acc_o = thr_o.partition_fragment_C(local_tile(make_identity_tensor((S_q, D)), (BM, D), (m, 0)))
        rows = max(slot) + 1
        mx = ["mx%d" % r for r in range(rows)]                           # the running max (log2 units), sum
        sm = ["sm%d" % r for r in range(rows)]
        for r in range(rows):
            t.emit("%s = %s" % (mx[r], _f32(t, -math.inf)))
            t.emit("%s = %s" % (sm[r], _f32(t, 0.0)))
        exp2 = t.use("exp2_approx", instructions.exp2_approx)
        shfl = t.use("shfl_xor_sync", instructions.shfl_xor_sync)
        pack = t.use(*(("pack_half2", instructions.pack_half2) if dtype == "float16"
                       else ("pack_bf16x2", instructions.pack_bf16x2)))
        pipe_q.consumer_wait(PipelineState(1))
        ks, vs = PipelineState(stages), PipelineState(stages)
        for j in range_(n_blocks):
            pipe_k.consumer_wait(ks)
            acc_s = thr_s.partition_fragment_C(cS0)
            warpgroup_arrive(acc_s)
            gemm(mma_s, tSrQ, tSrK[_, _, _, ks.index], acc_s, accumulate=False)
            warpgroup_commit()
            warpgroup_wait(0, acc_s)
            pipe_k.consumer_release(ks)
            ks.advance()
            # the scores in log2 units, masked through the coordinates of S's values
            cS = thr_s.partition_C(_shift(cS0, j * BN, 1))
            x = []
            for v in range(len(acc_s.regs)):
                row, col = cS.coord(v)
                keep = "(%s < %s)" % (_sym(col).src, S_k.src)
                if causal:
                    keep += " and (%s <= %s)" % (_sym(col).src, _sym(row + S_k - S_q).src)
                name = t.fresh("x")
                t.emit("%s = (%s * %s) if %s else %s" % (name, acc_s.regs[v], _f32(t, scale * LOG2E), keep,
                                                         _f32(t, -math.inf)))
                x.append(name)
            # the row maxima: over the thread's values, then over the lanes of the row (the C layout's xors)
            new = []
            for r in range(rows):
                vals = [x[v] for v in range(len(x)) if slot[v] == r]
                name = t.fresh("rmax")
                t.emit("%s = max(%s, %s)" % (name, mx[r], _max_tree(vals)))
                for mask in masks:
                    t.emit("%s = max(%s, %s(0xFFFFFFFF, %s, %d))" % (name, name, shfl, name, mask))
                safe = t.fresh("base")                                   # a row with no key yet: subtract 0
                t.emit("%s = %s if %s != %s else %s" % (safe, name, name, _f32(t, -math.inf), _f32(t, 0.0)))
                corr = t.fresh("corr")
                t.emit("%s = %s(%s - %s)" % (corr, exp2, mx[r], safe))
                t.emit("%s = %s" % (mx[r], name))
                new.append((safe, corr))
            p = []
            for v in range(len(x)):
                name = t.fresh("p")
                t.emit("%s = %s(%s - %s)" % (name, exp2, x[v], new[slot[v]][0]))
                p.append(name)
            for r in range(rows):
                t.emit("%s = %s * %s + %s" % (sm[r], sm[r], new[r][1], _sum_tree([p[v] for v in range(len(p))
                                                                                  if slot[v] == r])))
            # O *= the correction of its row (O's C layout has S's rows: same atom shape along M)
            for name in acc_o.names:
                t.emit("%s = %s" % (name, _tuple(["%s[%d] * %s" % (name, v, new[slot_o[v]][1])
                                                  for v in range(acc_o.per_atom)])))
            # P, rounded to 16 bits, as the RS atom's A fragment: register k holds A values 2k and 2k + 1
            tOrP = thr_o.partition_fragment_A(cS0, dtype=dtype)
            for k in range(len(tOrP.regs)):
                lo, hi = tOrP.layout(2 * k), tOrP.layout(2 * k + 1)
                t.emit("%s = %s(%s, %s)" % (tOrP.regs[lo // 2], pack, p[a_of_c[2 * k]], p[a_of_c[2 * k + 1]]))
            pipe_v.consumer_wait(vs)
            warpgroup_arrive(acc_o)
            gemm(mma_o, tOrP, tOrV[_, _, _, vs.index], acc_o, accumulate=j > 0)
            warpgroup_commit()
            warpgroup_wait(0, acc_o)
            pipe_v.consumer_release(vs)
            vs.advance()
        _epilogue(t, mLSE, tmO, sQ, thr_o, acc_o, bh, h, b, m, BM, D, S_q, slot_o, masks, mx, sm, shfl, pack,
                  consumers)


def _sym(x):
    return x if isinstance(x, Sym) else Sym(str(int(x)), True)


def _shift(c, n, mode):
    """The identity tile c with `n` added to its coordinates along `mode` (0: rows, 1: columns)."""
    from ..cutejit.tensor import GTensor
    origin = [list(o) for o in c.origin]
    origin[mode].append(n)
    return GTensor(c.matrix, c.layout, c.dyn, origin, c.mem)


def _tuple(items):
    """A tuple display of `items`, in pieces of 16 joined by + (CPython writes a longer display as a list
    turned into a tuple, which Numba's CUDA front end refuses)."""
    return " + ".join("(%s,)" % ", ".join(items[i:i + 16]) for i in range(0, len(items), 16))


def _max_tree(vals):
    while len(vals) > 1:
        vals = ["max(%s, %s)" % (vals[i], vals[i + 1]) if i + 1 < len(vals) else vals[i]
                for i in range(0, len(vals), 2)]
    return vals[0]


def _sum_tree(vals):
    while len(vals) > 1:
        vals = ["(%s + %s)" % (vals[i], vals[i + 1]) if i + 1 < len(vals) else vals[i]
                for i in range(0, len(vals), 2)]
    return vals[0]


def _epilogue(t, mLSE, tmO, sQ, thr_o, acc_o, bh, h, b, m, BM, D, S_q, slot, masks, mx, sm, shfl, pack,
              consumers):
    """O / (row sums) -> 16 bits -> Q's shared memory -> one TMA store; the log-sum-exp of each row."""
    from .. import instructions
    tid = thread_idx()
    rows = len(mx)
    inv = []
    for r in range(rows):
        for mask in masks:
            t.emit("%s = %s + %s(0xFFFFFFFF, %s, %d)" % (sm[r], sm[r], shfl, sm[r], mask))
        name = t.fresh("inv")
        t.emit("%s = (%s / %s) if %s > %s else %s" % (name, _f32(t, 1.0), sm[r], sm[r], _f32(t, 0.0), _f32(t, 0.0)))
        inv.append(name)
    # the LSE of the thread's rows, written by the first lane of each row's lanes
    cO = thr_o.partition_C(local_tile(make_identity_tensor((S_q, D)), (BM, D), (m, 0)))
    t.use("math", math)
    st = t.use("st_global_v1_f32", instructions.st_global_v1_f32)
    lead = sum(masks)
    for r in range(rows):
        v = slot.index(r)
        row = cO.coord(v)[0]
        with if_(Sym("((%s & %d) == 0) and (%s < %s)" % (tid.src, lead, _sym(row).src, S_q.src))):
            lse = "((%s * %s) + math.log(%s)) if %s > %s else %s" % (
                mx[r], _f32(t, 1.0 / LOG2E), sm[r], sm[r], _f32(t, 0.0), _f32(t, -math.inf))
            t.emit("%s(%s, %s, %s)" % (st, mLSE.matrix.name, src(mLSE[bh, row].offset(0)), lse))
    # O into Q's shared memory: every consumer is done reading Q (its last S wgmma was waited for)
    sync = NamedBarrier(128 * consumers, 1, "fa3 epilogue")
    sync.sync()
    tOsO = thr_o.partition_C(sQ)
    stw = t.use("st_shared_v1_b32", instructions.st_shared_v1_b32)
    vals = ["%s[%d] * %s" % (name, v, inv[slot[v]]) for name in acc_o.names for v in range(acc_o.per_atom)]
    for e in range(0, len(vals), 2):
        if not tOsO.contiguous(e, 2):
            raise ValueError("cutejit: fa3 epilogue: O's values %d, %d are not adjacent in shared memory" % (e, e + 1))
        t.emit("%s(%s, %s, %s(%s, %s))" % (stw, sQ.mem, src(tOsO.offset(e)), pack, vals[e], vals[e + 1]))
    fence_proxy_async()
    sync.sync()
    with if_(tid < 129):
        with if_(tid > 127):
            tma_store(tmO, sQ, local_tile(make_identity_tensor((S_q, D)), (BM, D), (m, 0)), h, b)
            tma_store_commit()
            tma_store_wait(0)


# ---- the objects ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Attention:
    mma_s: object
    mma_o: object
    sQ: object
    sK: object
    sV: object
    tmQ: object
    tmK: object
    tmV: object
    tmO: object
    BM: int
    BN: int
    D: int
    stages: int
    dtype: str


def _tma(op, elem, tile, major_row):
    """A rank-4 TMA atom over (rows, cols, H, B) of run-time extents and strides, the contiguous mode `cols`
    (major_row False: mode 0 contiguous), copying one `tile` (its shared layout) of the first two modes."""
    rows, cols = size(tile, 0), size(tile, 1)
    stride = (dyn(cols), 1, dyn(cols), dyn(cols)) if major_row else (1, dyn(rows), dyn(rows), dyn(rows))
    g = Layout((dyn(rows), dyn(cols), dyn(1), dyn(1)), stride)
    return TensorMap(make_tma_atom(op, g, tile, (rows, cols, 1, 1), value_type=elem))


def objects(D=128, dtype="float16", BM=128, BN=128, stages=2):
    """The CuTe objects of one configuration: two TiledMMAs (S = Q K^T SS, O += P V RS; BM / 64 consumer
    warpgroups along M), the 128-byte-swizzled shared layouts (Q and K K-major, V MN-major as wgmma's B of
    P V), and the rank-4 tensor maps."""
    if dtype not in [t.name for t in DTYPES]:
        raise ValueError("fa3 objects: dtype must be one of %s, got %r" % (", ".join(t.name for t in DTYPES), dtype))
    if D not in HEAD_DIMS or BM not in (64, 128, 192) or BN % 64 or not 64 <= BN <= 256:
        raise ValueError("fa3 objects: D in %s, BM 64/128/192 and BN a multiple of 64 up to 256, got D %r, BM %r, "
                         "BN %r" % (HEAD_DIMS, D, BM, BN))
    t = numeric(dtype)
    elem, types = t.cpp, Float32.letters + 2 * t.letters
    atom_s = make_gmma_atom("SM90::GMMA::MMA_64x%dx16_%s_SS<GMMA::Major::K, GMMA::Major::K>" % (BN, types))
    atom_o = make_gmma_atom("SM90::GMMA::MMA_64x%dx16_%s_RS<GMMA::Major::K, GMMA::Major::MN>" % (D, types))
    warps = Layout((BM // 64, 1, 1))
    k_tile = Layout_K_SW128_Atom(elem)
    mn_tile = Layout_MN_SW128_Atom(elem)
    sQ = tile_to_smem(k_tile, (BM, D))
    sK = tile_to_smem(k_tile, (BN, D, stages))
    sV = tile_to_smem(mn_tile, (D, BN, stages), (1, 0, 2))
    return Attention(
        mma_s=make_tiled_mma(atom_s, warps), mma_o=make_tiled_mma(atom_o, warps), sQ=sQ, sK=sK, sV=sV,
        tmQ=_tma("SM90_TMA_LOAD", elem, sQ, True), tmK=_tma("SM90_TMA_LOAD", elem, tile_to_smem(k_tile, (BN, D)), True),
        tmV=_tma("SM90_TMA_LOAD", elem, tile_to_smem(mn_tile, (D, BN), (1, 0)), False),
        tmO=_tma("SM90_TMA_STORE", elem, sQ, True), BM=BM, BN=BN, D=D, stages=stages, dtype=dtype)


def make(D=128, dtype="float16", causal=False, scale=None, BM=128, BN=128, stages=2, regs=(24, 240),
         overrides=None):
    """The kernel of one configuration, launched as k.launch(LSE, mapQ, mapK, mapV, mapO, S_q, S_k, H, group)
    on BM // 64 + 1 warpgroups; LSE a (B * H, S_q) float32 matrix; the maps from `tensor_maps`."""
    o = objects(D, dtype, BM, BN, stages)
    scale = 1.0 / math.sqrt(D) if scale is None else float(scale)
    mma_s1 = make_tiled_mma(o.mma_s.atom)
    mma_o1 = make_tiled_mma(o.mma_o.atom)
    slot, masks = acc_rows(mma_s1, (64, BN))
    slot_o, masks_o = acc_rows(mma_o1, (64, D))
    for thread in range(128):        # O's rows are S's, in the same slots, joined by the same lanes
        rows_s = sorted({mn[0] for mn in _coords(mma_s1, "C", (64, BN), thread)})
        rows_o = sorted({mn[0] for mn in _coords(mma_o1, "C", (64, D), thread)})
        if rows_s != rows_o or masks_o != masks:
            raise ValueError("fa3 make: thread %d holds rows %s of S but %s of O" % (thread, rows_s, rows_o))
    a_of_c = p_as_a(mma_s1, mma_o1, BN)
    threads = 128 * (1 + BM // 64)
    k = fa3_forward.build(Matrix("float32"), o.tmQ, o.tmK, o.tmV, o.tmO, Int(), Int(), Int(), Int(), o.mma_s,
                          o.mma_o, o.sQ, o.sK, o.sV, causal, scale, regs, slot, slot_o, masks, a_of_c, threads=threads,
                          max_registers=65536 // threads // 8 * 8, overrides=overrides)
    k.objects = o
    k.config = dict(D=D, dtype=dtype, causal=causal, scale=scale, BM=BM, BN=BN, stages=stages, regs=regs,
                    threads=threads, smem=k.smem_bytes)
    return k


# ---- the host side ----------------------------------------------------------------------------------------
class _View:
    """A device array seen with its modes permuted (no copy): what encode_tensor_map reads of it."""

    def __init__(self, x, perm, dtype):
        from ..numeric import storage
        face = x.__cuda_array_interface__
        item = np.dtype(storage(dtype)).itemsize
        strides = face.get("strides") or tuple(int(np.prod(face["shape"][i + 1:])) * item
                                               for i in range(len(face["shape"])))
        self.shape = tuple(face["shape"][i] for i in perm)
        self.strides = tuple(strides[i] for i in perm)
        self.dtype = np.dtype(storage(dtype))
        self.__cuda_array_interface__ = {"data": face["data"], "shape": self.shape, "strides": self.strides,
                                         "typestr": self.dtype.str, "version": 3}


_BUILT = {}


def prepare(q, k, v, out, lse, causal=False, scale=None, layout="BSHD"):
    """A zero-argument launcher of the kernel on CUDA arrays q (B, S_q, H, D), k and v (B, S_k, H_kv, D) (or,
    with layout="BHSD", (B, H, S, D)), writing out (like q) and lse ((B, H, S_q) float32, contiguous). The
    tensor maps are encoded here, once; call the result to launch on the default stream."""
    from numba import cuda
    from ..cutejit import encode_tensor_map
    dtype = {"float16": "float16", "bfloat16": "bfloat16"}.get(str(getattr(q, "dtype", "")).replace("torch.", ""))
    if dtype is None:
        raise TypeError("fa3 prepare: q must hold float16 or bfloat16, got %s" % getattr(q, "dtype", q))
    bshd = (0, 1, 2, 3) if layout == "BSHD" else (0, 2, 1, 3)     # mode order -> (B, S, H, D)
    B, S_q, H, D = (q.shape[i] for i in bshd)
    S_k, H_kv = k.shape[bshd[1]], k.shape[bshd[2]]
    if H % H_kv:
        raise ValueError("fa3 prepare: H = %d query heads is not a multiple of H_kv = %d" % (H, H_kv))
    key = (D, dtype, bool(causal), scale)
    if key not in _BUILT:
        _BUILT[key] = make(D=D, dtype=dtype, causal=bool(causal), scale=scale)
    kern = _BUILT[key]
    o = kern.objects
    s_d_h_b = tuple(bshd[i] for i in (1, 3, 2, 0))                   # the maps' modes (S, D, H, B)
    d_s_h_b = tuple(bshd[i] for i in (3, 1, 2, 0))
    maps = [encode_tensor_map(_View(x, perm, dtype), spec) for x, perm, spec in
            ((q, s_d_h_b, o.tmQ), (k, s_d_h_b, o.tmK), (v, d_s_h_b, o.tmV), (out, s_d_h_b, o.tmO))]
    lse2 = cuda.as_cuda_array(lse).reshape(B * H, S_q)
    grid = -(-S_q // o.BM) * B * H
    return kern.prepare(lse2, *maps, S_q, S_k, H, H // H_kv, grid=grid)


def attention(q, k, v, causal=False, scale=None, layout="BSHD"):
    """(O, LSE) of forward attention on the Hopper kernel, for PyTorch CUDA tensors (benchmarks/attention/bench.py
    --kernel kernels.attention.fa3_wgmma:attention)."""
    import torch
    bshd = (0, 1, 2, 3) if layout == "BSHD" else (0, 2, 1, 3)
    B, S_q, H = (q.shape[i] for i in bshd[:3])
    out = torch.empty_like(q)
    lse = torch.empty((B, H, S_q), dtype=torch.float32, device=q.device)
    prepare(q, k, v, out, lse, causal, scale, layout)()
    return out, lse
