"""Hopper (sm_90a) instructions as inline PTX: wgmma, mbarrier, TMA loads and stores (cp.async.bulk.tensor), fences,
setmaxnreg, named barriers.

Each is a Numba `@intrinsic` emitting one inline-PTX statement, as in `kernels.instructions.ptx`. They differ from the
warp-level ones in two ways:
  * `wgmma` is issued by a warpgroup (4 consecutive warps, the first a multiple of 4) and runs
    *asynchronously*: the accumulator registers are only valid after `wgmma_wait(acc, n)`. So the
    accumulator is a tuple that flows through every call (`acc = wgmma_...(acc, ...)`,
    `acc = wgmma_wait(acc, 0)`): the data dependence keeps the compiler from touching the registers
    while the tensor cores own them (C++ CuTe's `warpgroup_fence_operand` does the same job).
  * The target must be **sm_90a** (the arch-specific Hopper target; sm_100 has no wgmma). numba-cuda
    >= 0.30 compiles `cuda.jit` kernels for `sm_90a` on a device of compute capability 9.0 by itself
    (0.22 does once kernels.setup() has run: kernels.runtime._hopper_target); offline, `cuda.compile_ptx(f, sig, cc=TARGET)`. Each intrinsic checks the target while it is
    compiled and raises CapabilityError otherwise.

Operands: shared-memory arrays as (array, element offset); a tensor map as a uint64 device array of 16
words (`kernels.cutejit.encode_tensor_map`) whose generic address is taken here; descriptors as 64-bit ints
(`cutelite.gmma.make_gmma_desc` builds them on the host, the kernel adds the start address).

In Numba's simulator (kernels.instructions.hopper_sim) the fences, commit/wait (wgmma's and the TMA store's bulk groups) and setmaxnreg are no-ops and mbarrier waits succeed at
once (a simulated block runs its threads to each barrier together); wgmma and the TMA loads and stores raise
CapabilityError ("needs sm_90a"): the simulator has no tensor-memory engine to stand in for them.
"""

import inspect

from llvmlite import ir

from .ptx import (TypingError, _asm, _element_ptr, _named, _shared_u32, _unpack, intrinsic, types,
                  _check_array, _global_u64)
from ..capability import CapabilityError
from ..runtime import target_cc

_i32, _i64, _f32 = ir.IntType(32), ir.IntType(64), ir.FloatType()

# Each intrinsic's PTX instruction, qualifiers included; its operands are written where it is emitted. One
# place for the text: chapter 8 prints CuTe's names against it (kernels.hopper.chapter.name_map).
PTX = {
    "wgmma_fence": "wgmma.fence.sync.aligned",
    "wgmma_commit": "wgmma.commit_group.sync.aligned",
    "wgmma_wait": "wgmma.wait_group.sync.aligned",
    "wgmma": "wgmma.mma_async.sync.aligned",
    "fence_proxy_async": "fence.proxy.async.shared::cta",
    "fence_mbarrier_init": "fence.mbarrier_init.release.cluster",
    "mbarrier_init": "mbarrier.init.shared::cta.b64",
    "mbarrier_arrive": "mbarrier.arrive.shared::cta.b64",
    "mbarrier_arrive_expect_tx": "mbarrier.arrive.expect_tx.shared::cta.b64",
    "mbarrier_try_wait": "mbarrier.try_wait.parity.shared::cta.b64",
    "tma_load_2d": "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
    "tma_load_4d": "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
    "tma_prefetch_desc": "fence.proxy.tensormap::generic.acquire.sys; prefetch.tensormap",
    "tma_store_2d": "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group",
    "tma_store_4d": "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group",
    "tma_reduce_add_2d": "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.bulk_group",
    "tma_store_commit": "cp.async.bulk.commit_group",
    "tma_store_wait_read": "cp.async.bulk.wait_group.read",
    "tma_store_wait": "cp.async.bulk.wait_group",
    "setmaxnreg_inc": "setmaxnreg.inc.sync.aligned.u32",
    "setmaxnreg_dec": "setmaxnreg.dec.sync.aligned.u32",
    "named_barrier_sync": "bar.sync",
    "named_barrier_arrive": "bar.arrive",
    "tma_load_2d_multicast": "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                             ".multicast::cluster",
    "mbarrier_arrive_cluster": "mapa.shared::cluster.u32; mbarrier.arrive.release.cluster.shared::cluster.b64",
    "cluster_arrive": "barrier.cluster.arrive.release.aligned",
    "cluster_wait": "barrier.cluster.wait.acquire.aligned",
}

