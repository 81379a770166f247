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

Three build-time options (make) add FlashAttention-3's overlaps, and the plain kernel stays:
  * pingpong: the consumers take turns at the tensor cores (a PipelineOrder on a named barrier each, around
    the wgmmas they issue), so one's softmax runs while another's GEMMs do;
  * overlap: a consumer issues S = Q K_j^T, and P V of block j - 1 behind it, before the softmax of S_j, which
    then runs while P V does (two S accumulators live);
  * trace: the lead thread of each warpgroup stamps %globaltimer at the start and end of each phase into a
    buffer (kernels.attention.timeline reads and draws it).
The grid hands out the longest query tiles first (block 0 takes the last tile: with `causal` it sees most keys).

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
    Matrix, NamedBarrier, PipelineOrder, PipelineState, PipelineTmaAsync, Sym, TensorMap, block_idx, else_, fence_proxy_async,
    gemm, if_, kernel, local_tile, make_identity_tensor, make_producer_start_state, make_smem_tensor,
    prefetch_tensor_map, range_, setmaxnreg, thread_idx, tma_load, tma_store, tma_store_commit, tma_store_wait,
    warpgroup_arrive, warpgroup_commit, warpgroup_wait,
)
from ..expr import src
from ..cutejit.trace import current

__all__ = ["Int", "Stamps", "acc_rows", "p_as_a", "fa3_forward", "objects", "make", "DTYPES", "HEAD_DIMS"]

