"""Self-tests of the instructions: one small kernel per intrinsic, checked against NumPy.

Every MMA atom with an intrinsic gets one test: each lane's A, B and C registers are filled from random
matrices as the atom's TV layouts say (cutelite.fragment_of), the instruction runs once, and D, read back
through the same layouts, must equal A @ B + C. Every ldmatrix copy atom likewise: the lanes' registers must
hold the values its ValLayoutSrc / ValLayoutDst predict. On a GPU this checks the hardware against CuTe's
layouts; in the simulator (whose twins are built from the same layouts) it checks the twins run. Then the
vector loads and stores, the register packing and shuffles, cp.async, and a copy through a swizzled layout.

Each test poisons its output first (NaN, or all-ones bits), so an element never written cannot pass.
`python -m kernels.gpu_check` runs them all and prints a table.

    import kernels; kernels.setup()
    from kernels.instructions import selftest
    selftest.run_all()             # -> list of Result(name, ok, max_err, note)

Import after kernels.setup() (this module imports numba).
"""

import functools
from dataclasses import dataclass

import numpy as np
from numba import cuda

from cutelite import MMA_ATOMS, fragment_of, make_copy_atom, size

from ..capability import supports
from ..layout_codegen import layout_fn, layout_pyfunc
from . import (
    SMEM_ALIGN, cp_async_ca_4, cp_async_ca_8, cp_async_ca_16, cp_async_cg_16, cp_async_commit, cp_async_wait,
    exp2_approx, globaltimer, ld_global_v4_b32, ld_global_v4_f32, ldmatrix_for, mma_for, pack_bf16x2, pack_half2,
    shfl_down_sync, shfl_sync, shfl_up_sync, shfl_xor_sync, st_global_v4_b32, st_global_v4_f32, tanh_approx,
    unpack_bf16x2, unpack_half2,
)
from .atoms import LDSM_PTX, mma_need, mma_registers, supported
from ..numeric import as_b32, decode, encode, storage
from ..source import compile_function

u16, u32, f32 = np.uint16, np.uint32, np.float32


# ---- the harness ---------------------------------------------------------------------------------------
@dataclass
class Result:
    name: str
    ok: bool
    max_err: float = float("nan")
    note: str = ""


@dataclass
class Test:
    name: str
    needs: tuple      # instruction names of kernels.capability.MIN_SM
    run: object       # run(rng) -> Result


TESTS = {}


def selftest(name, *needs):
    def register(run):
        TESTS[name] = Test(name, needs, run)
        return run
    return register


