"""kernels.lib in Numba's CUDA simulator: matmul against NumPy (odd shapes, both orders, every family), the one
description of an operand (kernels.lib.operand), the choice of a kernel family, the refusals, the prepared
calls, and the copies' launches within CUDA's grid limits (issue 30)."""

import importlib

import numpy as np
import pytest

from cutelite import Major
from cutelite.numeric import BFloat16, Float16, Float32
from kernels.capability import CapabilityError
from kernels.lib import describe, matmul
from kernels.numeric import decode
from kernels.runtime import DeviceInfo

pytestmark = pytest.mark.numba("simulator")
M = importlib.import_module("kernels.lib.matmul")      # the module (kernels.lib.matmul is also the function)
T4, A100, H100 = (DeviceInfo(simulator=False, name=n, cc=cc) for n, cc in
                  (("Tesla T4", (7, 5)), ("A100", (8, 0)), ("H100", (9, 0))))
SIM = DeviceInfo(simulator=True, name="CUDA simulator")


def _check(C, A, B, tol):
    want = A.astype(np.float64) @ B.astype(np.float64)
    assert np.all(np.isfinite(C)), "%d outputs never written" % np.sum(~np.isfinite(C))
    err = np.max(np.abs(C - want)) / max(1.0, np.max(np.abs(want)))
    assert err < tol, err


def test_matmul_odd_shapes_and_column_major():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((40, 20)).astype(np.float16)
    B = rng.standard_normal((20, 72)).astype(np.float16)
    _check(matmul(np.asfortranarray(A), B), A, B, 1e-5)        # A column-major, padded M, N, K
    for name in ("tc_sm75", "tc_sm80", "simt", "simt_warptile"):
        _check(matmul(A, B, kernel=name), A, B, 1e-5)
    _check(matmul(A.astype(np.float32), B.astype(np.float32), kernel="simt_warptile"), A, B, 1e-5)
    A32, B32 = A.astype(np.float32)[:9, :5], B.astype(np.float32)[:5, :3]
    out = np.full((9, 3), np.nan, np.float32)
    assert matmul(A32, B32, out=out) is out
    _check(out, A32, B32, 1e-5)


def test_matmul_on_device_arrays_in_place_and_padded():
    """Device operands the mma.sync kernels read in place (16-byte rows) and ones they cannot (a 3-element
    pitch): the same product, into a device `out` that is returned."""
    from numba import cuda
    rng = np.random.default_rng(9)
    A = rng.standard_normal((48, 32)).astype(np.float16)
    B = rng.standard_normal((32, 24)).astype(np.float16)
    for a, b in ((A, B), (np.ascontiguousarray(A[:, :30]), np.ascontiguousarray(B[:30, :]))):
        out = cuda.to_device(np.full((a.shape[0], b.shape[1]), np.nan, np.float32))
        assert matmul(cuda.to_device(a), cuda.to_device(b), out=out) is out
        _check(out.copy_to_host(), a, b, 1e-5)


def test_matmul_holes_a_bad_input_probe_found():
    """NumPy's answers where the kernels used to go wrong: an out overlapping A, K = 0, f16 on the SIMT kernel,
    an out of the wrong kind."""
    from numba import cuda
    rng = np.random.default_rng(8)
    A = rng.standard_normal((64, 64)).astype(np.float32)
    dA = cuda.to_device(A)
    matmul(dA, dA, out=dA)                               # out is A: computed as if into a temporary
    np.testing.assert_allclose(dA.copy_to_host(), A.astype(np.float64) @ A, rtol=1e-5, atol=1e-4)
    z = matmul(np.ones((5, 0), np.float32), np.ones((0, 3), np.float32))
    assert z.shape == (5, 3) and (z == 0).all()
    out = np.full((5, 3), np.nan, np.float32)
    assert matmul(np.ones((5, 0), np.float16), np.ones((0, 3), np.float16), out=out) is out and (out == 0).all()
    ones = np.ones((16, 16), np.float16)
    for name in ("simt", "simt_warptile"):
        assert (matmul(ones, ones, kernel=name) == 16).all()
    with pytest.raises(TypeError, match="matmul: out must be a float32 .* got 'list'"):
        matmul(A, A, out=[[0.0]])


