"""Real PTX: each function here is a Numba `@intrinsic` whose code is one inline-assembly statement.

How an intrinsic works: Numba calls the decorated function at *typing* time with the argument types; it
returns the signature and a `codegen(context, builder, sig, args)` that emits LLVM IR. Ours builds an
`llvmlite.ir.InlineAsm` from PTX text with $0..$N placeholders and a constraint string: `=f`/`=r` are f32/
b32 outputs, `r`/`f`/`l` b32/f32/b64 inputs, `~{memory}` says the statement touches memory. Several
outputs come back as an LLVM struct that we unpack into a Numba tuple.

Register conventions (the same in `kernels.instructions.sim`, the pure-Python twins):
  * f16 and bf16 values travel in pairs, packed in uint32 registers (element with the lower index in the
    low 16 bits); `pack_half2` / `unpack_half2` convert f16.
  * mma takes and returns tuples: d = mma_m16n8k16_f32_f16(a, b, c) with a = (a0, a1, a2, a3) uint32,
    b = (b0, b1) uint32, c = (c0, .., c3) float32; the atom's LayoutA/B/C_TV say which element is where.
  * memory operands are (array, element offset from the array's first element): ldmatrix(sA, off).

Every intrinsic checks, while it is compiled, that the target GPU has the instruction
(`kernels.capability.MIN_SM`), so an sm_80 instruction in a kernel built for a T4 fails with a clear error.
"""

from llvmlite import ir

try:
    from numba.cuda.extending import intrinsic
except ImportError:  # numba-cuda before the extending module
    from numba.core.extending import intrinsic
try:
    from numba.cuda import types
    types.UniTuple  # noqa: B018  (older numba-cuda: numba.cuda.types lacks the container types)
except (ImportError, AttributeError):
    from numba.core import types
try:
    from numba.core.errors import TypingError
except ImportError:
    from numba.cuda.core.errors import TypingError

from ..capability import supports
from ..runtime import check_target, target_cc
from .atoms import LDSM_PTX, ldmatrix_name, mma_name, mma_need, mma_registers

SIMULATOR = False
SMEM_ALIGN = 16   # pass as cuda.shared.array(..., alignment=SMEM_ALIGN): 16-byte rows for ldmatrix/cp.async

_i16, _i32, _i64, _f32 = ir.IntType(16), ir.IntType(32), ir.IntType(64), ir.FloatType()


# ---- helpers shared by the intrinsics ----------------------------------------------------------------
def _asm(builder, ret, argtys, text, constraints, args):
    """Emit one inline-asm call. Marked side-effecting so LLVM neither drops nor moves it across others."""
    fnty = ir.FunctionType(ret, argtys)
    return builder.call(ir.InlineAsm(fnty, text, constraints, side_effect=True), args)


def _unpack(builder, value, n):
    return [builder.extract_value(value, i) for i in range(n)]


def _tuple_items(context, builder, tupty, value, to):
    """The elements of a Numba tuple, each cast to Numba type `to`."""
    return [context.cast(builder, builder.extract_value(value, i), tupty[i], to) for i in range(len(tupty))]


def _check_tuple(fname, what, ty, n, kind):
    ok = isinstance(ty, types.BaseTuple) and len(ty) == n and all(isinstance(t, kind) for t in ty)
    if not ok:
        raise TypingError("%s: %s must be a tuple of %d %s values, got %s"
                          % (fname, what, n, "integer" if kind is types.Integer else "float", ty))


def _check_array(fname, arr, idx):
    if not isinstance(arr, types.Array) or not isinstance(idx, types.Integer):
        raise TypingError("%s: expected (array, integer element offset), got (%s, %s)" % (fname, arr, idx))


def _element_ptr(context, builder, arrty, arr, idx, idxty):
    """Pointer to element `idx` counted from the array's first element in memory (generic space)."""
    data = context.make_array(arrty)(context, builder, arr).data
    return builder.gep(data, [context.cast(builder, idx, idxty, types.intp)])


