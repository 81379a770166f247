"""Chapters 7 and 8's explorers (cutelite.teach.explorers.tile_pipeline_result and gmma_tma_result) and what they
compute with (cutelite.teach.gemm, cutelite.tensorcore), against independent expectations: the kernels built
from the same configuration, the recorded H100 figures, the CUDA guide's per-SM limits with the CUDA Occupancy
Calculator's rules (cuda_occupancy.h) worked by hand, the kernels' own loop as read from their source, compiled
C++ CuTe (tests/fixtures/gmma_cpp.txt), and the TMA's 128-byte swizzle as the CUDA guide states it."""

import json
import re

import pytest

from cutelite import Layout
from cutelite.teach import live
from cutelite.teach.cpp_recorded import CPP_GMMA, cpp_desc_fields
from cutelite.teach.explorers import gmma_tma_result, tile_pipeline_result
from cutelite.teach.gemm import cta_limits, occupancy, recorded_registers, smem_wavefronts, stage_timeline
from cutelite.teach.records import load
from cutelite.tensorcore import objects


# ---- chapter 7: the numbers the explorer shows ----------------------------------------------------------------
@pytest.fixture(scope="module")
def rungs():
    """The tensor-core steps of the ladder and the configurations benchmarked, built in the simulator."""
    import kernels
    kernels.setup(verbose=False)
    from kernels.gemm import EXPLORE, LADDER
    return [r for r in LADDER + EXPLORE if r.dtype == "f16"]


def _key(kernel):
    c, (_, wm, wn, _) = kernel.config, kernel.objects.mma.thr_layout_vmnk.shape
    name = re.match(r"def gemm_(\w+)\(", kernel.source).group(1)
    return (name, c["BM"], c["BN"], c["BK"], c["stages"], (wm, wn), kernel.min_blocks)


def test_recorded_registers_are_the_record(rungs):
    """The record says how it built every tensor-core kernel it has registers for: as the step of that name
    builds it; the explorer finds each configuration's registers there, and none for another."""
    record = load("kernels/gemm")
    regs = {n: r for n, _, _, r in record["rows"] if r is not None}
    built = {r.recorded: _key(r.kernel) for r in rungs if r.recorded in regs}
    assert {n: tuple(c.values()) for n, c in record["configs"].items()} == built
    assert all(recorded_registers(*key) == regs[n] for n, key in built.items())
    assert recorded_registers("tc_sm80", 128, 128, 32, 5, (2, 2), 2) is None


def test_explorer_shared_memory_is_the_kernels(rungs):
    """The shared memory the explorer prints for a rung's configuration is what the built kernel asks for."""
    for r in rungs:
        name, BM, BN, BK, stages, (wm, wn), blocks = _key(r.kernel)
        text, _ = tile_pipeline_result(name, "float16", f"({BM},{BN},{BK})", str(stages), f"({wm},{wn})", str(blocks))
        assert f"= {r.kernel.smem_bytes} bytes" in text, (r.name, text)
        assert f"registers per thread: {recorded_registers(*_key(r.kernel))} (recorded" in text


def test_explorer_objects_are_the_kernels(rungs):
    """The explorer builds the very objects the kernel was compiled from (cutelite.tensorcore.objects)."""
    r = rungs[1]
    o = r.kernel.objects
    text, _ = tile_pipeline_result("tc_sm80", "float16", "(128,128,32)", "4", "(2,2)", "2")
    for name in ("mma", "g2s_A", "g2s_B", "s2r_A", "s2r_B"):
        assert f"  {name:5s} = {getattr(o, name)!r}\n" in text
    assert f"  sA    = {o.sA}   (BM, BK, stages)\n" in text