def _check_sm90a(name):
    """Fail while compiling for anything but sm_90 / sm_90a (numba-cuda turns 9.0 into sm_90a)."""
    cc = target_cc()
    if cc is not None and (tuple(cc[:2]) != (9, 0) or (len(cc) > 2 and cc[2] not in ("a",))):
        raise CapabilityError("%s needs sm_90a, but the target is sm_%d%d%s"
                              % (name, cc[0], cc[1], cc[2] if len(cc) > 2 else ""))

def _void(name):
    """An intrinsic () -> None that emits PTX[name], without operands."""
    text = PTX[name] + ";"

    def impl(typingctx):
        def codegen(context, builder, sig, args):
            _check_sm90a(name)
            _asm(builder, ir.VoidType(), [], text, "~{memory}", [])
            return context.get_dummy_value()
        return types.void(), codegen
    return _named(name, impl)

wgmma_commit = _void("wgmma_commit")
fence_proxy_async = _void("fence_proxy_async")
fence_mbarrier_init = _void("fence_mbarrier_init")
cluster_arrive = _void("cluster_arrive")    # with cluster_wait: every thread of the cluster's blocks meets
cluster_wait = _void("cluster_wait")

def _acc_asm(name, text, context, builder, acc_ty, acc):
    """Emit `text` with the accumulator registers as read-write operands ("+f"), so the compiler keeps
    them untouched across it; returns the new tuple."""
    _check_sm90a(name)
    k = len(acc_ty)
    vals = [builder.extract_value(acc, i) for i in range(k)]
    cons = ",".join(["=f"] * k + [str(i) for i in range(k)] + ["~{memory}"])
    out = _asm(builder, ir.LiteralStructType([_f32] * k), [_f32] * k, text, cons, vals)
    return context.make_tuple(builder, acc_ty, _unpack(builder, out, k))

def _check_acc(name, acc):
    if not (isinstance(acc, types.UniTuple) and acc.dtype == types.float32):
        raise TypingError("%s: acc must be a tuple of float32 (from wgmma_zero), got %s" % (name, acc))

@intrinsic
def wgmma_fence(typingctx, acc):
    """wgmma.fence: order this warpgroup's register writes (acc) before the wgmma that follow."""
    _check_acc("wgmma_fence", acc)

    def codegen(context, builder, sig, args):
        return _acc_asm("wgmma.fence", PTX["wgmma_fence"] + ";", context, builder, sig.args[0], args[0])
    return acc(acc), codegen

@intrinsic
def wgmma_wait(typingctx, acc, n):
    """wgmma.wait_group n: wait until at most n committed wgmma groups are in flight; returns acc, now
    safe to read (n: a literal)."""
    _check_acc("wgmma_wait", acc)
    if not isinstance(n, types.IntegerLiteral):
        raise TypingError("wgmma_wait: the group count must be a literal integer, got %s" % n)
    text = "%s %d;" % (PTX["wgmma_wait"], n.literal_value)

    def codegen(context, builder, sig, args):
        return _acc_asm("wgmma.wait_group", text, context, builder, sig.args[0], args[0])
    return acc(acc, n), codegen

