"""Attention on the CuTe layer in Numba's simulator: cutejit's accumulator pieces (the rows of a C fragment and
the lanes that share them, row reductions, exp2, the C -> A retile of P), each on its own, then
kernels.attention.fa2_mma against a float64 NumPy reference (outputs and LSE poisoned with NaN): edges, both
masks, S_q != S_k, grouped-query heads, fp16 and bf16, m16n8k16 and (under the sm_75 profile) a T4's m16n8k8,
and make's options (Q from shared memory, the causal grid longest-first across heads)."""

import functools
import itertools

import numpy as np
import pytest

from cutelite import Layout, make_identity_tensor, make_layout, make_tiled_mma, size
from cutelite.atoms import make_mma_atom

pytestmark = pytest.mark.numba("simulator")

ATOMS = {"sm80": "SM80_16x8x16_F32F16F16F32_TN", "sm75": "SM75_16x8x8_F32F16F16F32_TN"}


def _mma(arch, warps=2):
    return make_tiled_mma(make_mma_atom(ATOMS[arch]), Layout((warps, 1, 1)), (16 * warps, 16, 16))


def _ptx_c_coord(lane, i):
    """The PTX ISA's fragment of an m16n8 f32 accumulator (mma.m16n8k8 / m16n8k16, "Matrix fragments for
    mma.m16n8k*"): c_i of a lane is at row groupID (+ 8 for i >= 2), column 2 * threadID_in_group + (i & 1)."""
    return lane // 4 + 8 * (i // 2), 2 * (lane % 4) + (i % 2)