def test_cta_limits_by_hand():
    """Worked with the CUDA guide's limits (H100 228 KiB of shared memory an SM, 1 KiB reserved a CTA; A100 164
    KiB; T4 64 KiB, none reserved; 64, 64, 32 warps; 32, 32, 16 CTAs) and cuda_occupancy.h's rules (registers to
    a warp in units of 256, within 4 sub-partitions of 16384; shared memory in units of 128 bytes, 256 on 7.x)."""
    # tc_sm80 at 128x128x32, 4 stages: 212 registers -> 6784 a warp -> 6912; 16384 // 6912 = 2 warps a
    # sub-partition, 8 an SM, 2 CTAs of 4 warps. Shared: 65536 + 1024 = 66560 a CTA: H100 233472 // 66560 = 3,
    # A100 167936 // 66560 = 2.
    assert cta_limits(212, 128, 65536, "H100") == {"registers": 2, "shared memory": 3, "warps": 16, "CTAs": 32}
    assert cta_limits(212, 128, 65536, "A100") == {"registers": 2, "shared memory": 2, "warps": 16, "CTAs": 32}
    # tc_sm75 on a T4: 254 -> 8128 -> 8192 a warp: 2 a sub-partition, 8 warps = 2 CTAs; 65536 // 32768 = 2; 32 // 4
    assert cta_limits(254, 128, 32768, "T4") == {"registers": 2, "shared memory": 2, "warps": 8, "CTAs": 16}
    # 70000 bytes: more than a T4 CTA may have (64 KiB), and on an H100 70000 + 1024 -> 71040 (128-byte units): 3
    assert cta_limits(None, 128, 70000, "T4") == {"shared memory": 0, "warps": 8, "CTAs": 16}
    assert cta_limits(None, 128, 70000, "H100")["shared memory"] == 233472 // 71040 == 3
    # the sub-partitions decide: 110 registers -> 3584 a warp; 16384 // 3584 = 4 a sub-partition, 16 an SM
    # (65536 // 3584 would say 18): one-warp CTAs, 16 of them
    assert cta_limits(110, 32, 0, "H100")["registers"] == 16
    # a T4's shared memory comes in 256-byte units: 100 bytes take 256, 65536 // 256 = 256
    assert cta_limits(None, 32, 100, "T4")["shared memory"] == 256
    assert occupancy(212, 128, 65536, "H100") == (2, 8, "registers")
    assert cta_limits(None, 2048, 0, "H100")["warps"] == 0                      # more than 1024 threads
    with pytest.raises(ValueError, match="cta_limits: unknown GPU V100; known: T4, A100, H100"):
        cta_limits(128, 128, 0, "V100")


def test_stage_timeline_is_the_kernels_loop():
    """tc_sm80's loop (kernels/gemm/tc_sm80.py): the prologue loads k-tile s into stage s for s < stages - 1;
    iteration kt reads stage `read` = kt % stages and loads k-tile kt + stages - 1 into stage `write`, which
    starts at stages - 1 and advances by one each iteration."""
    for stages in (2, 3, 4, 7):
        n = 2 * stages + 3
        rows = stage_timeline("tc_sm80", stages, n)
        assert [r[0] for r in rows] == [f"stage {s}" for s in range(stages)]
        got = {(col, s): cell for s, (_, cells) in enumerate(rows) for col, cell in enumerate(cells)}
        want = {}
        for s in range(stages - 1):
            if s < n:
                want[0, s] = (s, "issued")
        read, write = 0, stages - 1
        for kt in range(n):
            want[1 + kt, read] = (kt, "read")
            if kt + stages - 1 < n:
                want[1 + kt, write] = (kt + stages - 1, "issued")
            read, write = (read + 1) % stages, (write + 1) % stages
        for key, cell in got.items():
            if key in want:
                assert cell == want[key], (stages, key)
            elif cell is not None:           # in flight: issued in an earlier column, read in a later one
                col, kt = key[0], cell[0]
                assert cell[1] == "in flight" and kt - (stages - 1) < col - 1 < kt, (stages, key, cell)
    assert stage_timeline("tc_sm80_prefetch", 3, 5) == stage_timeline("tc_sm80", 3, 5)
    with pytest.raises(ValueError, match="2 stages or more"):
        stage_timeline("tc_sm80", 1, 4)


def test_stage_timeline_of_the_t4_kernel():
    """tc_sm75 (kernels/gemm/tc_sm75.py): before the loop k-tile 0 is fetched and stashed into buffer 0;
    iteration kt fetches k-tile kt + 1 into registers, reads buffer kt % 2, stashes into the other at its end."""
    rows = dict(stage_timeline("tc_sm75", 2, 4))
    assert rows["registers"] == [None, (1, "loading"), (2, "loading"), (3, "loading"), None]
    assert rows["buffer 0"] == [(0, "stored"), (0, "read"), (2, "stored"), (2, "read"), None]
    assert rows["buffer 1"] == [None, (1, "stored"), (1, "read"), (3, "stored"), (3, "read")]


def test_smem_wavefronts_by_hand_for_a_wide_tile():
    """128x256x32 on 2 x 4 warps (256 threads): a thread writes 128 x 32 / 256 = 16 halves of A (2 16-byte
    writes a thread, so a warp's 2 instructions of 4 phases each: 8 wavefronts) and 32 of B; every ldmatrix at
    its ideal (one wavefront per 8x8 matrix, 4 an x4) through the swizzles."""
    o = objects(128, 256, 32, 4, (2, 4))
    cost = smem_wavefronts(o)
    assert cost["A: 16-byte writes"] == (2, 8, 8) and cost["B: 16-byte writes"] == (4, 16, 16)
    assert cost["A: ldmatrix"] == (8, 32, 32) and cost["B: ldmatrix"] == (8, 32, 32)