@intrinsic
def wgmma_zero(typingctx, n):
    """A fresh accumulator for a 64 x n tile: n/2 float32 zeros per thread (n: a literal)."""
    if not isinstance(n, types.IntegerLiteral) or n.literal_value % 8:
        raise TypingError("wgmma_zero: n must be a literal multiple of 8, got %s" % n)
    k = n.literal_value // 2
    sig = types.UniTuple(types.float32, k)(n)

    def codegen(context, builder, sig, args):
        zero = ir.Constant(_f32, 0.0)
        return context.make_tuple(builder, sig.return_type, [zero] * k)
    return sig, codegen

@intrinsic
def wgmma_uninit(typingctx, n):
    """An accumulator for a 64 x n tile with no value yet (no instructions): the first wgmma must then
    pass scale_d = 0 (D = A*B, C ignored). Zeroing registers instead makes ptxas serialize the wgmma
    pipeline (warning C7515), as any non-wgmma write of accumulator registers does."""
    if not isinstance(n, types.IntegerLiteral) or n.literal_value % 8:
        raise TypingError("wgmma_uninit: n must be a literal multiple of 8, got %s" % n)
    k = n.literal_value // 2
    sig = types.UniTuple(types.float32, k)(n)

    def codegen(context, builder, sig, args):
        return context.make_tuple(builder, sig.return_type, [ir.Constant(_f32, ir.Undefined)] * k)
    return sig, codegen

def _wgmma_shapes():
    """{"f32.A.B": k} for every float32-accumulating GMMA atom of cutelite.gmma: the input types wgmma takes
    and its K for them (16 for 16-bit inputs, 32 for 8-bit ones)."""
    from cutelite.gmma import GMMA_ATOMS
    parts = (a.ptx.split(".") for a in GMMA_ATOMS.values())
    return {".".join(p[-3:]): int(p[-4].split("k")[1]) for p in parts if p[-3] == "f32"}


WGMMA_K = _wgmma_shapes()


@intrinsic
def wgmma(typingctx, acc, desc_a, desc_b, scale_d, types_, trans):
    """acc = wgmma.mma_async.sync.aligned.m64n{N}k{K}.{types} acc, desc_a, desc_b, scale_d != 0, 1, 1[,
    trans_a, trans_b]. N = 2 * len(acc); `types_` a literal string of a GMMA atom's types (WGMMA_K: "f32.f16.f16",
    "f32.bf16.bf16", "f32.e4m3.e5m2", ...), which give K; `trans` a literal int: bit 0 transposes A (MN-major A),
    bit 1 B, for 16-bit inputs only (PTX ISA: 8-bit wgmma has no transpose operands, both read K-major).
    Issue after wgmma_fence; the result is ready after wgmma_commit + wgmma_wait."""
    if not (isinstance(acc, types.UniTuple) and acc.dtype == types.float32):
        raise TypingError("wgmma: acc must be a tuple of float32 (from wgmma_zero), got %s" % acc)
    if not isinstance(types_, types.StringLiteral) or types_.literal_value not in WGMMA_K:
        raise TypingError("wgmma: types must be a literal of %s, got %s" % (", ".join(map(repr, WGMMA_K)), types_))
    if not isinstance(trans, types.IntegerLiteral):
        raise TypingError("wgmma: trans must be a literal int, got %s" % trans)
    k = len(acc)
    n = 2 * k
    if n % 8 or not 8 <= n <= 256:
        raise TypingError("wgmma: an accumulator of %d floats is not a 64xNxK tile" % k)
    kk = WGMMA_K[types_.literal_value]
    ta, tb = trans.literal_value & 1, (trans.literal_value >> 1) & 1
    if kk != 16 and (ta or tb):
        raise TypingError("wgmma: %s reads both operands K-major (no transpose), got trans=%d"
                          % (types_.literal_value, trans.literal_value))
    regs = ",".join("$%d" % i for i in range(k))
    transposes = ", %d, %d" % (ta, tb) if kk == 16 else ""
    text = ("{ .reg .pred p; setp.ne.b32 p, $%d, 0; %s.m64n%dk%d.%s {%s}, $%d, $%d, "
            "p, 1, 1%s; }" % (k + 2, PTX["wgmma"], n, kk, types_.literal_value, regs, k, k + 1, transposes))
    cons = ",".join(["=f"] * k + ["l", "l", "r"] + [str(i) for i in range(k)] + ["~{memory}"])
    sig = acc(acc, desc_a, desc_b, scale_d, types_, trans)

    def codegen(context, builder, sig, args):
        _check_sm90a("wgmma.mma_async")
        vals = [builder.extract_value(args[0], i) for i in range(k)]
        da = context.cast(builder, args[1], sig.args[1], types.uint64)
        db = context.cast(builder, args[2], sig.args[2], types.uint64)
        sd = context.cast(builder, args[3], sig.args[3], types.uint32)
        out = _asm(builder, ir.LiteralStructType([_f32] * k), [_i64, _i64, _i32] + [_f32] * k, text, cons,
                   [da, db, sd] + vals)
        return context.make_tuple(builder, sig.return_type, _unpack(builder, out, k))
    return sig, codegen