def test_every_refusal_names_matmul_the_argument_and_the_value():
    a = np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match=r"matmul: A is 4x3 and B is 4x3: A's columns \(3\) must equal B's rows \(4\)"):
        matmul(a, a)
    with pytest.raises(TypeError, match="matmul: A has dtype float64"):
        matmul(a.astype(np.float64), a.T)
    with pytest.raises(TypeError, match="matmul: B has dtype complex64"):
        matmul(a, a.T.astype(np.complex64))
    with pytest.raises(TypeError, match="matmul: A and B must have the same dtype, got float32 and float16"):
        matmul(a, a.T.astype(np.float16))
    with pytest.raises(ValueError, match="matmul: kernel must be one of auto, hopper, .* got 'fast'"):
        matmul(a, a.T, kernel="fast")
    with pytest.raises(TypeError, match="matmul: kernel='tc_sm80' .* got float32 \\(use 'simt'\\)"):
        matmul(a, a.T, kernel="tc_sm80")
    with pytest.raises(ValueError, match=r"matmul: A must be a matrix \(2 dimensions\), got shape \(3,\)"):
        matmul(np.zeros(3, np.float32), a)
    with pytest.raises(ValueError, match=r"matmul: out must be a float32 \(4, 4\) array, got float64 \(4, 4\)"):
        matmul(a, a.T, out=np.zeros((4, 4)))
    with pytest.raises(ValueError, match=r"matmul: out must be a float32 \(4, 4\) array, got float32 \(4, 3\)"):
        matmul(a, a.T, out=a)
    with pytest.raises(CapabilityError, match="matmul: kernel='hopper' .* needs an sm_90 GPU .* the simulator"):
        matmul(a.astype(np.float16), a.T.astype(np.float16), kernel="hopper")


def test_pick_follows_the_gpu():
    """kernel="auto": on sm_90 the Hopper kernel, sm_80+ the mma.sync m16n8k16 step (cp.async), a T4 the
    m16n8k8 step for f16 and exact f32 copies on the SIMT kernel for bf16 (m16n8k8 takes no bf16 on sm_75),
    f32 always SIMT; the simulator runs no Hopper kernel (PTX ISA: mma.m16n8k16 and cp.async need sm_80,
    mma.m16n8k8 sm_75, wgmma sm_90a)."""
    f16, f32 = (describe(np.zeros((8, 8), t), "A") for t in (np.float16, np.float32))
    bf16 = describe(np.zeros((8, 8), np.uint16), "A", dtype=BFloat16)
    name = lambda kernel, a, device: M.pick(kernel, a, a, None, device).name  # noqa: E731
    assert [name("auto", f16, d) for d in (T4, A100, H100, SIM)] == ["tc_sm75", "tc_sm80", "hopper", "tc_sm80"]
    assert [name("auto", bf16, d) for d in (T4, A100, H100, SIM)] == ["simt", "tc_sm80", "hopper", "tc_sm80"]
    assert [name("auto", f32, d) for d in (T4, H100)] == ["simt", "simt"]
    assert name("tc_sm80", f16, H100) == "tc_sm80" and name("simt_warptile", bf16, T4) == "simt_warptile"
    with pytest.raises(CapabilityError, match=r"matmul: kernel='tc_sm80' .* \(sm_80 or newer\); this is Tesla T4"):
        M.pick("tc_sm80", f16, f16, None, T4)
    with pytest.raises(CapabilityError, match=r"matmul: kernel='auto' .* tc_sm75 needs .* \(sm_75 or newer\)"):
        M.pick("auto", f16, f16, None, DeviceInfo(simulator=False, name="GTX 1080", cc=(6, 1)))
    with pytest.raises(TypeError, match="matmul: kernel='tc_sm75' .* takes float16 inputs, got bfloat16"):
        M.pick("tc_sm75", bf16, bf16, None, T4)
    with pytest.raises(CapabilityError, match="hopper needs an sm_90 GPU .* A100"):
        M.pick("hopper", f16, f16, None, A100)