# ---- the rows of an accumulator ------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["sm80", "sm75"])
def test_acc_rows_follow_the_ptx_fragment(arch):
    """AccRows' (ROW, COL) view: every value of view row r lies in one row of the tile, the rows increase with r,
    and the lanes joined by its xor masks are exactly those the PTX ISA puts on the same rows (same groupID)."""
    from kernels.cutejit.accumulator import AccRows
    mma, tile = _mma(arch), (64, 32)
    rows = AccRows(mma, tile)
    lanes_of_row = {}
    for lane in range(32):
        for i in range(4):
            lanes_of_row.setdefault(_ptx_c_coord(lane, i)[0], set()).add(lane)
    assert {frozenset(lane ^ m for m in _span(rows.masks)) for lane in range(32)} == set(map(frozenset,
                                                                                        lanes_of_row.values()))
    frag = mma.get_slice(0).partition_fragment_C(make_layout(tile))
    for t in (0, 5, 37, 63):
        p = mma.get_slice(t).partition_C(make_identity_tensor(tile))
        index_of = {frag(j): j for j in range(size(frag))}
        row_at = [[p(index_of[rows.layout(r, c)])[0] for c in range(size(rows.layout, 1))]
                  for r in range(size(rows.layout, 0))]
        assert all(len(set(r)) == 1 for r in row_at)
        firsts = [r[0] for r in row_at]
        assert firsts == sorted(set(firsts))
        assert sorted(p(j)[1] for j in range(size(frag)) if p(j)[0] == firsts[0]) == \
            sorted(2 * (t % 4) + (i % 2) + 8 * n for n in range(tile[1] // 8) for i in range(2))


def _span(masks):
    out = {0}
    for m in masks:
        out |= {x ^ m for x in out}
    return out


def test_acc_rows_refuse_rows_shared_across_warps():
    from kernels.cutejit.accumulator import AccRows
    mma = make_tiled_mma(make_mma_atom(ATOMS["sm80"]), Layout((1, 2, 1)), (16, 16, 16))
    with pytest.raises(ValueError, match="other warps"):
        AccRows(mma, (16, 32))


@pytest.mark.parametrize("arch", ["sm80", "sm75"])
def test_retile_C_as_A_matches_cutelites_partitions(arch):
    """P's registers as the A operand: for every thread, A value i of partition_A((M, N)) is the C value of
    partition_C((M, N)) at the same coordinate, in the register retile_C_as_A's layout names."""
    from kernels.cutejit.accumulator import retile_C_as_A
    from kernels.cutejit.tensor import RTensor
    mma, tile = _mma(arch), (32, 64)
    frag = mma.get_slice(0).partition_fragment_C(make_layout(tile))
    regs = RTensor(frag, ["r%d" % i for i in range(size(frag) // 2)], "float16", 16)
    a = retile_C_as_A(mma, regs, tile)
    assert a.layout.shape == mma.get_slice(0).partition_fragment_A(make_layout(tile)).shape
    ident = make_identity_tensor(tile)
    for t in range(64):
        pa, pc = mma.get_slice(t).partition_A(ident), mma.get_slice(t).partition_C(ident)
        at = {frag(j): pc(j) for j in range(size(frag))}
        assert [at[a.layout(i)] for i in range(size(a.layout))] == [pa(i) for i in range(size(a.layout))]


# ---- the pieces in a kernel ----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _rows_kernel():
    """A kernel that reads one (32, 32) float32 tile as a TiledMMA's C fragment and writes, per value, its row's
    max, its row's sum and exp2 of it, through AccRows, row_reduce and exp2."""
    from kernels.cutejit import Matrix, copy, kernel, local_tile, make_fragment_like, thread_idx
    from kernels.cutejit.accumulator import AccRows, exp2, row_reduce, store, val

    @kernel
    def rows(mX, mMax, mSum, mExp, mma):
        thr = mma.get_slice(thread_idx())
        gs = [local_tile(m, (32, 32), (0, 0)) for m in (mX, mMax, mSum, mExp)]
        x = make_fragment_like(thr.partition_C(gs[0]))
        copy(thr.partition_C(gs[0]), x)
        view = AccRows(mma, (32, 32)).view(x)
        masks = AccRows(mma, (32, 32)).masks
        top, total = row_reduce(view, "max", masks), row_reduce(view, "sum", masks)
        for g, per_row in ((gs[1], top), (gs[2], total), (gs[3], None)):
            out = make_fragment_like(x)
            o = AccRows(mma, (32, 32)).view(out)
            for r in range(size(o.layout, 0)):
                for c in range(size(o.layout, 1)):
                    store(o[r, c], val(per_row[r]) if per_row is not None else exp2(val(view[r, c])))
            copy(out, thr.partition_C(g))

    f32 = Matrix("float32")
    return rows.build(f32, f32, f32, f32, _mma("sm80"), threads=64)


def test_row_reduce_and_exp2_in_a_kernel():
    x = np.random.default_rng(3).uniform(-4, 4, (32, 32)).astype(np.float32)
    outs = [np.full((32, 32), np.nan, np.float32) for _ in range(3)]
    _rows_kernel().launch(x, *outs, grid=1)
    np.testing.assert_array_equal(outs[0], np.repeat(x.max(1, keepdims=True), 32, 1))
    np.testing.assert_allclose(outs[1], np.repeat(x.sum(1, keepdims=True), 32, 1), rtol=1e-5)
    np.testing.assert_allclose(outs[2], np.exp2(x.astype(np.float64)), rtol=1e-6)


# ---- the kernel --------------------------------------------------------------------------------------------
def reference(q, k, v, causal, scale):
    """softmax(scale q k^T [+ causal, aligned bottom-right]) v and the LSE of each row, in float64; a row with no
    key gives O = 0, LSE = -inf. q (B, S_q, H, D), k and v (B, S_k, H_kv, D)."""
    S_q, H, S_k = q.shape[1], q.shape[2], k.shape[1]
    k, v = (np.repeat(x, H // x.shape[2], axis=2) for x in (k, v))
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if causal:
        s = np.where(np.arange(S_k)[None, :] <= np.arange(S_q)[:, None] + S_k - S_q, s, -np.inf)
    top = s.max(-1, keepdims=True)
    top = np.where(np.isinf(top), 0.0, top)
    p = np.exp(s - top)
    total = p.sum(-1, keepdims=True)
    o = np.einsum("bhqk,bkhd->bqhd", p / np.where(total == 0, 1, total), v)
    lse = np.where(total[..., 0] == 0, -np.inf, np.log(np.where(total[..., 0] == 0, 1, total[..., 0])) + top[..., 0])
    return o, lse


@functools.lru_cache(maxsize=None)
def _kernel(dtype, causal, arch, BM=32, **options):
    """2 warps of BM / 2 rows each (BM = 64: two m16 atoms a warp); options: fa2_mma.make's q_regs, longest_first."""
    from kernels.attention import fa2_mma
    return fa2_mma.make(BM=BM, BN=32, warps=2, D=64, dtype=dtype, causal=causal, arch=arch, **options)


def _run(S_q, S_k, H, H_kv, dtype, causal, arch, heads_first=False, BM=32, seed=0, B=1, **options):
    """One launch against the reference; heads_first: Q, K, V as (B, S, H, D) views of (B, H, S, D) arrays."""
    from kernels.numeric import decode, encode
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, S_q, H, 64))
    k, v = (rng.standard_normal((B, S_k, H_kv, 64)) for _ in range(2))
    bits = [encode(x.astype(np.float32), dtype) for x in (q, k, v)]
    if heads_first:               # device arrays: the simulator copies only contiguous host arrays
        from numba import cuda
        bits = [cuda.to_device(np.ascontiguousarray(b.transpose(0, 2, 1, 3))).transpose((0, 2, 1, 3)) for b in bits]
    q, k, v = (decode(np.asarray(b.copy_to_host() if heads_first else b), dtype).astype(np.float64) for b in bits)
    o = encode(np.full((B, S_q, H, 64), np.nan, np.float32), dtype)
    lse = np.full((B, H, S_q), np.nan, np.float32)
    _kernel(dtype, causal, arch, BM, **options).launch(*bits, o, lse)
    want_o, want_lse = reference(q, k, v, causal, 1 / 8)
    got = decode(o, dtype).astype(np.float64)
    assert not np.isnan(got).any() and not np.isnan(lse).any(), "outputs never written"
    tol = 2e-2 if dtype == "bfloat16" else 4e-3          # P rounded to 16 bits, O stored in 16 bits
    assert np.max(np.abs(got - want_o)) < tol, np.max(np.abs(got - want_o))
    np.testing.assert_array_equal(np.isinf(lse), np.isinf(want_lse))
    finite = np.isfinite(want_lse)
    assert np.max(np.abs(lse[finite] - want_lse[finite]), initial=0) < 1e-4


@pytest.mark.parametrize("S_q, S_k, H, H_kv, dtype, causal, heads_first, BM", [
    (40, 70, 2, 2, "float16", False, False, 32),     # edges in both, two key tiles
    (70, 40, 2, 1, "float16", True, False, 32),      # S_q > S_k: the first rows see no key; GQA
    (33, 80, 2, 2, "bfloat16", True, False, 64),     # S_q < S_k: the diagonal starts 47 keys in; 32 rows a warp
    (9, 17, 4, 2, "bfloat16", False, True, 32),      # (B, H, S, D) arrays
])
def test_fa2_mma_matches_numpy(S_q, S_k, H, H_kv, dtype, causal, heads_first, BM):
    _run(S_q, S_k, H, H_kv, dtype, causal, "sm80", heads_first, BM)


@pytest.mark.parametrize("S_q, S_k, H, H_kv, dtype, causal, BM, B, options", [
    (40, 70, 2, 2, "bfloat16", True, 64, 1, dict(q_regs=False)),         # Q read from shared memory each tile
    (70, 40, 2, 1, "float16", True, 32, 1, dict(q_regs=False, longest_first=True)),   # + heaviest q-tiles first
])
def test_fa2_mma_options_match_numpy(S_q, S_k, H, H_kv, dtype, causal, BM, B, options):
    _run(S_q, S_k, H, H_kv, dtype, causal, "sm80", BM=BM, B=B, **options)


def test_fa2_mma_key_loop_divides_nothing():
    """The tile's indices (the block index split into q-tile, head and batch, the causal loop's end) are
    computed once, before the loop over key tiles: no line of the loop divides or takes a remainder (on the GPU
    each is a 64-bit division, a branch and tens of instructions, which the loop would repeat every tile)."""
    for options in ({}, dict(q_regs=False, longest_first=True)):     # the kernels of the tests above
        lines = _kernel("float16", True, "sm80", 32, **options).source.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("    for "))
        loop = list(itertools.takewhile(lambda line: line.startswith("        "), lines[start + 1:]))
        assert len(loop) > 100 and not [line for line in loop if "%" in line or "//" in line], options


@pytest.fixture
def t4(monkeypatch):
    import kernels
    monkeypatch.delenv("CUTE_PROFILE", raising=False)
    kernels.setup(profile="sm_75", verbose=False)
    yield
    kernels.setup(verbose=False)


@pytest.mark.parametrize("S_q, S_k, causal", [(70, 30, True), (24, 64, False)])   # a CTA whose rows see no key
def test_fa2_mma_on_a_t4(t4, S_q, S_k, causal):
    """Under the sm_75 profile the kernel is built for a T4 (m16n8k8, tiles through registers) and the
    simulator's twins refuse any sm_80 instruction."""
    from kernels.attention import fa2_mma
    assert fa2_mma.default_arch() == "sm75"
    k = _kernel("float16", causal, "sm75")
    assert "cp_async" not in k.source and "m16n8k8" in k.source and "m16n8k16" not in k.source
    _run(S_q, S_k, 2, 1, "float16", causal, "sm75")


def test_fa2_mma_on_a_t4_with_q_from_shared_memory(t4):
    """q_regs=False with a T4's m16n8k8: one ldmatrix of Q feeds two k8 mma, as one of K does."""
    _run(50, 40, 2, 2, "float16", True, "sm75", q_regs=False, longest_first=True, B=2)


def test_fa2_mma_refuses_what_it_was_not_built_for():
    from kernels.attention import fa2_mma
    k = _kernel("float16", False, "sm80")
    q = np.zeros((1, 8, 2, 64), np.uint16)
    with pytest.raises(TypeError, match="fa2_fwd: launch: mQ holds float32"):
        k.launch(q.astype(np.float32), q, q, q, np.zeros((1, 2, 8), np.float32))
    with pytest.raises(ValueError, match="mK: the kernel was built for K-major"):
        k.launch(q, np.asfortranarray(q), q, q, np.zeros((1, 2, 8), np.float32))
    with pytest.raises(ValueError, match="no sm75 mma for bfloat16"):
        fa2_mma.make(BM=32, BN=32, warps=2, dtype="bfloat16", arch="sm75")