@intrinsic
def wgmma_rs(typingctx, acc, a, desc_b, scale_d, types_, trans_b):
    """acc = wgmma.mma_async.sync.aligned.m64n{N}k16.{types} acc, {a0, a1, a2, a3}, desc_b, scale_d != 0, 1, 1,
    trans_b: A from registers (`a`, a tuple of four uint32, two 16-bit values each, in the order of the RS
    atom's A layout), B from shared memory. N = 2 * len(acc); `types_` and `trans_b` literals as for wgmma
    (trans_b: 1 reads B MN-major). A's registers must not change until the wgmma is waited for."""
    if not (isinstance(acc, types.UniTuple) and acc.dtype == types.float32):
        raise TypingError("wgmma_rs: acc must be a tuple of float32 (from wgmma_zero), got %s" % acc)
    if not (isinstance(a, types.UniTuple) and len(a) == 4 and isinstance(a.dtype, types.Integer)):
        raise TypingError("wgmma_rs: a must be a tuple of four 32-bit registers, got %s" % a)
    if not isinstance(types_, types.StringLiteral) or types_.literal_value not in ("f32.f16.f16",
                                                                                   "f32.bf16.bf16"):
        raise TypingError("wgmma_rs: types must be the literal 'f32.f16.f16' or 'f32.bf16.bf16', got %s" % types_)
    if not isinstance(trans_b, types.IntegerLiteral):
        raise TypingError("wgmma_rs: trans_b must be a literal int, got %s" % trans_b)
    k = len(acc)
    n = 2 * k
    if n % 8 or not 8 <= n <= 256:
        raise TypingError("wgmma_rs: an accumulator of %d floats is not a 64xNx16 tile" % k)
    regs = ",".join("$%d" % i for i in range(k))
    text = ("{ .reg .pred p; setp.ne.b32 p, $%d, 0; %s.m64n%dk16.%s {%s}, {$%d, $%d, $%d, $%d}, $%d, "
            "p, 1, 1, %d; }" % (k + 5, PTX["wgmma"], n, types_.literal_value, regs, k, k + 1, k + 2, k + 3, k + 4,
                                trans_b.literal_value & 1))
    cons = ",".join(["=f"] * k + ["r"] * 4 + ["l", "r"] + [str(i) for i in range(k)] + ["~{memory}"])
    sig = acc(acc, a, desc_b, scale_d, types_, trans_b)

    def codegen(context, builder, sig, args):
        _check_sm90a("wgmma.mma_async")
        vals = [builder.extract_value(args[0], i) for i in range(k)]
        regs_a = [context.cast(builder, builder.extract_value(args[1], i), sig.args[1].dtype, types.uint32)
                  for i in range(4)]
        db = context.cast(builder, args[2], sig.args[2], types.uint64)
        sd = context.cast(builder, args[3], sig.args[3], types.uint32)
        out = _asm(builder, ir.LiteralStructType([_f32] * k), [_i32] * 4 + [_i64, _i32] + [_f32] * k, text, cons,
                   regs_a + [db, sd] + vals)
        return context.make_tuple(builder, sig.return_type, _unpack(builder, out, k))
    return sig, codegen