DTYPES = (Float16, BFloat16)
HEAD_DIMS = (64, 128)
LOG2E = math.log2(math.e)
REGISTERS = 65536        # 32-bit registers a block may use (CUDA C++ Programming Guide, compute capability 9.0)


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
                causal, scale, regs, slot, slot_o, masks, a_of_c, pingpong, overlap, mStamps):
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
    order = PipelineOrder(consumers, t.let(tid // 128 - 1, "consumer"), 128) if pingpong else None
    clock = _Stamps(t, mStamps, 1 + consumers) if mStamps is not None else None
    with if_(tid < 128):                                                 # warpgroup 0: the producer
        setmaxnreg(regs[0], grow=False)
        with if_(tid < 1):
            for tm in (tmQ, tmK, tmV, tmO):
                prefetch_tensor_map(tm)
            q_state = make_producer_start_state(1)
            at = clock and clock.now()
            pipe_q.producer_acquire(q_state)
            tma_load(tmQ, cQ, sQ, *pipe_q.producer_barrier(q_state), h, b)
            clock and clock.record(at, "load Q")
            ks, vs = make_producer_start_state(stages), make_producer_start_state(stages)
            for j in range_(n_blocks):
                at = clock and clock.now()
                pipe_k.producer_acquire(ks)
                tma_load(tmK, _shift(cK, j * BN, 0), sK[_, _, ks.index], *pipe_k.producer_barrier(ks), hk, b)
                clock and clock.record(at, "load K", j)
                ks.advance()
                at = clock and clock.now()
                pipe_v.producer_acquire(vs)
                tma_load(tmV, _shift(cV, j * BN, 1), sV[_, _, vs.index], *pipe_v.producer_barrier(vs), hk, b)
                clock and clock.record(at, "load V", j)
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
        soft = _Softmax(t, thr_s, cS0, S_q, S_k, BN, causal, scale, slot, masks, mx, sm, dtype)
        pipe_q.consumer_wait(PipelineState(1))
        ks, vs = PipelineState(stages), PipelineState(stages)
        turn = _Turns(order)
        if not overlap:
            for j in range_(n_blocks):
                pipe_k.consumer_wait(ks)
                acc_s = thr_s.partition_fragment_C(cS0)
                turn.begin(j < 1)
                at = clock and clock.now()
                warpgroup_arrive(acc_s)
                gemm(mma_s, tSrQ, tSrK[_, _, _, ks.index], acc_s, accumulate=False)
                warpgroup_commit()
                turn.end(j > n_blocks - 2)
                warpgroup_wait(0, acc_s)
                clock and clock.record(at, "S GEMM", j)
                pipe_k.consumer_release(ks)
                ks.advance()
                at = clock and clock.now()
                p, corr = soft(acc_s, j)
                _rescale(t, acc_o, slot_o, corr)
                tOrP = thr_o.partition_fragment_A(cS0, dtype=dtype)
                soft.pack(tOrP, p, a_of_c)
                clock and clock.record(at, "softmax", j)
                pipe_v.consumer_wait(vs)
                at = clock and clock.now()
                warpgroup_arrive(acc_o)
                gemm(mma_o, tOrP, tOrV[_, _, _, vs.index], acc_o, accumulate=j > 0)
                warpgroup_commit()
                warpgroup_wait(0, acc_o)
                clock and clock.record(at, "PV GEMM", j)
                pipe_v.consumer_release(vs)
                vs.advance()
        else:
            # block 0: S_0 and its softmax; then block j issues S_j, and P_j-1 V_j-1 behind it, before the
            # softmax of S_j, which runs while P_j-1 V_j-1 does (FlashAttention-3's intra-warpgroup overlap)
            pipe_k.consumer_wait(ks)
            acc_s = thr_s.partition_fragment_C(cS0)
            turn.begin(True)
            at = clock and clock.now()
            warpgroup_arrive(acc_s)
            gemm(mma_s, tSrQ, tSrK[_, _, _, ks.index], acc_s, accumulate=False)
            warpgroup_commit()
            turn.end(n_blocks < 2)
            warpgroup_wait(0, acc_s)
            clock and clock.record(at, "S GEMM", 0)
            pipe_k.consumer_release(ks)
            ks.advance()
            at = clock and clock.now()
            p, corr = soft(acc_s, 0)
            held = ["oc%d" % r for r in range(rows)]                     # O's correction, applied before P V
            for r in range(rows):
                t.emit("%s = %s" % (held[r], corr[r]))
            tOrP = thr_o.partition_fragment_A(cS0, dtype=dtype)
            soft.pack(tOrP, p, a_of_c)
            clock and clock.record(at, "softmax", 0)
            for j in range_(n_blocks, 1):
                pipe_k.consumer_wait(ks)
                acc_s = thr_s.partition_fragment_C(cS0)
                turn.begin(False)
                at_s = clock and clock.now()
                warpgroup_arrive(acc_s)
                gemm(mma_s, tSrQ, tSrK[_, _, _, ks.index], acc_s, accumulate=False)
                warpgroup_commit()
                _rescale(t, acc_o, slot_o, held)
                pipe_v.consumer_wait(vs)
                at_o = clock and clock.now()
                warpgroup_arrive(acc_o)
                gemm(mma_o, tOrP, tOrV[_, _, _, vs.index], acc_o, accumulate=j > 1)
                warpgroup_commit()
                turn.end(j > n_blocks - 2)
                warpgroup_wait(1, acc_s)
                clock and clock.record(at_s, "S GEMM", j)
                pipe_k.consumer_release(ks)
                ks.advance()
                at = clock and clock.now()
                p, corr = soft(acc_s, j)
                for r in range(rows):
                    t.emit("%s = %s" % (held[r], corr[r]))
                warpgroup_wait(0, acc_o)
                clock and clock.record(at_o, "PV GEMM", j - 1)
                pipe_v.consumer_release(vs)
                vs.advance()
                soft.pack(tOrP, p, a_of_c)
                clock and clock.record(at, "softmax", j)
            _rescale(t, acc_o, slot_o, held)
            pipe_v.consumer_wait(vs)
            at = clock and clock.now()
            warpgroup_arrive(acc_o)
            gemm(mma_o, tOrP, tOrV[_, _, _, vs.index], acc_o, accumulate=n_blocks > 1)
            warpgroup_commit()
            warpgroup_wait(0, acc_o)
            clock and clock.record(at, "PV GEMM", n_blocks - 1)
            pipe_v.consumer_release(vs)
            vs.advance()
        at = clock and clock.now()
        _epilogue(t, mLSE, tmO, sQ, thr_o, acc_o, bh, h, b, m, BM, D, S_q, slot_o, masks, mx, sm, soft.shfl,
                  soft.pack_fn, consumers)
        clock and clock.record(at, "epilogue")


class _Turns:
    """The ping-pong consumers' turns at the tensor cores (a PipelineOrder of them; nothing without one):
    begin() waits for this consumer's turn, end() hands the turn to the next. A named barrier has no phase,
    so consumer 0 skips the wait of its first turn and the last consumer the hand-over of its last: each
    barrier then sees as many arrivals as waits."""

    def __init__(self, order):
        self.order = order

    def begin(self, first):
        """Wait for the turn; `first`: whether it is this consumer's first (a bool or a run-time condition)."""
        if self.order is not None:
            self._guarded(self.order.wait, 0, first)

    def end(self, last):
        """Hand the turn over; `last`: whether it is this consumer's last."""
        if self.order is not None:
            self._guarded(self.order.arrive, self.order.length - 1, last)

    def _guarded(self, step, skipper, when):
        if when is False:
            return step()
        cond = "%s != %d" % (self.order.group.src, skipper)
        if when is not True:
            cond = "(%s) or not (%s)" % (cond, src(when))
        with if_(Sym(cond, True)):
            step()


class _Softmax:
    """The online softmax of one block of S's accumulator fragment, on a consumer's running row maxima `mx` and
    sums `sm` (names of the generated code): scale into log2 units, mask, the row maxima (over the thread's
    values, then over the lanes of the row: the C layout's xors), P = 2^(x - max), the sums; and P rounded to
    16 bits into the RS atom's A fragment."""

    def __init__(self, t, thr_s, cS0, S_q, S_k, BN, causal, scale, slot, masks, mx, sm, dtype):
        from .. import instructions
        self.t, self.thr_s, self.cS0, self.S_q, self.S_k, self.BN = t, thr_s, cS0, S_q, S_k, BN
        self.causal, self.scale, self.slot, self.masks, self.mx, self.sm = causal, scale, slot, masks, mx, sm
        self.exp2 = t.use("exp2_approx", instructions.exp2_approx)
        self.shfl = t.use("shfl_xor_sync", instructions.shfl_xor_sync)
        self.pack_fn = t.use(*(("pack_half2", instructions.pack_half2) if dtype == "float16"
                               else ("pack_bf16x2", instructions.pack_bf16x2)))

    def __call__(self, acc_s, j):
        """(p, corr): the names of P's values and of each row's correction 2^(old max - new max)."""
        t, slot, mx, sm = self.t, self.slot, self.mx, self.sm
        rows = len(mx)
        # the scores in log2 units, masked through the coordinates of S's values
        cS = self.thr_s.partition_C(_shift(self.cS0, j * self.BN, 1))
        x = []
        for v in range(len(acc_s.regs)):
            row, col = cS.coord(v)
            keep = "(%s < %s)" % (_sym(col).src, self.S_k.src)
            if self.causal:
                keep += " and (%s <= %s)" % (_sym(col).src, _sym(row + self.S_k - self.S_q).src)
            name = t.fresh("x")
            t.emit("%s = (%s * %s) if %s else %s" % (name, acc_s.regs[v], _f32(t, self.scale * LOG2E), keep,
                                                     _f32(t, -math.inf)))
            x.append(name)
        # the row maxima: over the thread's values, then over the lanes of the row (the C layout's xors)
        new = []
        for r in range(rows):
            vals = [x[v] for v in range(len(x)) if slot[v] == r]
            name = t.fresh("rmax")
            t.emit("%s = max(%s, %s)" % (name, mx[r], _max_tree(vals)))
            for mask in self.masks:
                t.emit("%s = max(%s, %s(0xFFFFFFFF, %s, %d))" % (name, name, self.shfl, name, mask))
            safe = t.fresh("base")                                       # a row with no key yet: subtract 0
            t.emit("%s = %s if %s != %s else %s" % (safe, name, name, _f32(t, -math.inf), _f32(t, 0.0)))
            corr = t.fresh("corr")
            t.emit("%s = %s(%s - %s)" % (corr, self.exp2, mx[r], safe))
            t.emit("%s = %s" % (mx[r], name))
            new.append((safe, corr))
        p = []
        for v in range(len(x)):
            name = t.fresh("p")
            t.emit("%s = %s(%s - %s)" % (name, self.exp2, x[v], new[slot[v]][0]))
            p.append(name)
        for r in range(rows):
            t.emit("%s = %s * %s + %s" % (sm[r], sm[r], new[r][1], _sum_tree([p[v] for v in range(len(p))
                                                                              if slot[v] == r])))
        return p, [c for _, c in new]

    def pack(self, tOrP, p, a_of_c):
        """P, rounded to 16 bits, as the RS atom's A fragment: register k holds A values 2k and 2k + 1."""
        for k in range(len(tOrP.regs)):
            lo = tOrP.layout(2 * k)
            self.t.emit("%s = %s(%s, %s)" % (tOrP.regs[lo // 2], self.pack_fn, p[a_of_c[2 * k]], p[a_of_c[2 * k + 1]]))


def _rescale(t, acc_o, slot_o, corr):
    """O *= the correction of its row (O's C layout has S's rows: same atom shape along M)."""
    for name in acc_o.names:
        t.emit("%s = %s" % (name, _tuple(["%s[%d] * %s" % (name, v, corr[slot_o[v]])
                                          for v in range(acc_o.per_atom)])))


class _Stamps:
    """The recorded schedule of a build with `trace`: the lead thread of each warpgroup of the first
    mStamps.shape[0] // warpgroups blocks writes %globaltimer at the start and end of each phase into its row
    of mStamps (uint64, (blocks x warpgroups, 2 x slots)); kernels.attention.timeline reads them back."""

    def __init__(self, t, mStamps, warpgroups):
        from .. import instructions
        from . import timeline
        self.t, self.buf, self.timeline = t, mStamps, timeline
        self.clock = t.use("globaltimer", instructions.globaltimer)
        tid = thread_idx()
        self.row = t.let(block_idx() * warpgroups + tid // 128, "stamp_row")
        self.on = t.let(Sym("((%s %% 128) == 0) and (%s < %s.shape[0])" % (tid.src, self.row.src, mStamps.src),
                            True), "stamping")

    def now(self):
        name = self.t.fresh("clk")
        self.t.emit("%s = %s()" % (name, self.clock))
        return Sym(name, True)

    def record(self, start, phase, block=0):
        slot = _sym(self.timeline.slot(phase, block))
        with if_(Sym("(%s) and (%s < %s.shape[1] // 2)" % (self.on.src, slot.src, self.buf.src), True)):
            self.t.emit("%s[%s, 2 * %s] = %s" % (self.buf.src, self.row.src, slot.src, start.src))
            self.t.emit("%s[%s, 2 * %s + 1] = %s()" % (self.buf.src, self.row.src, slot.src, self.clock))


class Stamps:
    """The run-time stamp buffer of a build with `trace` (a 2-D uint64 device array; see _Stamps)."""

    def bind(self, name, trace):
        return Sym(name, True)

    def check(self, a, what):
        if str(getattr(a, "dtype", None)).replace("torch.", "") != "uint64" or len(getattr(a, "shape", ())) != 2:
            raise TypeError("%s: a 2-D uint64 array of stamps, got %r" % (what, a))

    def __repr__(self):
        return "Stamps()"


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
    if D not in HEAD_DIMS or BM not in (64, 128, 192) or BN % 16 or not 64 <= BN <= 256:
        raise ValueError("fa3 objects: D in %s, BM 64/128/192 and BN a multiple of 16 (P V's k-blocks) from 64 to "
                         "256, got D %r, BM %r, BN %r" % (HEAD_DIMS, D, BM, BN))
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
         pingpong=False, overlap=False, trace=False, overrides=None):
    """The kernel of one configuration, launched as k.launch(LSE, mapQ, mapK, mapV, mapO, S_q, S_k, H, group)
    on BM // 64 + 1 warpgroups; LSE a (B * H, S_q) float32 matrix; the maps from `tensor_maps`.
    regs: the registers a thread of the producer and of a consumer warpgroup keep after setmaxnreg;
    pingpong: the consumers take turns at the tensor cores (one's softmax under another's GEMMs);
    overlap: each consumer issues S = Q K_j^T, and P V of the block before, ahead of the softmax of S;
    trace: the launch takes one more argument, a uint64 stamp buffer (kernels.attention.timeline)."""
    consumers = BM // 64
    if pingpong and consumers < 2:
        raise ValueError("fa3 make: pingpong takes turns between two or more consumer warpgroups (BM >= 128), "
                         "got BM %r" % BM)
    if 128 * (regs[0] + consumers * regs[1]) > REGISTERS:
        raise ValueError("fa3 make: regs %r on 1 + %d warpgroups of 128 threads ask for %d registers; an SM has %d"
                         % (tuple(regs), consumers, 128 * (regs[0] + consumers * regs[1]), REGISTERS))
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
    threads = 128 * (1 + consumers)
    k = fa3_forward.build(Matrix("float32"), o.tmQ, o.tmK, o.tmV, o.tmO, Int(), Int(), Int(), Int(), o.mma_s,
                          o.mma_o, o.sQ, o.sK, o.sV, causal, scale, regs, slot, slot_o, masks, a_of_c, bool(pingpong),
                          bool(overlap), Stamps() if trace else None, threads=threads,
                          max_registers=REGISTERS // threads // 8 * 8, overrides=overrides)
    k.objects = o
    k.config = dict(D=D, dtype=dtype, causal=causal, scale=scale, BM=BM, BN=BN, stages=stages, regs=regs,
                    threads=threads, smem=k.smem_bytes, pingpong=bool(pingpong), overlap=bool(overlap),
                    trace=bool(trace))
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


def prepare(q, k, v, out, lse, causal=False, scale=None, layout="BSHD", stamps=None, **build):
    """A zero-argument launcher of the kernel on CUDA arrays q (B, S_q, H, D), k and v (B, S_k, H_kv, D) (or,
    with layout="BHSD", (B, H, S, D)), writing out (like q) and lse ((B, H, S_q) float32, contiguous). The
    tensor maps are encoded here, once; call the result to launch on the default stream. build: make's
    options (BM, BN, stages, regs, pingpong, overlap); stamps: a uint64 device buffer for the build with trace
    (kernels.attention.timeline)."""
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
    key = (D, dtype, bool(causal), scale, stamps is not None, tuple(sorted(build.items())))
    if key not in _BUILT:
        _BUILT[key] = make(D=D, dtype=dtype, causal=bool(causal), scale=scale, trace=stamps is not None, **build)
    kern = _BUILT[key]
    o = kern.objects
    s_d_h_b = tuple(bshd[i] for i in (1, 3, 2, 0))                   # the maps' modes (S, D, H, B)
    d_s_h_b = tuple(bshd[i] for i in (3, 1, 2, 0))
    maps = [encode_tensor_map(_View(x, perm, dtype), spec) for x, perm, spec in
            ((q, s_d_h_b, o.tmQ), (k, s_d_h_b, o.tmK), (v, d_s_h_b, o.tmV), (out, s_d_h_b, o.tmO))]
    lse2 = cuda.as_cuda_array(lse).reshape(B * H, S_q)
    grid = -(-S_q // o.BM) * B * H
    extra = () if stamps is None else (cuda.as_cuda_array(stamps),)
    return kern.prepare(lse2, *maps, S_q, S_k, H, H // H_kv, *extra, grid=grid)


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