def _shared_u32(context, builder, arrty, arr, idx, idxty):
    """The 32-bit shared-window address of arr[idx]: the array's start (addrspacecast generic -> shared
    (3), then ptrtoint) plus idx * itemsize, added in 32 bits: shared memory is under 4 GB, and 32-bit
    offsets let LLVM narrow the kernel's index arithmetic (Numba's is 64-bit: twice the registers)."""
    data = context.make_array(arrty)(context, builder, arr).data
    sdata = builder.addrspacecast(data, ir.PointerType(context.get_data_type(arrty.dtype), 3))
    off = builder.trunc(context.cast(builder, idx, idxty, types.intp), _i32)
    off = builder.mul(off, ir.Constant(_i32, context.get_abi_sizeof(context.get_data_type(arrty.dtype))))
    return builder.add(builder.ptrtoint(sdata, _i32), off)


def _global_u64(context, builder, arrty, arr, idx, idxty):
    """The 64-bit global address of arr[idx]: addrspacecast generic -> global (1), then ptrtoint."""
    ptr = _element_ptr(context, builder, arrty, arr, idx, idxty)
    gptr = builder.addrspacecast(ptr, ir.PointerType(context.get_data_type(arrty.dtype), 1))
    return builder.ptrtoint(gptr, _i64)


def _named(name, fn):
    fn.__name__ = fn.__qualname__ = name
    return intrinsic(fn)


# ---- mma.sync.aligned, one per MMA atom -----------------------------------------------------------------
def make_mma(atom):
    """The atom's instruction (atom.ptx) as an intrinsic (a, b, c) -> d: tuples of its operand registers,
    as many as kernels.instructions.atoms.mma_registers derives from its TV layouts and value types."""
    regs = mma_registers(atom)
    (na, ka), (nb, _), (nc, kc) = regs["A"], regs["B"], regs["C"]
    ctype, clty = (types.float32, _f32) if kc == "f" else (types.uint32, _i32)
    k = 0
    groups = []
    for n in (nc, na, nb, nc):
        groups.append("{" + ",".join("$%d" % (k + j) for j in range(n)) + "}")
        k += n
    text = "%s %s, %s, %s, %s;" % ((atom.ptx,) + tuple(groups))
    constraints = ",".join(["=" + kc] * nc + ["r"] * (na + nb) + [kc] * nc)
    name = mma_name(atom)
    need = mma_need(atom)

    def impl(typingctx, a, b, c):
        _check_tuple(name, "a", a, na, types.Integer)
        _check_tuple(name, "b", b, nb, types.Integer)
        _check_tuple(name, "c", c, nc, types.Float if kc == "f" else types.Integer)
        sig = types.UniTuple(ctype, nc)(a, b, c)

        def codegen(context, builder, sig, args):
            check_target(need)
            ins = (_tuple_items(context, builder, sig.args[0], args[0], types.uint32)
                   + _tuple_items(context, builder, sig.args[1], args[1], types.uint32)
                   + _tuple_items(context, builder, sig.args[2], args[2], ctype))
            ret = ir.LiteralStructType([clty] * nc)
            out = _asm(builder, ret, [_i32] * (na + nb) + [clty] * nc, text, constraints, ins)
            return context.make_tuple(builder, sig.return_type, _unpack(builder, out, nc))

        return sig, codegen

    return _named(name, impl)


# ---- ldmatrix.sync.aligned.m8n8 ------------------------------------------------------------------------
def make_ldmatrix(copy_atom):
    """The copy atom's ldmatrix (SM75_U32x{1,2,4}_LDSM_N, SM75_U16x{2,4,8}_LDSM_T) as an intrinsic
    (array, element offset of this lane's row) -> its registers (one uint32, or a tuple)."""
    ptx, num = LDSM_PTX[copy_atom.op]
    name = ldmatrix_name(copy_atom.op)
    text = "%s {%s}, [$%d];" % (ptx, ",".join("$%d" % j for j in range(num)), num)
    constraints = ",".join(["=r"] * num + ["r", "~{memory}"])

    def impl(typingctx, arr, idx):
        _check_array(name, arr, idx)
        ret = types.uint32 if num == 1 else types.UniTuple(types.uint32, num)
        sig = ret(arr, idx)

        def codegen(context, builder, sig, args):
            check_target("ldmatrix")
            addr = _shared_u32(context, builder, sig.args[0], args[0], args[1], sig.args[1])
            rty = _i32 if num == 1 else ir.LiteralStructType([_i32] * num)
            out = _asm(builder, rty, [_i32], text, constraints, [addr])
            if num == 1:
                return out
            return context.make_tuple(builder, sig.return_type, _unpack(builder, out, num))

        return sig, codegen

    return _named(name, impl)


