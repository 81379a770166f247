"""The CuTe DSL versions of chapter 6's GEMM tile and chapter 7's best kernel (kernels/dsl/gemm_tile.py,
tc_sm80.py): built from the same objects as the Numba kernels (compared as functions with cutelite's), and
compiled by the DSL for sm_80 on this machine (no GPU needed) into the instructions their tiles call for.
Running and timing them needs a GPU: python -m kernels.dsl.bench. Skipped where the DSL is not installed."""

import pytest

from kernels.dsl import missing, trace

WHY = missing()
if WHY:
    pytest.skip(WHY, allow_module_level=True)

import kernels  # noqa: E402

kernels.setup(verbose=False)

import cutlass.cute as cute  # noqa: E402

from cutelite import downcast, size  # noqa: E402
from cutelite.dsl import pretty_str as cute_pretty  # noqa: E402
from kernels.dsl import gemm_tile, tc_sm80  # noqa: E402
from kernels.dsl.build import compile_gemm, instruction_mix  # noqa: E402
from kernels.gemm import tensorcore  # noqa: E402
from kernels.gemm.tc_sm80 import BEST  # noqa: E402
from kernels.tiled.mma import make_gemm_objects  # noqa: E402


def _offsets(f, n, points=512):
    return [int(f(i)) for i in range(0, n, max(1, n // points))]


def _size(x):
    return int(size(x))


def _dsl_objects(module):
    """What module.objects() builds, as plain data: TV layouts, tilers, shared-memory offsets and the
    swizzles (which the DSL puts on the shared-memory pointer: they act on byte addresses)."""
    def work():
        mma, g2s_A, g2s_B, s2r_A, s2r_B, sA, sB, *swizzles = module.objects()
        out = {"swizzles": [str(sw) for sw in swizzles]}
        out.update({f"mma {x}": _offsets(getattr(mma, f"tv_layout_{x}_tiled"), cute.size(getattr(mma, f"tv_layout_{x}_tiled")))
                    for x in "ABC"})
        for name, tc in (("g2s_A", g2s_A), ("g2s_B", g2s_B), ("s2r_A", s2r_A), ("s2r_B", s2r_B)):
            out[name] = (_offsets(tc.layout_tv_tiled, cute.size(tc.layout_tv_tiled)), tuple(cute.size(t) for t in tc.tiler_mn))
        out["sA"], out["sB"] = _offsets(sA, cute.size(sA)), _offsets(sB, cute.size(sB))
        return out
    return trace(work)


def _our_objects(o):
    """The same of cutelite's objects; a swizzled layout's swizzle on byte addresses is its downcast to
    bytes (2-byte halves: M one larger, chapter 4)."""
    out = {"swizzles": [cute_pretty(downcast(s, 2).layout_a) for s in (o.sA, o.sB) if hasattr(s, "layout_a")]}
    out.update({f"mma {x}": _offsets(getattr(o.mma, f"get_layout{x}_TV")(), _size(getattr(o.mma, f"get_layout{x}_TV")()))
                for x in "ABC"})
    for name in ("g2s_A", "g2s_B", "s2r_A", "s2r_B"):
        tc = getattr(o, name)
        out[name] = (_offsets(tc.layout_tv, _size(tc.layout_tv)), tuple(_size(t) for t in tc.tiler))
    sA, sB = (getattr(s, "layout_b", s) for s in (o.sA, o.sB))
    out["sA"], out["sB"] = _offsets(sA, _size(sA)), _offsets(sB, _size(sB))
    return out


def test_gemm_tile_is_built_from_chapter_6s_objects():
    assert _dsl_objects(gemm_tile) == _our_objects(make_gemm_objects("sm80"))


def test_tc_sm80_is_built_from_chapter_7s_objects():
    assert (tc_sm80.BM, tc_sm80.BN, tc_sm80.BK, tc_sm80.STAGES, tc_sm80.WARPS, tc_sm80.MIN_BLOCKS) == \
        tuple(BEST[k] for k in ("BM", "BN", "BK", "stages", "warps", "min_blocks"))
    o = tensorcore.objects(tc_sm80.BM, tc_sm80.BN, tc_sm80.BK, tc_sm80.STAGES, tc_sm80.WARPS, "sm80", "float16",
                           ("K", "MN"))
    assert _dsl_objects(tc_sm80) == _our_objects(o)


@pytest.mark.parametrize("module, mma_per_ktile", [(gemm_tile, 4), (tc_sm80, 64)])
def test_compiles_for_sm80_into_the_tiles_instructions(module, mma_per_ktile):
    """A thread's share of one k-tile: (warp tile M / 16) x (warp tile N / 8) x (BK / 16) mma.m16n8k16."""
    ptx = compile_gemm(module, arch="sm_80", keep_ptx=True).__ptx__
    assert ".target sm_80" in ptx and ".local" not in ptx           # no stack: nothing spilled
    n = instruction_mix(ptx)
    mmas = n["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"]
    assert mmas and mmas % mma_per_ktile == 0
    assert n["ldmatrix.sync.aligned.m8n8.x4.shared.b16"] and n["ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"]
    assert n["cp.async.cg.shared.global"]