# ---- mbarrier -------------------------------------------------------------------------------------
def _bar_op(name, operands, nargs):
    """An intrinsic (bar array, index, *u32 args) -> None on the mbarrier at bar[index]: PTX[name] operands."""
    text = "%s %s;" % (PTX[name], operands)

    def impl(typingctx, bar, idx, *rest):
        _check_array(name, bar, idx)
        if len(rest) != nargs:
            raise TypingError("%s takes %d value argument(s)" % (name, nargs))
        sig = types.void(bar, idx, *rest)

        def codegen(context, builder, sig, args):
            _check_sm90a(name)
            addr = _shared_u32(context, builder, sig.args[0], args[0], args[1], sig.args[1])
            vals = [context.cast(builder, a, t, types.uint32) for a, t in zip(args[2:], sig.args[2:])]
            _asm(builder, ir.VoidType(), [_i32] * (1 + nargs), text, ",".join(["r"] * (1 + nargs) + ["~{memory}"]),
                 [addr] + vals)
            return context.get_dummy_value()
        return sig, codegen
    return impl

@intrinsic
def mbarrier_init(typingctx, bar, idx, count):
    """mbarrier.init: the barrier at bar[idx] (a uint64 shared array) expects `count` arrivals a phase."""
    return _bar_op("mbarrier_init", "[$0], $1", 1)(typingctx, bar, idx, count)

@intrinsic
def mbarrier_arrive(typingctx, bar, idx):
    """mbarrier.arrive: one arrival on bar[idx]."""
    return _bar_op("mbarrier_arrive", "_, [$0]", 0)(typingctx, bar, idx)

@intrinsic
def mbarrier_arrive_expect_tx(typingctx, bar, idx, nbytes):
    """mbarrier.arrive.expect_tx: one arrival, and the phase also waits for `nbytes` of async copies."""
    return _bar_op("mbarrier_arrive_expect_tx", "_, [$0], $1", 1)(typingctx, bar, idx, nbytes)

@intrinsic
def mbarrier_try_wait(typingctx, bar, idx, parity):
    """mbarrier.try_wait.parity: 1 once the phase of parity `parity` of bar[idx] has completed, else 0
    (after a bounded wait). Loop: `while mbarrier_try_wait(bar, i, ph) == 0: pass`."""
    _check_array("mbarrier_try_wait", bar, idx)
    text = "{ .reg .pred p; %s p, [$1], $2; selp.u32 $0, 1, 0, p; }" % PTX["mbarrier_try_wait"]
    sig = types.uint32(bar, idx, parity)

    def codegen(context, builder, sig, args):
        _check_sm90a("mbarrier.try_wait")
        addr = _shared_u32(context, builder, sig.args[0], args[0], args[1], sig.args[1])
        par = context.cast(builder, args[2], sig.args[2], types.uint32)
        return _asm(builder, _i32, [_i32, _i32], text, "=r,r,r,~{memory}", [addr, par])
    return sig, codegen

@intrinsic
def mbarrier_arrive_cluster(typingctx, bar, idx, cta):
    """One arrival on bar[idx] of the cluster's block of rank `cta` (mapa: this block's shared address -> that
    block's), with release semantics at cluster scope: this thread's reads of its stage come first."""
    _check_array("mbarrier_arrive_cluster", bar, idx)
    mapa, arrive = PTX["mbarrier_arrive_cluster"].split("; ")
    text = "{ .reg .b32 remote; %s remote, $0, $1; %s _, [remote]; }" % (mapa, arrive)
    sig = types.void(bar, idx, cta)

    def codegen(context, builder, sig, args):
        _check_sm90a("mbarrier.arrive.shared::cluster")
        addr = _shared_u32(context, builder, sig.args[0], args[0], args[1], sig.args[1])
        rank = context.cast(builder, args[2], sig.args[2], types.uint32)
        _asm(builder, ir.VoidType(), [_i32, _i32], text, "r,r,~{memory}", [addr, rank])
        return context.get_dummy_value()
    return sig, codegen