def test_describe_reads_an_array_once():
    """An Operand's facts from NumPy's strides: majorness relative to the mode the product runs along (A's
    mode 1, B's mode 0), the pitch between contiguous rows, the address's alignment, the memory span."""
    x = np.zeros((6, 16), np.float16)
    a = describe(x, "A")
    assert (a.library, a.dtype, a.shape, a.strides, a.major, a.pitch) == ("numpy", Float16, (6, 16), (32, 2),
                                                                          Major.K, 32)
    assert a.array.dtype == np.uint16 and not a.on_device and a.stream == 0
    assert a.span == (x.ctypes.data, x.ctypes.data + x.nbytes)
    assert describe(x, "B", k=0).major == Major.MN                      # a row-major B: N contiguous
    assert describe(np.asfortranarray(x), "B", k=0).major == Major.K     # a column-major B: K contiguous
    f = describe(np.asfortranarray(x), "A")
    assert (f.major, f.pitch) == (Major.MN, 12)                         # columns of 6 halves, 12 bytes apart
    assert describe(x[:, ::2], "A").major is None and describe(x[:, ::2], "A").pitch is None
    assert describe(x[:, 1:], "A").align == 2 and describe(x[:, 8:], "A").align >= 16
    t = describe(x, "B", k=0).T                                         # Bt (N, K): the same memory
    assert (t.shape, t.strides, t.k, t.major, t.pitch) == ((16, 6), (2, 32), 1, Major.MN, 32)
    assert describe(x[:3], "A").overlaps(describe(x[2:], "B")) and not describe(x[:3], "A").overlaps(
        describe(x[3:], "B"))
    assert describe(np.zeros((3, 5), np.float32), "out").dtype is Float32


def test_what_a_kernel_can_read_in_place():
    """The rules of the copies' absence, on device arrays: a tensor map needs a pitch of 16-byte multiples and a
    16-byte-aligned address (cuTensorMapEncodeTiled), whatever the extents; a 16-byte loader (cp.async,
    ldmatrix) also needs the rows themselves 16-byte multiples; packed is row-major at exactly a shape."""
    from numba import cuda
    d = lambda x, k=1: describe(cuda.to_device(x), "A", k=k)  # noqa: E731
    wide = d(np.zeros((6, 16), np.float16))
    assert wide.on_device and wide.library == "numba" and wide.tma_readable and wide.in_16_byte_rows
    assert wide.packed((6, 16)) and not wide.packed((6, 8))
    narrow = d(np.zeros((6, 10), np.float16))                           # 20-byte rows
    assert not narrow.tma_readable and not narrow.in_16_byte_rows
    view = describe(cuda.to_device(np.zeros((6, 16), np.float16))[:, :10], "A")   # K = 10 in 32-byte rows
    assert view.tma_readable and not view.in_16_byte_rows and not view.packed((6, 10))
    assert d(np.zeros((8, 10), np.float16, order="F")).tma_readable              # MN-major, 16-byte columns
    assert not describe(np.zeros((6, 16), np.float16), "A").tma_readable        # host memory


def test_matmul_stages_what_a_tensor_map_cannot_read():
    """An operand with rows that are not 16-byte multiples is copied into a buffer whose rows are 128 bytes
    apart, in the same order (row- or column-major) or K-major where asked (the FP8 family's), and the kernel
    reads the view of its real shape. A source whose pitch allows narrower words than the buffer's is copied
    in words both allow."""
    from numba import cuda
    from kernels.arrays import transposed
    from kernels.hopper import operand_major, tma_readable
    from kernels.lib.wgmma import rows_of_128_bytes, tma_view
    x = np.arange(5 * 13, dtype=np.uint16).reshape(5, 13)
    wide = np.arange(5 * 10, dtype=np.uint16).reshape(5, 10)
    for d, want, asked, major in ((cuda.to_device(x), x, None, "K"),
                                  (cuda.to_device(np.asfortranarray(x)), x, None, "MN"),
                                  (cuda.to_device(wide)[:, :8], wide[:, :8], None, "K"),   # rows 16 bytes, 20 apart
                                  (cuda.to_device(np.asfortranarray(x)), x, Major.K, "K")):
        v, copy = tma_view(describe(d, "A", dtype=BFloat16), True, major=asked)
        copy()
        assert v.shape == want.shape and operand_major(v) == major and tma_readable(v)
        host = (v if major == "K" else transposed(v)).copy_to_host()
        assert np.array_equal(host if major == "K" else host.T, want)
    ok = cuda.to_device(np.zeros((4, 16), np.uint16))
    assert tma_view(describe(ok, "A", dtype=BFloat16), False) == (ok, None)
    c = rows_of_128_bytes(4, 3, Float32, Major.K)
    assert c.shape == (4, 3) and c.strides == (128, 4)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_c_buffer_reads_c_in_whole_pairs(dtype):
    """Where the epilogue reads C (beta != 0), a thread's two columns at once, an odd N goes through a buffer
    one column wider: seeded with C and zeros, the epilogue's read of the last pair inside it, the crop
    copying back N columns only (the H200's epilogue fuzz: out (454, 181) float16 and (162, 551) float32 with
    beta were refused)."""
    from numba import cuda
    from cutelite.numeric import numeric
    from kernels.lib import staging
    from kernels.lib.wgmma import c_buffer
    t = numeric(np.dtype(dtype).name)
    bits = np.uint16 if dtype == np.float16 else np.float32           # what the device array holds
    host = np.arange(5 * 9, dtype=dtype).reshape(5, 9)
    big = cuda.to_device(np.zeros((5, 16), dtype))
    big[:, :9] = host
    for out in (cuda.to_device(host), big[:, :9]):          # rows of 9 values, packed or 16 values apart
        c = describe(out, "out", dtype=t)
        cv, after, result = c_buffer(c, 5, 9, t, True, (), 0)
        assert result is c.array and cv.shape == (5, 10) and cv.strides[0] % 128 == 0 and len(after) == 1
        for copy in staging.seeded(c, cv):
            copy()
        want = np.zeros((5, 10), dtype)
        want[:, :9] = host
        assert np.array_equal(cv.copy_to_host(), want.view(bits))       # the bits the kernel reads
        cv[:, 9] = 7                                          # the extra column is never copied back
        after[0]()
        assert np.array_equal(out.copy_to_host(), host)
    cv, after, result = c_buffer(describe(big[:, :8], "out", dtype=t), 5, 8, t, True, (), 0)
    assert cv.shape == (5, 8) and after == []                 # even N, 16-byte rows: written in place
    cv, _, _ = c_buffer(describe(cuda.to_device(host), "out", dtype=t), 5, 9, t, False, (), 0)
    assert cv.shape == (5, 9)                                 # no beta: nothing reads C