# ---- cp.async --------------------------------------------------------------------------------------------
def _make_cp_async(name, cache, nbytes):
    text = "cp.async.%s.shared.global [$0], [$1], %d;" % (cache, nbytes)

    def impl(typingctx, dst, dst_idx, src, src_idx):
        _check_array(name, dst, dst_idx)
        _check_array(name, src, src_idx)
        sig = types.void(dst, dst_idx, src, src_idx)

        def codegen(context, builder, sig, args):
            check_target("cp.async")
            d = _shared_u32(context, builder, sig.args[0], args[0], args[1], sig.args[1])
            s = _global_u64(context, builder, sig.args[2], args[2], args[3], sig.args[3])
            _asm(builder, ir.VoidType(), [_i32, _i64], text, "r,l,~{memory}", [d, s])
            return context.get_dummy_value()

        return sig, codegen

    return _named(name, impl)


@intrinsic
def cp_async_cg_16_zfill(typingctx, dst, dst_idx, src, src_idx, valid):
    """cp.async.cg 16 bytes, or 16 zero bytes where `valid` is false (src-size 0: nothing is read)."""
    _check_array("cp_async_cg_16_zfill", dst, dst_idx)
    _check_array("cp_async_cg_16_zfill", src, src_idx)
    sig = types.void(dst, dst_idx, src, src_idx, valid)

    def codegen(context, builder, sig, args):
        check_target("cp.async")
        d = _shared_u32(context, builder, sig.args[0], args[0], args[1], sig.args[1])
        s = _global_u64(context, builder, sig.args[2], args[2], args[3], sig.args[3])
        ok = context.cast(builder, args[4], sig.args[4], types.boolean)
        n = builder.select(ok, ir.Constant(_i32, 16), ir.Constant(_i32, 0))
        _asm(builder, ir.VoidType(), [_i32, _i64, _i32], "cp.async.cg.shared.global [$0], [$1], 16, $2;",
             "r,l,r,~{memory}", [d, s, n])
        return context.get_dummy_value()

    return sig, codegen


cp_async_ca_4 = _make_cp_async("cp_async_ca_4", "ca", 4)
cp_async_ca_8 = _make_cp_async("cp_async_ca_8", "ca", 8)
cp_async_ca_16 = _make_cp_async("cp_async_ca_16", "ca", 16)
cp_async_cg_16 = _make_cp_async("cp_async_cg_16", "cg", 16)   # .cg (bypass L1) exists for 16 bytes only


@intrinsic
def cp_async_commit(typingctx):
    """cp.async.commit_group: close the group of cp.async issued since the last commit."""
    def codegen(context, builder, sig, args):
        check_target("cp.async")
        _asm(builder, ir.VoidType(), [], "cp.async.commit_group;", "~{memory}", [])
        return context.get_dummy_value()
    return types.void(), codegen


@intrinsic
def cp_async_wait(typingctx, n):
    """cp.async.wait_group n: wait until at most n committed groups are still in flight (n: a literal)."""
    if not isinstance(n, types.IntegerLiteral):
        raise TypingError("cp_async_wait: the group count must be a literal integer, got %s" % n)
    text = "cp.async.wait_group %d;" % n.literal_value

    def codegen(context, builder, sig, args):
        check_target("cp.async")
        _asm(builder, ir.VoidType(), [], text, "~{memory}", [])
        return context.get_dummy_value()
    return types.void(n), codegen


# ---- 128-bit global loads and stores ---------------------------------------------------------------------
def _address(space, context, builder, arrty, arr, idx, idxty):
    """(address value, its LLVM type, its constraint letter) of arr[idx] in `space` (global or shared)."""
    if space == "shared":
        return _shared_u32(context, builder, arrty, arr, idx, idxty), _i32, "r"
    return _global_u64(context, builder, arrty, arr, idx, idxty), _i64, "l"