# ---- TMA ------------------------------------------------------------------------------------------
def _generic_u64(context, builder, arrty, arr):
    return builder.ptrtoint(_element_ptr(context, builder, arrty, arr, ir.Constant(_i64, 0), types.int64), _i64)

def _with_coordinates(impl, rank):
    """impl(typingctx, ..., *coords) with a signature naming `rank` coordinates c0, c1, ...: numba reads an
    intrinsic's arguments from its signature, and would pass *coords as one tuple."""
    sig = inspect.signature(impl)
    fixed = [p for p in sig.parameters.values() if p.kind != p.VAR_POSITIONAL]
    coords = [inspect.Parameter("c%d" % i, inspect.Parameter.POSITIONAL_OR_KEYWORD) for i in range(rank)]
    impl.__signature__ = sig.replace(parameters=fixed + coords)
    return impl


def _tma_load(rank):
    """cp.async.bulk.tensor.<rank>d as an intrinsic (dst, dst_idx, tmap, bar, bar_idx, c0, ... c<rank-1>): the
    box at coordinates (c0 innermost, ...) of the tensor map `tmap` (a uint64 device array of 16 words) ->
    shared dst[dst_idx:], completing `box bytes` on bar[bar_idx]. One thread issues it; dst must be 128-byte
    aligned (1024 for the 128-byte swizzle). Rank 2: a GEMM's tiles; rank 4: a tile of one (head, batch) of
    attention's (S, D, H, B) tensors."""
    name = "tma_load_%dd" % rank
    text = "%s [$0], [$1, {%s}], [$%d];" % (PTX[name], ", ".join("$%d" % (2 + i) for i in range(rank)), 2 + rank)

    def impl(typingctx, dst, dst_idx, tmap, bar, bar_idx, *coords):
        _check_array(name, dst, dst_idx)
        _check_array(name, bar, bar_idx)
        if not isinstance(tmap, types.Array):
            raise TypingError("%s: tmap must be the tensor map's device array, got %s" % (name, tmap))
        if len(coords) != rank:
            raise TypingError("%s: takes %d coordinates, got %d" % (name, rank, len(coords)))
        sig = types.void(dst, dst_idx, tmap, bar, bar_idx, *coords)

        def codegen(context, builder, sig, args):
            _check_sm90a("cp.async.bulk.tensor")
            d = _shared_u32(context, builder, sig.args[0], args[0], args[1], sig.args[1])
            t = _generic_u64(context, builder, sig.args[2], args[2])
            b = _shared_u32(context, builder, sig.args[3], args[3], args[4], sig.args[4])
            cs = [context.cast(builder, args[i], sig.args[i], types.int32) for i in range(5, 5 + rank)]
            _asm(builder, ir.VoidType(), [_i32, _i64] + [_i32] * (rank + 1), text,
                 "r,l," + "r," * (rank + 1) + "~{memory}", [d, t] + cs + [b])
            return context.get_dummy_value()
        return sig, codegen
    return _named(name, _with_coordinates(impl, rank))

tma_load_2d = _tma_load(2)
tma_load_4d = _tma_load(4)