def test_matmul_prepares_only_device_calls_with_out():
    """A call is replayed only when A, B and out are device arrays (their addresses, shapes, strides and
    dtypes are the key); NumPy operands or no `out` give no key."""
    a, b, c = np.zeros((8, 8), np.float16), np.zeros((8, 8), np.float16), np.zeros((8, 8), np.float32)
    assert M._call_key(a, b, c, "auto") is None

    class Dev:      # what a device array shows the key: its __cuda_array_interface__
        def __init__(self, ptr, shape, typestr):
            self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape, "strides": None,
                                             "typestr": typestr, "version": 3}

    da, db, dc = Dev(1 << 20, (8, 8), "<f2"), Dev(2 << 20, (8, 8), "<f2"), Dev(3 << 20, (8, 8), "<f4")
    assert M._call_key(da, db, None, "auto") is None
    key = M._call_key(da, db, dc, "auto")
    assert key is not None and key == M._call_key(da, db, dc, "auto") and key != M._call_key(db, da, dc, "auto")
    dc.__cuda_array_interface__["stream"] = 7       # out on another stream: matmul synchronizes, no replay
    assert M._call_key(da, db, dc, "auto") is None


def test_a_prepared_call_launches_only_what_it_prepared(monkeypatch):
    """Issue 30: the call a kernel family prepares (what matmul keeps and runs again for the same device A, B and
    out) is launches prepared once, nothing else: each copy around the kernel is one launch (runtime.prepared_launch:
    one driver call on a GPU; played here by a stand-in that counts and launches through the simulator), and
    running the call again prepares nothing. tc_sm80 on operands with rows of 40 and 144 bytes pads A and B and
    crops C (three copies); simt on float16 widens and pads each operand in one copy, launches its kernel and
    crops C (four launches). The products are right on every run."""
    from numba import cuda
    from kernels import runtime
    from kernels.lib import simt as simt_family
    from kernels.lib import staging
    prepared, launched = [], []

    def counting(kernel, args, grid, block, nbytes, stream=0, cluster=None):
        prepared.append(kernel)

        def go():
            launched.append(kernel)
            kernel[grid, block, stream](*args)
        return go

    monkeypatch.setattr(runtime, "prepared_launch", counting)
    monkeypatch.setattr(simt_family, "prepared_launch", counting)
    rng = np.random.default_rng(4)
    A = rng.standard_normal((40, 20)).astype(np.float16)
    B = rng.standard_normal((20, 72)).astype(np.float16)
    a, b = describe(cuda.to_device(A), "A"), describe(cuda.to_device(B), "B", k=0)
    pad, crop, widen = staging._copy_pad, staging._copy_crop, staging._f16_to_f32
    for kernel, want in (("tc_sm80", [pad, pad, crop]),
                         ("simt", [widen, widen, simt_family.SIMT.launcher(None), crop])):
        out = cuda.to_device(np.full((40, 72), np.nan, np.float32))
        del prepared[:]
        call = M.FAMILIES[kernel].prepare(a, b, describe(out, "out"))
        assert len(prepared) == len(want), kernel
        for _ in range(2):
            out.copy_to_device(np.full((40, 72), np.nan, np.float32))
            del launched[:]
            assert call() is out
            _check(out.copy_to_host(), A, B, 1e-5)
            assert launched == want and len(prepared) == len(want), kernel