def test_tile_pipeline_text_of_the_ladders_kernel():
    text, (rows, title) = tile_pipeline_result()
    assert "needs sm_80" in text and "shared memory per CTA: sA 32768 + sB 32768 = 65536 bytes" in text
    table = dict(re.findall(r"^  (by [a-z ]+?|resident CTAs)\s{2,}(.*)$", text, re.M))
    assert table["by registers"].split() == ["-", "2", "2"] and table["by shared memory"].split() == ["-", "2", "3"]
    assert table["resident CTAs"].split() == ["-", "2", "(8", "warps)", "2", "(8", "warps)"]
    assert "need sm_80; a T4 is sm_75" in text
    # chapter 7's counts (tests/test_gemm_chapter.py): unswizzled, A's ldmatrix rows collide 4 ways, B's 8 ways
    assert re.search(r"^  A: ldmatrix +8 +32 +128 +32$", text, re.M)
    assert re.search(r"^  B: ldmatrix +8 +32 +256 +32$", text, re.M)
    assert re.search(r"^  B: 16-byte writes +4 +16 +16 +16$", text, re.M)
    assert "cp.async.wait_group 2" in text and len(rows) == 4 and title.startswith("tc_sm80:")


def test_tile_pipeline_refusals_and_errors():
    refused = tile_pipeline_result("tc_sm80", "float16", "(512,128,32)", "4", "(2,2)", "2")
    assert refused == ("Refused: a 512 x 128 x 32 tile, 4 stages, 2 x 2 warps: the explorer takes BM and BN up to 256, "
                       "BK up to 128, 1 to 8 stages and at most 1024 threads\n", None)
    assert tile_pipeline_result(warps="(8,8)")[0].startswith("Refused:")
    assert tile_pipeline_result(stages="1")[0] == ("ValueError: tc_sm80: a cp.async pipeline needs 2 stages or more "
                                                   "(it waits with cp.async.wait_group stages - 2), got 1\n")
    assert tile_pipeline_result("tc_sm75", "bfloat16")[0].startswith("ValueError: objects: no sm75 atom for bfloat16")
    assert tile_pipeline_result(tile="(128,128)")[0].startswith("ValueError: the tile (BM, BN, BK) must be 3")
    assert tile_pipeline_result(stages="4x")[0] == "ValueError: stages must be a whole number, got '4x'\n"
    assert tile_pipeline_result("tc_sm80_prefetch", tile="(128,128,16)")[0].startswith(
        "ValueError: tc_sm80_prefetch: BK must hold two k-blocks")
    assert tile_pipeline_result("tc_sm90")[0].startswith("ValueError: unknown kernel 'tc_sm90'")
    text = tile_pipeline_result("tc_sm80", "bfloat16")[0]
    assert "not recorded for this configuration (the accumulators alone take 128)" in text
    assert "  by registers" not in text


# ---- chapter 8: descriptors and boxes ---------------------------------------------------------------------------
def _descriptor_rows(text):
    """(k-block, start, LBO, SBO, base offset, layout type, descriptor word) of each row of the table."""
    return [tuple(int(x) for x in m[:6]) + (int(m[6], 16),) for m in
            re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d) \w+\s+(0x[0-9a-f]{16})$", text, re.M)]


def test_gmma_stage_and_descriptors_are_cpps():
    text, _ = gmma_tma_result("K", "SW128", "half_t", "(128,64)")
    assert "  " + CPP_GMMA["layout GMMA::Layout_K_SW128_Atom<half_t>"] in text
    assert "  " + CPP_GMMA["tile tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>,(128,64))"] in text
    rows = _descriptor_rows(text)
    assert [r[0] for r in rows] == [0, 1, 2, 3]
    offset, word, lbo, sbo, ltype = cpp_desc_fields("desc K SW128 half_t (128,64) tile (128,16) block 1")
    assert rows[1][1] * 16 == offset and rows[0][2:] == (lbo, sbo, 0, ltype, word)
    _, word, lbo, sbo, ltype = cpp_desc_fields("desc MN SW128 half_t (64,64) tile (64,16) block 0")
    rows = _descriptor_rows(gmma_tma_result("MN", "SW128", "half_t", "(64,64)")[0])
    assert rows[0][2:] == (lbo, sbo, 0, ltype, word)