@intrinsic
def tma_load_2d_multicast(typingctx, dst, dst_idx, tmap, bar, bar_idx, c0, c1, mask):
    """tma_load_2d multicast: the box lands at dst[dst_idx:] in the shared memory of every block of the cluster
    whose rank is a bit of `mask` (16 bits), completing its bytes on each one's bar[bar_idx]."""
    _check_array("tma_load_2d_multicast", dst, dst_idx)
    _check_array("tma_load_2d_multicast", bar, bar_idx)
    if not isinstance(tmap, types.Array):
        raise TypingError("tma_load_2d_multicast: tmap must be the tensor map's device array, got %s" % tmap)
    sig = types.void(dst, dst_idx, tmap, bar, bar_idx, c0, c1, mask)
    text = "%s [$0], [$1, {$2, $3}], [$4], $5;" % PTX["tma_load_2d_multicast"]

    def codegen(context, builder, sig, args):
        _check_sm90a("cp.async.bulk.tensor (multicast)")
        d = _shared_u32(context, builder, sig.args[0], args[0], args[1], sig.args[1])
        t = _generic_u64(context, builder, sig.args[2], args[2])
        b = _shared_u32(context, builder, sig.args[3], args[3], args[4], sig.args[4])
        x = context.cast(builder, args[5], sig.args[5], types.int32)
        y = context.cast(builder, args[6], sig.args[6], types.int32)
        m = context.cast(builder, args[7], sig.args[7], types.uint16)
        _asm(builder, ir.VoidType(), [_i32, _i64, _i32, _i32, _i32, ir.IntType(16)], text,
             "r,l,r,r,r,h,~{memory}", [d, t, x, y, b, m])
        return context.get_dummy_value()
    return sig, codegen

@intrinsic
def tma_prefetch_desc(typingctx, tmap):
    """Make a tensor map in global memory (written by the host) ready for this thread's TMA copies: order the
    generic-proxy writes that made it before the tensormap-proxy reads (fence.proxy.tensormap; the host
    wrote it, so system scope, as in the CUDA Programming Guide's example), then prefetch it. Every thread
    that issues copies through the map runs it first."""
    if not isinstance(tmap, types.Array):
        raise TypingError("tma_prefetch_desc: tmap must be the tensor map's device array, got %s" % tmap)
    text = "%s [$0], 128; %s [$0];" % tuple(PTX["tma_prefetch_desc"].split("; "))

    def codegen(context, builder, sig, args):
        _check_sm90a("prefetch.tensormap")
        _asm(builder, ir.VoidType(), [_i64], text, "l,~{memory}", [_generic_u64(context, builder, sig.args[0], args[0])])
        return context.get_dummy_value()
    return types.void(tmap), codegen

def _tma_store(name, rank, what):
    """PTX[name] as an intrinsic (tmap, src, src_idx, c0, ... c<rank-1>): shared src[src_idx:] (laid out as the
    tensor map's box, swizzle included) -> the box at coordinates (c0 innermost, ...) of `tmap`'s global
    array. One thread issues it, after fence_proxy_async by every thread that wrote src and a barrier among
    them; completion is tracked by bulk groups (tma_store_commit, tma_store_wait_read / _wait). `what`: the
    instruction, as a refusal below sm_90a names it."""
    text = "%s [$0, {%s}], [$%d];" % (PTX[name], ", ".join("$%d" % (1 + i) for i in range(rank)), 1 + rank)

    def impl(typingctx, tmap, src, src_idx, *coords):
        _check_array(name, src, src_idx)
        if not isinstance(tmap, types.Array):
            raise TypingError("%s: tmap must be the tensor map's device array, got %s" % (name, tmap))
        if len(coords) != rank:
            raise TypingError("%s: takes %d coordinates, got %d" % (name, rank, len(coords)))

        def codegen(context, builder, sig, args):
            _check_sm90a(what)
            t = _generic_u64(context, builder, sig.args[0], args[0])
            s = _shared_u32(context, builder, sig.args[1], args[1], args[2], sig.args[2])
            cs = [context.cast(builder, args[i], sig.args[i], types.int32) for i in range(3, 3 + rank)]
            _asm(builder, ir.VoidType(), [_i64] + [_i32] * (rank + 1), text, "l," + "r," * (rank + 1) + "~{memory}",
                 [t] + cs + [s])
            return context.get_dummy_value()
        return types.void(tmap, src, src_idx, *coords), codegen
    return _named(name, _with_coordinates(impl, rank))