def test_a_16_bit_bias_is_widened_and_padded_in_one_copy():
    """A kernel that reads its bias as float32 (the SIMT kernel; any kernel for a 16-bit bias per row) gets it
    from one copy: the float16 values exactly, then zeros past them to a multiple of 8 of D's rows."""
    from numba import cuda
    from kernels.lib.epilogue import fuse
    values = np.array([1.5, -2.0, 3.140625, 0.0078125, -65504.0], np.float32)     # float16 values
    bias = cuda.to_device(values.astype(np.float16).reshape(5, 1))
    f = fuse(Float32, 1, 0, bias, None, 5, 7, None, True)
    args, copies = f.arguments(cuda.device_array((12, 8), np.float32), bias_f32=True)
    assert f.epi.bias == "row" and len(copies) == 1
    copies[0]()
    assert np.array_equal(args[0].copy_to_host()[:, 0], np.concatenate([values, np.zeros(7, np.float32)]))


@pytest.mark.parametrize("rows, cols", [(8, 48), (524280, 48), (524288, 48), (600064, 48), (600000, 40),
                                        (600064, 64), (2**26, 8), (40, 3_000_000)])
def test_copies_launch_within_the_grid_limits(rows, cols):
    """Issue 30: the staging, padding, cropping and widening copies of a 600,000-row operand (f32
    600000x40x48, f16 600000x40x50) launched ceil(M / 8) blocks down gridDim.y, past CUDA's 65,535 (CUDA C++
    Programming Guide, compute capabilities: gridDim.x up to 2^31 - 1, y and z up to 65,535; 1,024 threads a
    block). The grid the copies compute stays inside, and its threads reach every row."""
    from kernels.lib.staging import grid2
    (gx, gy), (bx, by) = grid2((rows, cols))
    assert 1 <= gx <= 2**31 - 1 and 1 <= gy <= 65535 and bx * by <= 1024
    assert gx * bx >= cols
    steps = -(-rows // (gy * by))                     # the row loop's trips: every row reached
    assert gy * by * steps >= rows and (steps == 1 or gy == 65535)


def test_copies_loop_over_the_rows_past_the_grid(monkeypatch):
    """The copies with the grid's height cut to 2 blocks (16 rows): each thread steps down the rows, and
    matmul's padded, widened and cropped path (SIMT on f16, 77 rows) still computes the product."""
    from kernels.lib import staging
    monkeypatch.setattr(staging, "MAX_GRID_Y", 2)
    assert staging.grid2((77, 40))[0] == (2, 2)
    rng = np.random.default_rng(3)
    A = rng.standard_normal((77, 40)).astype(np.float16)
    B = rng.standard_normal((40, 50)).astype(np.float16)
    for name in ("simt", "tc_sm80"):
        _check(matmul(A, B, kernel=name), A, B, 1e-5)


def test_bf16_widening_moves_the_bits():
    """The SIMT family and a bf16 bias widen bfloat16 device arrays to float32 on the device: the value of each
    bf16 (its bits in the high half of a float32), not the number its bits spell as an integer. Both int16
    (PyTorch's view of bf16) and uint16 bits, against kernels.numeric.decode."""
    from numba import cuda
    from kernels.lib import staging
    bits = np.array([[0x3F80, 0xC000, 0x4049, 0x0001, 0x7F80, 0xFF7F]], np.uint16)
    for held in (bits, bits.view(np.int16)):
        buf, widen = staging.widen_to_f32(cuda.to_device(held), True)
        widen()
        assert np.array_equal(buf.copy_to_host(), decode(bits, BFloat16).astype(np.float32))