def check(name, got, want, rtol, atol=None):
    """Result of comparing got with want: every element written (no poison left), within tolerance."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if not np.all(np.isfinite(got)):
        return Result(name, False, float("inf"), "%d outputs not written (NaN)" % np.sum(~np.isfinite(got)))
    scale = max(1.0, float(np.max(np.abs(want))))
    err = float(np.max(np.abs(got - want))) / scale
    ok = err <= rtol if atol is None else bool(np.all(np.abs(got - want) <= atol))
    return Result(name, ok, err, "" if ok else "max error %.3g over tolerance %.3g" % (err, rtol))


def check_bits(name, got, want):
    """Exact comparison of integer arrays (register contents, copies)."""
    bad = int(np.sum(np.asarray(got) != np.asarray(want)))
    return Result(name, bad == 0, float(bad), "" if bad == 0 else "%d of %d differ" % (bad, np.size(want)))


_BUILT = {}      # test name -> the kernel it built


def compiled_kernels():
    """name -> every kernel a test here has launched (compiled): for SASS summaries."""
    out = {n: k for n, k in _BUILT.items() if getattr(k, "overloads", None)}
    out.update({n: k for n, k in globals().items() if n.startswith("k_") and getattr(k, "overloads", None)})
    return out


def f16(rng, *shape):
    return rng.standard_normal(shape).astype(np.float16)


def run_all(names=None, cc=None, seed=0):
    """Run the tests (all by default) that `cc` supports (default: every one; the simulator has all)."""
    results = []
    for name in names or list(TESTS):
        d = TESTS[name]
        if cc is not None and not all(supports(n, cc) for n in d.needs):
            results.append(Result(name, True, float("nan"), "skipped: needs %s" % ", ".join(d.needs)))
            continue
        try:
            results.append(d.run(np.random.default_rng(seed)))
        except Exception as e:  # a failing test is reported, not fatal to the others
            results.append(Result(name, False, float("nan"), "%s: %s" % (type(e).__name__, str(e)[:300])))
    return results


# ---- every MMA atom: registers filled by its TV layouts, D read back through them --------------------------
def _values(rng, t, shape):
    """Random values exactly representable in element type t (as float32) and the array a kernel holds them
    in (kernels.numeric.storage: f16 or bf16 as their bits)."""
    held = encode(rng.standard_normal(shape).astype(f32), t)
    return decode(held, t), held


def _mma_kernel(atom_name):
    """A one-warp kernel d[lane] = mma(a[lane], b[lane], c[lane]) for the atom's intrinsic (register arrays
    of shape (32, n)), written out for its register counts."""
    if "mma " + atom_name in _BUILT:
        return _BUILT["mma " + atom_name]
    atom = MMA_ATOMS[atom_name]
    (na, _), (nb, _), (nc, _) = (mma_registers(atom)[op] for op in "ABC")
    regs = lambda x, n: ", ".join("%s[l, %d]" % (x, j) for j in range(n)) + ","   # noqa: E731
    src = ("def k(a, b, c, d):\n    l = cuda.threadIdx.x\n    r = mma((%s), (%s), (%s))\n" % (regs("a", na), regs("b", nb), regs("c", nc))
           + "".join("    d[l, %d] = r[%d]\n" % (j, j) for j in range(nc)))
    _BUILT["mma " + atom_name] = cuda.jit(compile_function(src, "k", {"cuda": cuda, "mma": mma_for(atom)},
                                                           "selftest " + atom_name))
    return _BUILT["mma " + atom_name]


def run_mma_atom(atom, rng):
    """The atom's instruction once on random operands; D against NumPy's A @ B + C."""
    name = "mma " + atom.name
    M, N, K = atom.Shape_MNK
    T = size(atom.ThrID)
    copies = 32 // T                                    # Volta: four quad-pairs, each its own product
    lanes = [[atom.ThrID(t) + (4 * q if T == 8 else 0) for t in range(T)] for q in range(copies)]
    types = dict(zip("ABC", atom.types[1:]))
    regs = {"A": [], "B": [], "C": []}
    want = []
    for q in range(copies):
        shapes = {"A": (M, K), "B": (K, N), "C": (M, N)}
        (A, Ab), (B, Bb), (C, Cb) = (_values(rng, types[op], shapes[op]) for op in "ABC")
        want.append(A.astype(np.float64) @ B.astype(np.float64) + C)
        for op, held in zip("ABC", (Ab, Bb, Cb)):
            regs[op].append((held, lanes[q]))
    arrays = {}
    for op in "ABC":
        arr = np.zeros((32, size(getattr(atom, "Layout%s_TV" % op), 1)), storage(types[op]))
        for mat, ls in regs[op]:
            for lane in ls:
                arr[lane] = [mat[r, c] for _, (r, c) in fragment_of(atom, op, lane)]
        f = mma_registers(atom)[op][1] == "f"                 # float32 values, or narrower ones packed in b32
        arrays[op] = arr if f else np.ascontiguousarray(arr).view("<u4")
    acc = types["C"]
    nd = mma_registers(atom)["C"][0]
    d = np.full((32, nd), np.nan, f32) if acc == "float32" else np.full((32, nd), 0xFFFFFFFF, u32)
    _mma_kernel(atom.name)[1, 32](arrays["A"], arrays["B"], arrays["C"], d)
    vals = decode(np.ascontiguousarray(d).view(storage(acc)), acc)
    got = []
    for q in range(copies):
        D = np.full((M, N), np.nan)
        for lane in lanes[q]:
            for v, (r, c) in fragment_of(atom, "C", lane):
                D[r, c] = vals[lane, v]
        got.append(D)
    return check(name, np.stack(got), np.stack(want), 1e-5 if acc == "float32" else 2e-3)


for _atom in MMA_ATOMS.values():
    if supported(_atom):
        selftest("mma " + _atom.name, mma_need(_atom))(functools.partial(run_mma_atom, _atom))


# ---- every ldmatrix copy atom: the registers its layouts predict ------------------------------------------
def _ldmatrix_kernel(op):
    if "ldmatrix " + op not in _BUILT:
        _BUILT["ldmatrix " + op] = _make_ldmatrix_kernel(op)
    return _BUILT["ldmatrix " + op]


def _make_ldmatrix_kernel(op):
    ld = ldmatrix_for(make_copy_atom(op, "half_t"))
    num = LDSM_PTX[op][1]
    if num == 1:
        @cuda.jit
        def k(M, rows, out):
            s = cuda.shared.array(256, u16)
            lane = cuda.threadIdx.x
            for i in range(8):
                s[8 * lane + i] = M[8 * lane + i]
            cuda.syncthreads()
            out[lane, 0] = ld(s, rows[lane])
        return k

    @cuda.jit
    def k(M, rows, out):
        s = cuda.shared.array(256, u16)
        lane = cuda.threadIdx.x
        for i in range(8):
            s[8 * lane + i] = M[8 * lane + i]
        cuda.syncthreads()
        r = ld(s, rows[lane])
        for j in range(num):
            out[lane, j] = r[j]
    return k


def run_ldmatrix_atom(op, rng):
    """Four 8x8 matrices of halves in shared memory; each lane passes the row its ValLayoutSrc says; its
    registers must hold the values its ValLayoutDst says (value 2j in the low half of register j)."""
    atom = make_copy_atom(op, "half_t")
    M = rng.integers(0, 1 << 16, 256).astype(u16)
    src, dst = atom.ValLayoutSrc, atom.ValLayoutDst
    rows = np.array([src(lane, 0) for lane in range(32)], np.int64)
    num = LDSM_PTX[op][1]
    out = np.full((32, num), 0xFFFFFFFF, u32)
    _ldmatrix_kernel(op)[1, 32](M, rows, out)
    want = np.array([[M[dst(lane, v)] for v in range(size(dst, 1))] for lane in range(32)], u16)
    return check_bits("ldmatrix " + op, out, np.ascontiguousarray(want).view("<u4"))


for _op in LDSM_PTX:
    selftest("ldmatrix " + _op, "ldmatrix")(functools.partial(run_ldmatrix_atom, _op))


# ---- 128-bit loads/stores and the register packing helpers ----------------------------------------------
@cuda.jit
def k_vector_copy(src, dst, bits, halves, packed, wide):
    """Per thread i: dst[4i:4i+4] = src[4i:4i+4] reversed, through ld/st.global.v4 (f32 and b32 forms);
    halves -> pack_half2 -> unpack_half2 -> pack_half2 swapped -> shfl_xor to lane i ^ 1 -> packed;
    64-bit and float shuffles -> wide."""
    i = cuda.threadIdx.x
    v = ld_global_v4_f32(src, 4 * i)
    st_global_v4_f32(dst, 4 * i, (v[3], v[2], v[1], v[0]))
    st_global_v4_b32(bits, 4 * i, ld_global_v4_b32(src, 4 * i))     # the same 16 bytes, as bits
    lo, hi = unpack_half2(pack_half2(halves[2 * i], halves[2 * i + 1]))
    p = pack_half2(hi, lo)
    packed[i] = shfl_xor_sync(0xFFFFFFFF, p, 1)
    wide[0, i] = shfl_sync(0xFFFFFFFF, i * 1000000007, 31 - i)      # int64: both halves travel
    wide[1, i] = shfl_down_sync(0xFFFFFFFF, src[i] * 2.0, 1)          # float64
    wide[2, i] = shfl_up_sync(0xFFFFFFFF, f32(i) + f32(0.5), 2)       # float32


@selftest("ld/st.global.v4, pack/unpack, shfl", "ld.global.v4", "st.global.v4")
def run_vector_copy(rng):
    name = "ld/st.global.v4, pack/unpack, shfl"
    src = rng.standard_normal(128).astype(f32)
    halves = f16(rng, 64).astype(f32)
    dst = np.full(128, np.nan, f32)
    bits = np.full(128, 0xFFFFFFFF, u32)
    packed = np.full(32, 0xFFFFFFFF, u32)
    wide = np.full((3, 32), np.nan)
    k_vector_copy[1, 32](src, dst, bits, halves, packed, wide)
    want_packed = as_b32(halves.astype(np.float16).reshape(32, 2)[:, ::-1].copy()).reshape(32)
    lane = np.arange(32)
    want_wide = np.stack([(31 - lane) * 1000000007.0,
                          np.where(lane < 31, src[np.minimum(lane + 1, 31)] * 2.0, src[lane] * 2.0),
                          np.where(lane >= 2, lane - 2, lane) + 0.5])
    parts = [check("v4.f32", dst, src.reshape(32, 4)[:, ::-1].reshape(128), 0.0),
             check_bits("v4.b32", bits, src.view(u32)),
             check_bits("pack + shfl", packed, want_packed[lane ^ 1]),
             check("shfl 64-bit/float", wide, want_wide, 0.0)]
    return Result(name, all(r.ok for r in parts), max(r.max_err for r in parts),
                  "; ".join(r.name + ": " + r.note for r in parts if r.note))


# ---- fast math on float32 registers: ex2.approx, tanh.approx, the bf16 pair of two floats and back -------
@cuda.jit
def k_fast_math(x, powers, th, pairs, back):
    """Per thread i: powers[i] = 2**x[i] (ex2.approx.ftz.f32); th[i] = tanh(x[i]) (tanh.approx.f32);
    pairs[i] = x[2i], x[2i + 1] rounded to bf16, the first in the low half (pack_bf16x2), unpacked again into
    back[2i], back[2i + 1]."""
    i = cuda.threadIdx.x
    powers[i] = exp2_approx(x[i])
    th[i] = tanh_approx(x[i])
    p = pack_bf16x2(x[2 * i], x[2 * i + 1])
    pairs[i] = p
    lo, hi = unpack_bf16x2(p)
    back[2 * i] = lo
    back[2 * i + 1] = hi


@selftest("ex2.approx, tanh.approx, bf16x2 pack/unpack", "tanh.approx.f32")
def run_fast_math(rng):
    name = "ex2.approx, tanh.approx, bf16x2 pack/unpack"
    x = rng.uniform(-20, 20, 64).astype(f32)
    x[32:35] = (1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, -(1 + 2.0 ** -9))      # ties and a half-way below: to even
    powers, th = np.full(32, np.nan, f32), np.full(32, np.nan, f32)
    pairs, back = np.full(32, 0xFFFFFFFF, u32), np.full(64, np.nan, f32)
    k_fast_math[1, 32](x, powers, th, pairs, back)
    bits = encode(x, "bfloat16")
    parts = [check("ex2.approx (ratio to 2**x)", powers / np.exp2(x[:32].astype(np.float64)), np.ones(32), 1e-6),
             check("tanh.approx", th, np.tanh(x[:32].astype(np.float64)), 2.0 ** -10),
             check_bits("pack_bf16x2", pairs, as_b32(bits)),
             check("unpack_bf16x2", back, decode(bits, "bfloat16"), 0.0)]
    return Result(name, all(r.ok for r in parts), max(r.max_err for r in parts),
                  "; ".join(r.name + ": " + r.note for r in parts if r.note))


# ---- %globaltimer: the clock a kernel's recorded schedule reads ---------------------------------------
@cuda.jit
def k_globaltimer(x, stamps):
    """Per thread i: stamps[i] = the clock before and after a few dependent exp2s of x[i] (kept in x)."""
    i = cuda.threadIdx.x
    stamps[i, 0] = globaltimer()
    y = x[i]
    for _ in range(64):
        y = exp2_approx(y * np.float32(0.5))
    x[i] = y
    stamps[i, 1] = globaltimer()


@selftest("globaltimer")
def run_globaltimer(rng):
    x = rng.uniform(-1, 1, 32).astype(f32)
    stamps = np.zeros((32, 2), np.uint64)
    k_globaltimer[1, 32](x, stamps)
    ok = bool(np.all(stamps[:, 0] > 0) and np.all(stamps[:, 1] >= stamps[:, 0]))
    return Result("globaltimer", ok, float("nan"), "" if ok else "stamps not written, or the clock ran backwards")


# ---- cp.async: a two-stage tile copy ------------------------------------------------------------------
@cuda.jit
def k_cp_async(src, dst):
    """src, dst: (2, 32, 4) float32. Stage 0 by 16-byte cp.async.cg, stage 1 by 8+4+4-byte .ca pieces and
    a 16-byte .ca; each thread then writes a row that *another* thread copied (so syncthreads matters)."""
    t = cuda.threadIdx.x
    s = cuda.shared.array((2, 32, 4), f32, alignment=SMEM_ALIGN)
    cp_async_cg_16(s, t * 4, src, t * 4)
    cp_async_commit()
    cp_async_ca_8(s, 128 + t * 4, src, 128 + t * 4)
    cp_async_ca_4(s, 128 + t * 4 + 2, src, 128 + t * 4 + 2)
    cp_async_ca_4(s, 128 + t * 4 + 3, src, 128 + t * 4 + 3)
    cp_async_commit()
    cp_async_wait(1)                  # stage 0 has landed (for this thread's copies)
    cuda.syncthreads()                # ... and for everyone's
    u = 31 - t
    st_global_v4_f32(dst, t * 4, (s[0, u, 0], s[0, u, 1], s[0, u, 2], s[0, u, 3]))
    cp_async_wait(0)
    cuda.syncthreads()
    st_global_v4_f32(dst, 128 + t * 4, (s[1, u, 0], s[1, u, 1], s[1, u, 2], s[1, u, 3]))
    cuda.syncthreads()
    cp_async_ca_16(s, t * 4, src, 128 + u * 4)    # and a 16-byte .ca, read back by the same thread
    cp_async_commit()
    cp_async_wait(0)
    if s[0, t, 0] != src[1, u, 0] or s[0, t, 3] != src[1, u, 3]:
        dst[0, t, 0] = np.nan


@selftest("cp.async 4/8/16 B, commit, wait_group", "cp.async")
def run_cp_async(rng):
    src = rng.standard_normal((2, 32, 4)).astype(f32)
    dst = np.full((2, 32, 4), np.nan, f32)
    k_cp_async[1, 32](src, dst)
    return check("cp.async 4/8/16 B, commit, wait_group", dst, src[:, ::-1, :], 0.0)


# ---- a layout-mapped copy: out[L(i)] = in[i] for a swizzled cutelite layout ---------------------------
def swizzled_layout():
    """Sw<3,3,3> o (_8,_64):(_64,_1): the classic 128-byte-row swizzle (as a cutelite ComposedLayout)."""
    from cutelite import Layout, Swizzle, composition
    return composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))


_SW = swizzled_layout()
sw_1d = layout_fn(_SW, name="sw_1d")
sw_2d = layout_fn(_SW, by_mode=True, name="sw_2d")


@cuda.jit
def k_layout_copy(src, out1, out2):
    """out1[L(i)] = src[i] (one int coordinate); out2[L(m, n)] = src[m + 8 n] (one per mode)."""
    t = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    out1[sw_1d(t)] = src[t]
    m, n = t % 8, t // 8
    out2[sw_2d(m, n)] = src[m + 8 * n]


@selftest("layout-mapped copy (swizzled cutelite layout)")
def run_layout_copy(rng):
    src = rng.standard_normal(512).astype(f32)
    out1, out2 = np.full(512, np.nan, f32), np.full(512, np.nan, f32)
    k_layout_copy[4, 128](src, out1, out2)
    host = layout_pyfunc(_SW)
    want = np.full(512, np.nan, f32)
    want[[_SW(i) for i in range(512)]] = src
    assert all(host(i) == _SW(i) for i in range(512))
    r1 = check("1d", out1, want, 0.0)
    r2 = check("2d", out2, want, 0.0)
    return Result("layout-mapped copy (swizzled cutelite layout)", r1.ok and r2.ok,
                  max(r1.max_err, r2.max_err), "; ".join(x.note for x in (r1, r2) if x.note))