tma_store_2d = _tma_store("tma_store_2d", 2, "cp.async.bulk.tensor (store)")
tma_store_4d = _tma_store("tma_store_4d", 4, "cp.async.bulk.tensor (store)")
# the store that adds its box to the global array's elements (each add atomic; boxes from several blocks land
# in any order), clipped at the map's bounds: split-K's blocks add their partial C this way
tma_reduce_add_2d = _tma_store("tma_reduce_add_2d", 2, "cp.reduce.async.bulk.tensor")

tma_store_commit = _void("tma_store_commit")

def _bulk_wait(name):
    """cp.async.bulk.wait_group[.read] n: wait until at most n of this thread's bulk groups are pending
    (.read: only until their shared-memory source has been read, so it may be overwritten)."""
    def impl(typingctx, n):
        if not isinstance(n, types.IntegerLiteral):
            raise TypingError("%s: the group count must be a literal integer, got %s" % (name, n))
        text = "%s %d;" % (PTX[name], n.literal_value)

        def codegen(context, builder, sig, args):
            _check_sm90a(name)
            _asm(builder, ir.VoidType(), [], text, "~{memory}", [])
            return context.get_dummy_value()
        return types.void(n), codegen
    return _named(name, impl)

tma_store_wait_read = _bulk_wait("tma_store_wait_read")
tma_store_wait = _bulk_wait("tma_store_wait")

def _setmaxnreg(name):
    def impl(typingctx, n):
        if not isinstance(n, types.IntegerLiteral) or not (24 <= n.literal_value <= 256) or n.literal_value % 8:
            raise TypingError("%s: the register count must be a literal multiple of 8 in 24..256, got %s" % (name, n))
        text = "%s %d;" % (PTX[name], n.literal_value)

        def codegen(context, builder, sig, args):
            _check_sm90a("setmaxnreg")
            _asm(builder, ir.VoidType(), [], text, "~{memory}", [])
            return context.get_dummy_value()
        return types.void(n), codegen
    return _named(name, impl)

setmaxnreg_inc = _setmaxnreg("setmaxnreg_inc")
setmaxnreg_dec = _setmaxnreg("setmaxnreg_dec")

def _named_barrier(name):
    """bar.sync / bar.arrive on hardware barrier `bar_id` (1..15; 0 is __syncthreads) that completes
    once `count` threads (a multiple of 32) have arrived: sync waits for that, arrive does not."""
    def impl(typingctx, bar_id, count):
        for v in (bar_id, count):
            if not isinstance(v, types.IntegerLiteral):
                raise TypingError("%s: barrier id and thread count must be literal ints, got %s" % (name, v))
        i, n = bar_id.literal_value, count.literal_value
        if not (1 <= i <= 15 and n > 0 and n % 32 == 0):
            raise TypingError("%s: needs 1 <= id <= 15 and a count multiple of 32, got %d, %d" % (name, i, n))
        text = "%s %d, %d;" % (PTX[name], i, n)

        def codegen(context, builder, sig, args):
            _asm(builder, ir.VoidType(), [], text, "~{memory}", [])
            return context.get_dummy_value()
        return types.void(bar_id, count), codegen
    return _named(name, impl)

named_barrier_sync = _named_barrier("named_barrier_sync")
named_barrier_arrive = _named_barrier("named_barrier_arrive")

@intrinsic
def shared_address(typingctx, arr, idx):
    """The 32-bit shared-window address of arr[idx] (what a descriptor's start address encodes)."""
    _check_array("shared_address", arr, idx)

    def codegen(context, builder, sig, args):
        return _shared_u32(context, builder, sig.args[0], args[0], args[1], sig.args[1])
    return types.uint32(arr, idx), codegen