def test_tma_boxes_by_hand():
    """A K-major (128, 64) fp16 stage with the 128-byte swizzle is one box of 64 halves (128 bytes, the swizzle's
    span) by 128 rows, 16 KiB; k-tile kt's box starts at TMA coordinate (64 kt, 0), innermost (K) first. An
    MN-major one whose atoms are placed K first is two 64 x 64 boxes (64 halves of MN is the span), 8 KiB each,
    one after the other in shared memory, at (0, 64 kt) and (64, 64 kt)."""
    text, _ = gmma_tma_result("K", "SW128", "half_t", "(128,64)", "MN first", "(4096,4096)", "3")
    assert "box (64, 128) (innermost dimension first), 16384 bytes; 1 box a stage; expect_tx 16384 bytes" in text
    assert "    box 0: TMA coordinate (192, 0) -> byte 0 of the stage" in text
    text, _ = gmma_tma_result("MN", "SW128", "half_t", "(128,64)", "K first", "(4096,4096)", "2")
    assert "box (64, 64) (innermost dimension first), 8192 bytes; 2 boxes a stage; expect_tx 16384 bytes" in text
    assert "box 0: TMA coordinate (0, 128) -> byte 0 of" in text and "box 1: TMA coordinate (64, 128) -> byte 8192" in text
    text, _ = gmma_tma_result("MN", "SW128", "half_t", "(128,64)", "MN first")
    assert "box (64, 8)" in text and "16 boxes a stage" in text and "... 8 more, to box 15" in text


def test_chunks_follow_the_tma_128B_swizzle():
    """The CUDA guide's 128-byte TMA swizzle: within each 1024-byte block, the 16-byte chunk of a 128-byte row r
    is XORed with r % 8. Row m of a K-major (64, 64) fp16 stage is 128 bytes at 128 m: its chunk c lands in
    chunk 8 m + (c ^ (m % 8)). k-block 0 (16 halves) is chunks 0 and 1 of every row."""
    _, (chunks, outlined) = gmma_tma_result("K", "SW128", "half_t", "(64,64)", "MN first", "(256,256)", "0")
    assert chunks == [[8 * m + (c ^ (m % 8)) for m in range(64)] for c in range(8)]
    assert sorted(outlined) == [(c, m) for c in (0, 1) for m in range(64)]


def test_gmma_refusals_and_errors():
    assert gmma_tma_result(tile="(512,64)")[0].startswith("Refused: a 512 x 64 tile of 16-bit elements")
    assert gmma_tma_result(tile="(100,64)")[0].startswith("ValueError: tile_to_shape: block shape (_8,_64) does not "
                                                          "divide the target shape (_100,_64)")
    assert gmma_tma_result(k_tile="64")[0] == ("ValueError: k-tile 64 is out of range: the global tensor has 64 "
                                               "k-tiles of 64\n")
    assert gmma_tma_result(gmem="(4000,4096)")[0].startswith("ValueError: the global tensor (4000, 4096) is not")
    assert gmma_tma_result(swizzle="SW256")[0].startswith("ValueError: major must be one of K, MN, swizzle one of")
    assert gmma_tma_result(k_tile="-1")[0].startswith("ValueError: k-tile -1 is out of range")
    assert gmma_tma_result(gmem="(4096,99999999999)")[0].startswith("ValueError: make_tma_atom: global extent")


# ---- both: the live page shows the notebook's text and picture -------------------------------------------------
@pytest.mark.parametrize("kind, cls, values", [
    ("tile_pipeline", "TilePipelineExplorer", dict(kernel="tc_sm75", dtype="float16", tile="(64,128,32)", stages="3",
                                                   warps="(2,2)", min_blocks="1", a_major="M-major", b_major="K-major")),
    ("gmma_tma", "GmmaTmaExplorer", dict(major="MN", swizzle="SW64", dtype="bfloat16_t", tile="(64,32)",
                                         order="K first", gmem="(1024,512)", k_tile="5")),
])
def test_live_view_is_the_widgets(kind, cls, values):
    from cutelite.teach import widgets
    text, svg = getattr(widgets, cls)(**values).render()
    assert json.loads(live.view(kind, json.dumps(values))) == {"text": text, "svg": svg}
    assert svg.count("<rect") > 8 and not text.startswith(("ValueError", "Refused"))


def test_live_views_without_numpy():
    from test_engine_imports import run_blocked
    out = run_blocked("""
        import json
        from cutelite.teach import live
        for kind in ("tile_pipeline", "gmma_tma"):
            got = json.loads(live.view(kind, "{}"))
            print(kind, got["text"].splitlines()[0], got["svg"].count("<rect") > 8)
    """)
    assert out.splitlines() == ["tile_pipeline tc_sm80: cp.async global -> shared, ldmatrix, mma.sync m16n8k16 "
                                "(needs sm_80) True", "gmma_tma layout atom GMMA::Layout_K_SW128_Atom<half_t>: True"]


def test_the_ladders_layout_in_the_chunks_picture_is_swizzled():
    """Sanity of the picture's orientation: column x of a K-major stage is row x of the tile."""
    _, (chunks, _) = gmma_tma_result("K", "INTER", "half_t", "(8,16)", "MN first", "(64,64)", "0")
    # INTERLEAVE: 8 rows of 16 bytes (one core matrix) per 8 x 8 block; the two K halves 128 bytes apart
    assert chunks == [list(range(8)), list(range(8, 16))]
    assert Layout((8, 2), (1, 8))(3, 1) == chunks[1][3]