def _vec(n):
    return ".v%d" % n if n > 1 else ""


def _make_ld(name, kind, space="global", n=4):
    """ld.<space>[.vN].<f32|b32>: n 32-bit values from arr[idx] (n * 4 bytes, aligned to that)."""
    nty, lty, con = (types.float32, _f32, "f") if kind == "f32" else (types.uint32, _i32, "r")
    outs = ",".join("$%d" % j for j in range(n))
    text = "ld.%s%s.%s %s, [$%d];" % (space, _vec(n), "f32" if kind == "f32" else "b32",
                                     "{%s}" % outs if n > 1 else outs, n)
    constraints = ",".join(["=" + con] * n + ["r" if space == "shared" else "l", "~{memory}"])

    def impl(typingctx, arr, idx):
        _check_array(name, arr, idx)
        sig = (types.UniTuple(nty, n) if n > 1 else nty)(arr, idx)

        def codegen(context, builder, sig, args):
            check_target("ld.global.v4")
            addr, aty, _ = _address(space, context, builder, sig.args[0], args[0], args[1], sig.args[1])
            if n == 1:
                return _asm(builder, lty, [aty], text, constraints, [addr])
            out = _asm(builder, ir.LiteralStructType([lty] * n), [aty], text, constraints, [addr])
            return context.make_tuple(builder, sig.return_type, _unpack(builder, out, n))

        return sig, codegen

    return _named(name, impl)


def _make_st(name, kind, space="global", n=4):
    """st.<space>[.vN].<f32|b32>: a tuple of n 32-bit values (or one value) to arr[idx]."""
    nty, lty, con = (types.float32, _f32, "f") if kind == "f32" else (types.uint32, _i32, "r")
    vals = ",".join("$%d" % (j + 1) for j in range(n))
    text = "st.%s%s.%s [$0], %s;" % (space, _vec(n), "f32" if kind == "f32" else "b32",
                                    "{%s}" % vals if n > 1 else vals)
    constraints = ",".join(["r" if space == "shared" else "l"] + [con] * n + ["~{memory}"])

    def impl(typingctx, arr, idx, v):
        _check_array(name, arr, idx)
        if n > 1:
            _check_tuple(name, "v", v, n, types.Float if kind == "f32" else types.Integer)
        elif not isinstance(v, types.Float if kind == "f32" else types.Integer):
            raise TypingError("%s: v must be a %s value, got %s" % (name, kind, v))
        sig = types.void(arr, idx, v)

        def codegen(context, builder, sig, args):
            check_target("st.global.v4")
            addr, aty, _ = _address(space, context, builder, sig.args[0], args[0], args[1], sig.args[1])
            if n > 1:
                vals = _tuple_items(context, builder, sig.args[2], args[2], nty)
            else:
                vals = [context.cast(builder, args[2], sig.args[2], nty)]
            _asm(builder, ir.VoidType(), [aty] + [lty] * n, text, constraints, [addr] + vals)
            return context.get_dummy_value()

        return sig, codegen

    return _named(name, impl)


# ld/st_<space>_v<n>_<f32|b32>(arr, idx[, v]): 4, 8 or 16 bytes at element idx of arr (Numba never fuses
# scalar accesses into vector ones, so the 16-byte forms are LDG.E.128 / LDS.128 / STS.128 only this way)
for _space in ("global", "shared"):
    for _n in (1, 2, 4):
        for _kind in ("f32", "b32"):
            for _op, _maker in (("ld", _make_ld), ("st", _make_st)):
                _nm = "%s_%s_v%d_%s" % (_op, _space, _n, _kind)
                globals()[_nm] = _maker(_nm, _kind, _space, _n)


# ---- packing 16-bit floats into b32 registers --------------------------------------------------------
def _as_i16(context, builder, val, ty):
    """A float16 value as its 16 bits (numba-cuda represents float16 as i16 or as LLVM half)."""
    h = context.cast(builder, val, ty, types.float16)
    return h if h.type == _i16 else builder.bitcast(h, _i16)


@intrinsic
def pack_half2(typingctx, lo, hi):
    """Two floats (float16, or float32 rounded to nearest) -> one b32 register, `lo` in the low half."""
    if not (isinstance(lo, types.Float) and isinstance(hi, types.Float)):
        raise TypingError("pack_half2: expected two floats, got %s, %s" % (lo, hi))

    def codegen(context, builder, sig, args):
        lo16 = builder.zext(_as_i16(context, builder, args[0], sig.args[0]), _i32)
        hi16 = builder.zext(_as_i16(context, builder, args[1], sig.args[1]), _i32)
        return builder.or_(lo16, builder.shl(hi16, ir.Constant(_i32, 16)))
    return types.uint32(lo, hi), codegen


@intrinsic
def unpack_half2(typingctx, r):
    """One b32 register -> its two float16 halves as float32 (low half first)."""
    if not isinstance(r, types.Integer):
        raise TypingError("unpack_half2: expected an integer register, got %s" % r)

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], types.uint32)
        halves = [builder.trunc(v, _i16), builder.trunc(builder.lshr(v, ir.Constant(_i32, 16)), _i16)]
        f16 = context.get_value_type(types.float16)
        outs = []
        for h in halves:
            h = h if f16 == _i16 else builder.bitcast(h, f16)
            outs.append(context.cast(builder, h, types.float16, types.float32))
        return context.make_tuple(builder, sig.return_type, outs)
    return types.UniTuple(types.float32, 2)(r), codegen


# ---- fast math on float32 registers ---------------------------------------------------------------------
@intrinsic
def exp2_approx(typingctx, x):
    """ex2.approx.ftz.f32: 2**x in one MUFU instruction (about 2 ulp; subnormals flushed to zero). The
    online softmax computes every exponential with it, folding log2(e) into the scale."""
    if not isinstance(x, types.Float):
        raise TypingError("exp2_approx: expected a float, got %s" % x)

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], types.float32)
        return _asm(builder, _f32, [_f32], "ex2.approx.ftz.f32 $0, $1;", "=f,f", [v])
    return types.float32(x), codegen


@intrinsic
def tanh_approx(typingctx, x):
    """tanh.approx.f32: an approximation of tanh(x) in one instruction (sm_75 and newer; PTX ISA, tanh)."""
    if not isinstance(x, types.Float):
        raise TypingError("tanh_approx: expected a float, got %s" % x)

    def codegen(context, builder, sig, args):
        check_target("tanh.approx.f32")
        v = context.cast(builder, args[0], sig.args[0], types.float32)
        return builder.call(ir.InlineAsm(ir.FunctionType(_f32, [_f32]), "tanh.approx.f32 $0, $1;", "=f,f"), [v])
    return types.float32(x), codegen


@intrinsic
def globaltimer(typingctx):
    """mov.u64 %globaltimer: the GPU's nanosecond clock (PTX ISA, special register %globaltimer), the same on
    every SM, so stamps of different blocks and warpgroups share one time line. Kernels that record their
    schedule (a build-time `trace`) read it at the start and end of each phase."""
    def codegen(context, builder, sig, args):
        return _asm(builder, _i64, [], "mov.u64 $0, %globaltimer;", "=l", [])
    return types.uint64(), codegen


@intrinsic
def pack_bf16x2(typingctx, lo, hi):
    """Two floats rounded to nearest bf16 (ties to even) -> one b32 register, `lo` in the low half:
    cvt.rn.bf16x2.f32 where the target has it (sm_80 on; it takes the high half first), else the same
    rounding in integer arithmetic (NaN -> the canonical 0x7FFF), so a T4 writes bf16 too."""
    if not (isinstance(lo, types.Float) and isinstance(hi, types.Float)):
        raise TypingError("pack_bf16x2: expected two floats, got %s, %s" % (lo, hi))

    def codegen(context, builder, sig, args):
        a, b = (context.cast(builder, v, t, types.float32) for v, t in zip(args, sig.args))
        cc = target_cc()
        if cc is None or supports("cvt.rn.bf16x2.f32", cc):
            return _asm(builder, _i32, [_f32, _f32], "cvt.rn.bf16x2.f32 $0, $1, $2;", "=r,f,f", [b, a])
        halves = []
        for x in (a, b):
            bits = builder.bitcast(x, _i32)
            odd = builder.and_(builder.lshr(bits, ir.Constant(_i32, 16)), ir.Constant(_i32, 1))
            rounded = builder.lshr(builder.add(bits, builder.add(odd, ir.Constant(_i32, 0x7FFF))), ir.Constant(_i32, 16))
            nan = builder.fcmp_unordered("uno", x, x)
            halves.append(builder.select(nan, ir.Constant(_i32, 0x7FFF), rounded))
        return builder.or_(halves[0], builder.shl(halves[1], ir.Constant(_i32, 16)))
    return types.uint32(lo, hi), codegen


@intrinsic
def unpack_bf16x2(typingctx, r):
    """One b32 register -> its two bfloat16 halves as float32 (low half first): exact, the bits moved up."""
    if not isinstance(r, types.Integer):
        raise TypingError("unpack_bf16x2: expected an integer register, got %s" % r)

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], types.uint32)
        lo = builder.shl(v, ir.Constant(_i32, 16))
        hi = builder.and_(v, ir.Constant(_i32, 0xFFFF0000))
        return context.make_tuple(builder, sig.return_type, [builder.bitcast(x, _f32) for x in (lo, hi)])
    return types.UniTuple(types.float32, 2)(r), codegen


# ---- warp shuffles (numba's own take only signed ints and floats; these take any 8- to 64-bit scalar) ----
def _make_shfl(name, mode, clamp):
    """shfl.sync.<mode>.b32, applied to each 32-bit half of the value (so 64-bit values work too)."""
    text = "shfl.sync.%s.b32 $0, $1, $2, %d, $3;" % (mode, clamp)

    def impl(typingctx, mask, value, x):
        if not (isinstance(mask, types.Integer) and isinstance(x, types.Integer)
                and isinstance(value, (types.Integer, types.Float)) and value.bitwidth in (8, 16, 32, 64)):
            raise TypingError("%s: expected (integer mask, int or float value, integer lane), got (%s, %s, %s)"
                              % (name, mask, value, x))
        sig = value(mask, value, x)

        def codegen(context, builder, sig, args):
            width = sig.args[1].bitwidth
            ity = ir.IntType(width)
            v = args[1] if isinstance(sig.args[1], types.Integer) else builder.bitcast(args[1], ity)
            m = context.cast(builder, args[0], sig.args[0], types.uint32)
            b = context.cast(builder, args[2], sig.args[2], types.uint32)
            wide = builder.zext(v, _i64) if width < 64 else v
            parts = [builder.trunc(wide, _i32), builder.trunc(builder.lshr(wide, ir.Constant(_i64, 32)), _i32)]
            outs = [_asm(builder, _i32, [_i32] * 3, text, "=r,r,r,r", [p, b, m])
                    for p in parts[:1 if width <= 32 else 2]]
            r = builder.zext(outs[0], _i64)
            if width == 64:
                r = builder.or_(r, builder.shl(builder.zext(outs[1], _i64), ir.Constant(_i64, 32)))
            r = builder.trunc(r, ity) if width < 64 else r
            return r if isinstance(sig.args[1], types.Integer) else builder.bitcast(r, args[1].type)

        return sig, codegen

    return _named(name, impl)


shfl_sync = _make_shfl("shfl_sync", "idx", 31)          # value of lane x
shfl_xor_sync = _make_shfl("shfl_xor_sync", "bfly", 31)  # value of lane (lane ^ x)
shfl_down_sync = _make_shfl("shfl_down_sync", "down", 31)  # value of lane + x (own value past 31)
shfl_up_sync = _make_shfl("shfl_up_sync", "up", 0)       # value of lane - x (own value below 0)


@intrinsic
def syncwarp(typingctx):
    """bar.warp.sync 0xffffffff: the 32 lanes of the warp wait for each other (and see each other's
    shared-memory writes)."""
    def codegen(context, builder, sig, args):
        _asm(builder, ir.VoidType(), [], "bar.warp.sync 0xffffffff;", "~{memory}", [])
        return context.get_dummy_value()
    return types.void(), codegen
