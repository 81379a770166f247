"""Every printout of a CuTe object in seed articles 001, 002 and 004, reproduced by cutelite.

Expected values come from the seed's own text (whitespace normalised: the stored articles lost their line
breaks and column padding) or from C++ CuTe: tests/fixtures/seeds_cpp.txt is what the CUTLASS 4.2 headers
print for the same objects, compiled as host code (tests/fixtures/gen_seeds.sh). Where a seed shows a
picture instead of text, the C++ printout is the expectation. Seeds 000 and 003 are in test_tiled.py and
test_gemm_chapter.py.

What the comparison found: every seed printout agrees with C++ CuTe 4.2 (the seeds' print format is the
current one). Two seed statements are wrong, not their printouts: 001 says a thread passes "8 f16" of C to
mma.m8n8k4 .f32 (it passes 8 f32, as its own asm's "f" constraints say), and 001's store loop uses
`tid > 16` (lane 16 belongs with lanes 16-19; see test_001_store_loop_tid_gt_16).
"""

import pytest

from cutelite import (Layout, Swizzle, composition, dyn, format_layout, make_layout, make_mma_atom, make_tensor,
                      make_tiled_mma, size, cosize, tile_size, thr_size, fragment_of, quadpair_lanes)
import cpp_fixture
import ptx_fragments as ptx

RM8 = Layout((8, 8), (8, 1))
RM16 = Layout((8, 16), (16, 1))
HIER = Layout(((2, 2), (2, 2)), ((1, 4), (2, 8)))


def norm(text):
    """Whitespace-insensitive form: the seed texts kept their tokens but not their spacing."""
    return " ".join(text.split())


CPP = cpp_fixture.blocks("seeds_cpp.txt")


def row_patterns(L, unit):
    """The distinct permutations of `unit`-element units that rows of a swizzled row-major layout get."""
    pats = []
    for m in range(size(L, 0)):
        base = m * size(L, 1)
        pats.append(tuple((L(m, n) - base) // unit for n in range(0, size(L, 1), unit)))
    return pats


# ---- seed 004: Swizzle<B,M,S> --------------------------------------------------------------------------
SEED_004_RM8 = """(_8,_8):(_8,_1) 0 1 2 3 4 5 6 7 +----+----+----+----+----+----+----+----+ 0 | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | +----+----+----+----+----+----+----+----+ 1 | 8 | 9 | 10 | 11 | 12 | 13 | 14 | 15 | +----+----+----+----+----+----+----+----+ 2 | 16 | 17 | 18 | 19 | 20 | 21 | 22 | 23 | +----+----+----+----+----+----+----+----+ 3 | 24 | 25 | 26 | 27 | 28 | 29 | 30 | 31 | +----+----+----+----+----+----+----+----+ 4 | 32 | 33 | 34 | 35 | 36 | 37 | 38 | 39 | +----+----+----+----+----+----+----+----+ 5 | 40 | 41 | 42 | 43 | 44 | 45 | 46 | 47 | +----+----+----+----+----+----+----+----+ 6 | 48 | 49 | 50 | 51 | 52 | 53 | 54 | 55 | +----+----+----+----+----+----+----+----+ 7 | 56 | 57 | 58 | 59 | 60 | 61 | 62 | 63 | +----+----+----+----+----+----+----+----+"""

SEED_004_SW111 = """Sw<1,1,1> o _0 o (_8,_8):(_8,_1) 0 1 2 3 4 5 6 7 +----+----+----+----+----+----+----+----+ 0 | 0 | 1 | 2 | 3 | 6 | 7 | 4 | 5 | +----+----+----+----+----+----+----+----+ 1 | 8 | 9 | 10 | 11 | 14 | 15 | 12 | 13 | +----+----+----+----+----+----+----+----+ 2 | 16 | 17 | 18 | 19 | 22 | 23 | 20 | 21 | +----+----+----+----+----+----+----+----+ 3 | 24 | 25 | 26 | 27 | 30 | 31 | 28 | 29 | +----+----+----+----+----+----+----+----+ 4 | 32 | 33 | 34 | 35 | 38 | 39 | 36 | 37 | +----+----+----+----+----+----+----+----+ 5 | 40 | 41 | 42 | 43 | 46 | 47 | 44 | 45 | +----+----+----+----+----+----+----+----+ 6 | 48 | 49 | 50 | 51 | 54 | 55 | 52 | 53 | +----+----+----+----+----+----+----+----+ 7 | 56 | 57 | 58 | 59 | 62 | 63 | 60 | 61 | +----+----+----+----+----+----+----+----+"""

SEED_004_SW121 = """Sw<1,2,1> o _0 o (_8,_8):(_8,_1) 0 1 2 3 4 5 6 7 +----+----+----+----+----+----+----+----+ 0 | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | +----+----+----+----+----+----+----+----+ 1 | 12 | 13 | 14 | 15 | 8 | 9 | 10 | 11 | +----+----+----+----+----+----+----+----+ 2 | 16 | 17 | 18 | 19 | 20 | 21 | 22 | 23 | +----+----+----+----+----+----+----+----+ 3 | 28 | 29 | 30 | 31 | 24 | 25 | 26 | 27 | +----+----+----+----+----+----+----+----+ 4 | 32 | 33 | 34 | 35 | 36 | 37 | 38 | 39 | +----+----+----+----+----+----+----+----+ 5 | 44 | 45 | 46 | 47 | 40 | 41 | 42 | 43 | +----+----+----+----+----+----+----+----+ 6 | 48 | 49 | 50 | 51 | 52 | 53 | 54 | 55 | +----+----+----+----+----+----+----+----+ 7 | 60 | 61 | 62 | 63 | 56 | 57 | 58 | 59 | +----+----+----+----+----+----+----+----+"""

SEED_004_HIER = """((_2,_2),(_2,_2)):((_1,_4),(_2,_8)) 0 1 2 3 +----+----+----+----+ 0 | 0 | 2 | 8 | 10 | +----+----+----+----+ 1 | 1 | 3 | 9 | 11 | +----+----+----+----+ 2 | 4 | 6 | 12 | 14 | +----+----+----+----+ 3 | 5 | 7 | 13 | 15 | +----+----+----+----+"""

SEED_004_SW101 = """Sw<1,0,1> o _0 o ((_2,_2),(_2,_2)):((_1,_4),(_2,_8)) 0 1 2 3 +----+----+----+----+ 0 | 0 | 3 | 8 | 11 | +----+----+----+----+ 1 | 1 | 2 | 9 | 10 | +----+----+----+----+ 2 | 4 | 7 | 12 | 15 | +----+----+----+----+ 3 | 5 | 6 | 13 | 14 | +----+----+----+----+"""

SEED_004_SW10M1 = """Sw<1,0,-1> o _0 o ((_2,_2),(_2,_2)):((_1,_4),(_2,_8)) 0 1 2 3 +----+----+----+----+ 0 | 0 | 2 | 8 | 10 | +----+----+----+----+ 1 | 3 | 1 | 11 | 9 | +----+----+----+----+ 2 | 4 | 6 | 12 | 14 | +----+----+----+----+ 3 | 7 | 5 | 15 | 13 | +----+----+----+----+"""

PRINT_LAYOUTS = [  # (seed text or None where the seed shows an image, C++ block, the layout)
    (SEED_004_RM8, "print_layout rm8", RM8),
    (SEED_004_SW111, "print_layout Sw<1,1,1> rm8", composition(Swizzle(1, 1, 1), RM8)),
    (SEED_004_SW121, "print_layout Sw<1,2,1> rm8", composition(Swizzle(1, 2, 1), RM8)),
    (None, "print_layout Sw<2,1,2> rm8", composition(Swizzle(2, 1, 2), RM8)),
    (None, "print_layout Sw<3,1,3> rm8", composition(Swizzle(3, 1, 3), RM8)),
    (None, "print_layout rm16", RM16),
    (None, "print_layout Sw<3,1,3> rm16", composition(Swizzle(3, 1, 3), RM16)),
    (None, "print_layout Sw<3,1,4> rm16", composition(Swizzle(3, 1, 4), RM16)),
    (SEED_004_HIER, "print_layout hier", HIER),
    (SEED_004_SW101, "print_layout Sw<1,0,1> hier", composition(Swizzle(1, 0, 1), HIER)),
    (SEED_004_SW10M1, "print_layout Sw<1,0,-1> hier", composition(Swizzle(1, 0, -1), HIER)),
]


@pytest.mark.parametrize("seed, block, layout", PRINT_LAYOUTS, ids=[b for _, b, _ in PRINT_LAYOUTS])
def test_004_print_layout(seed, block, layout):
    got = format_layout(layout)
    assert got == CPP[block]                    # C++ CuTe 4.2, byte for byte
    if seed is not None:
        assert norm(got) == norm(seed)          # the seed's text (its spacing was lost)
        assert norm(CPP[block]) == norm(seed)   # and the seed agrees with C++


def test_004_masks_and_sw212():
    # The seed: for Swizzle<2,1,2> bit_msk = 0b11, yyy_msk = 0b11000, zzz_msk = 0b110; for Swizzle<3,1,4>
    # yyy_msk = 0b11100000, zzz_msk = 0b00001110. C++ agrees (masks block of the fixture).
    assert "yyy_msk 24 zzz_msk 6 msk_sft 2" in CPP["masks Sw<2,1,2>"]
    assert "yyy_msk 224 zzz_msk 14 msk_sft 4" in CPP["masks Sw<3,1,4>"]
    assert (Swizzle(2, 1, 2).yyy_msk, Swizzle(2, 1, 2).zzz_msk) == (0b11000, 0b110)
    assert (Swizzle(3, 1, 4).yyy_msk, Swizzle(3, 1, 4).zzz_msk) == (0b11100000, 0b00001110)
    for name in ("Sw<1,1,1>", "Sw<1,2,1>", "Sw<3,1,3>", "Sw<1,0,1>", "Sw<1,0,-1>", "Sw<0,1,2>"):
        b, m, s = (int(x) for x in name[3:-1].split(","))
        sw = Swizzle(b, m, s)
        assert CPP["masks " + name].split() == ["yyy_msk", str(sw.yyy_msk), "zzz_msk", str(sw.zzz_msk),
                                               "msk_sft", str(s)]
    # Sw<2,1,2> (an image in the seed): row r permutes its four column pairs by XOR with r % 4
    L = composition(Swizzle(2, 1, 2), RM8)
    assert [list(p) for p in row_patterns(L, 2)] == [[j ^ (r % 4) for j in range(4)] for r in range(8)]


def test_004_xor_table():
    # The seed's table of two 2-bit values XORed: rows and columns 0b00..0b11. Swizzle<2,0,2> applied to
    # 4y + z keeps y and replaces z with z ^ y, so (result & 3) is the table.
    seed = [[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]]
    cpp = [[int(x) & 3 for x in line.split()] for line in CPP["xor table Sw<2,0,2>(4y + z)"].splitlines()]
    assert cpp == seed
    assert [[Swizzle(2, 0, 2)(4 * y + z) & 3 for z in range(4)] for y in range(4)] == seed


def test_004_sw312_is_rejected():
    # The seed (nvcc): error: static assertion failed with "abs(SShift) must be more than BBits."
    # g++ words it "static assertion failed: ..."; the message is the same.
    msg = "abs(SShift) must be more than BBits."
    assert CPP["error Sw<3,1,2>"].strip() == "static assertion failed: " + msg
    with pytest.raises(ValueError, match=r"abs\(SShift\) must be more than BBits\."):
        Swizzle(3, 1, 2)
    # the seed's masks by hand, from swizzle.hpp's formulas: yyy 0b111000, zzz 0b001110, overlapping at bit 3
    B, M, S = 3, 1, 2
    yyy, zzz = ((1 << B) - 1) << (M + max(0, S)), ((1 << B) - 1) << (M - min(0, S))
    assert (yyy, zzz, yyy & zzz) == (0b111000, 0b001110, 0b1000)


def test_004_pattern_counts():
    # The seed: Sw<3,1,3> on 64 offsets shows only 4 of the 2^B = 8 patterns (one per 16 offsets = 2 rows);
    # on 8x16 all 8; Sw<3,1,4> repeats each pattern for 2^(S-B) = 2 rows.
    assert len(set(row_patterns(composition(Swizzle(3, 1, 3), RM8), 2))) == 4
    assert len(set(row_patterns(composition(Swizzle(3, 1, 3), RM16), 2))) == 8
    p = row_patterns(composition(Swizzle(3, 1, 4), RM16), 2)
    assert len(set(p)) == 4 and all(p[2 * k] == p[2 * k + 1] for k in range(4))


def test_004_b0_is_the_identity():
    # The seed: with B = 0 there is one pattern, the original order (C++: both masks are 0).
    assert "yyy_msk 0 zzz_msk 0" in CPP["masks Sw<0,1,2>"]
    assert [Swizzle(0, 1, 2)(i) for i in range(256)] == list(range(256))


# ---- seed 002: NVIDIA's CUTLASS 3 / CuTe blog ----------------------------------------------------------
SM70_NT = "SM70_8x8x4_F32F16F16F32_NT"
SA = Layout((64, 16), (17, 1))                      # 64x16 padded row-major smem for A
SB = Layout(((32, 3), 16), ((1, 512), 32))           # 96x16 interleaved col-major smem for B


def test_002_smem_layouts():
    for name, L in (("sA", SA), ("sB", SB)):
        text, cos = CPP[name].splitlines()
        assert str(L) == text and f"cosize {cosize(L)}" == cos


def test_002_tiled_mma_prints():
    one = make_tiled_mma(make_mma_atom(SM70_NT))
    four = make_tiled_mma(make_mma_atom(SM70_NT), Layout((2, 2), (2, 1)))
    for mma, block in ((one, "tiled_mma 1x1x1"), (four, "tiled_mma 2x2 row-major")):
        text, tile = CPP[block].rstrip("\n").rsplit("\n", 1)
        assert str(mma).rstrip("\n") == text.rstrip("\n")
        assert tile == "tile %d %d %d threads %d" % (tile_size(mma, 0), tile_size(mma, 1), tile_size(mma, 2),
                                                     thr_size(mma))
    # the blog: four atoms in a 2x2 row-major layout make "a one-warp 16x16x4 MMA"
    assert (tile_size(four, 0), tile_size(four, 1), tile_size(four, 2), thr_size(four)) == (16, 16, 4, 32)


def _latex_grid(tv, R, C, b):
    """The (thread, value) print_latex draws in each cell: the first to reach it (see gen_seeds.sh)."""
    first = {}
    for t in range(size(tv, 0)):
        for v in range(size(tv, 1)):
            first.setdefault(tv(t, v), f"T{t}V{v}")
    rows, cols = (C, R) if b else (R, C)
    return "\n".join(" ".join(first[j + R * i if b else i + R * j] for j in range(cols)) for i in range(rows))


def test_002_print_latex_sm70_nt():
    # Figure 5: print_latex(make_tiled_mma(SM70_8x8x4_F32F16F16F32_NT{})), its cells as text
    mma = make_tiled_mma(make_mma_atom(SM70_NT))
    tvs = (mma.get_layoutA_TV(), mma.get_layoutB_TV(), mma.get_layoutC_TV())
    assert [str(x) for x in tvs] == CPP["layout TV 1x1x1"].splitlines()
    for name, tv, b in (("C", tvs[2], False), ("A", tvs[0], False), ("B", tvs[1], True)):
        cols = 8 if name == "C" else 4
        cpp = "\n".join(line.strip() for line in CPP[f"print_latex {name} 1x1x1"].strip("\n").splitlines())
        assert _latex_grid(tv, 8, cols, b) == cpp


@pytest.mark.parametrize("tid", [0, 5, 31])
def test_002_partitions_of_sA_sB(tid):
    # the blog's tCsA = thr_mma.partition_A(sA) (MMA, MMA_M, MMA_K), tCsB (MMA, MMA_N, MMA_K), with the 2x2 MMA
    thr = make_tiled_mma(make_mma_atom(SM70_NT), Layout((2, 2), (2, 1))).get_slice(tid)
    for part, L, block in ((thr.partition_A, SA, "partition_A sA"), (thr.partition_B, SB, "partition_B sB")):
        p = part(make_tensor(L))
        assert f"{p.layout}\noffset {p.offset}" == CPP[f"{block} thread {tid}"].strip()


# ---- seed 001: mma.m8n8k4 fragments ---------------------------------------------------------------------
SM70_TN = make_mma_atom("SM70_8x8x4_F32F16F16F32_TN")   # .row.col, f32 accumulators: the seed's asm


def seed_a(lane, i):       # the seed: row = %laneid % 4 if %laneid < 16, (%laneid % 4) + 4 otherwise; col = i
    return (lane % 4 if lane < 16 else lane % 4 + 4), i


def seed_b(lane, i):       # the seed's kernel: col_b = tid % 4 (+4 from lane 16), b = B + col_b * 4 + i
    return i, (lane % 4 if lane < 16 else lane % 4 + 4)


def seed_c(lane, i):       # the seed: row = X (+4 from lane 16), X = (lane & 0b1) + (i & 0b10);
    x = (lane & 0b1) + (i & 0b10)                         # col = (i & 0b100) + (lane & 0b10) + (i & 0b1)
    return (x if lane < 16 else x + 4), (i & 0b100) + (lane & 0b10) + (i & 0b1)


def test_001_quad_pairs():
    # MMA1: lanes 0-3 and 16-19; MMA2: 4-7, 20-23; MMA3: 8-11, 24-27; MMA4: 12-15, 28-31
    seed = [list(range(4 * q, 4 * q + 4)) + list(range(16 + 4 * q, 20 + 4 * q)) for q in range(4)]
    assert [quadpair_lanes(q) for q in range(4)] == seed
    assert [[lane for lane in range(32) if ptx.quadpair(lane) == q] for q in range(4)] == seed
    assert CPP["ThrID TN"].strip() == "(_4,_2):(_1,_16)"   # CuTe's atom: quad-pair 0, lanes t%4 + 16*(t//4)


@pytest.mark.parametrize("operand, seed, mine, n", [("A", seed_a, ptx.a_m8n8k4, 4), ("B", seed_b, ptx.b_m8n8k4, 4),
                                                    ("C", seed_c, ptx.c_m8n8k4_f32, 8)])
def test_001_fragment_tables(operand, seed, mine, n):
    table = [[seed(lane, i) for i in range(n)] for lane in range(32)]
    # C++ CuTe's SM70 TN atom, quad-pair 0's lanes 0-3, 16-19 (logical threads 0-7)
    cpp = [[tuple(int(x) for x in rc.strip("()").split(",")) for rc in line.split()[1:]]
           for line in CPP[f"fragments {operand} TN"].strip().splitlines()]
    assert cpp == [table[lane] for lane in quadpair_lanes(0)]
    assert [[rc for _, rc in fragment_of(SM70_TN, operand, lane)] for lane in range(32)] == table
    assert [[mine(lane, i) for i in range(n)] for lane in range(32)] == table


def test_001_register_counts():
    # A and B: 4 f16 each, two to a b32 register ("r"); C/D: 8 values. The seed says C takes "8 f16", but
    # its asm (m8n8k4...f32.f16.f16.f32, "f" constraints) passes 8 f32: the accumulator type of the atom.
    assert (size(SM70_TN.LayoutA_TV, 1), size(SM70_TN.LayoutB_TV, 1), size(SM70_TN.LayoutC_TV, 1)) == (4, 4, 8)
    assert "f32.f16.f16.f32" in SM70_TN.ptx and SM70_TN.types[0] == "float32"


def test_001_store_loop_tid_gt_16():
    # The seed's store loop: row = (tid & 1) + (i & 2); if (tid > 16) row += 4. Only lane 16 stores
    # elsewhere than its fragment formula says: into rows 0 and 2, over lanes 0, 4, 8, 12's outputs.
    def seed_store(lane, i):
        row = (lane & 0b1) + (i & 0b10) + (4 if lane > 16 else 0)
        return row, (i & 0b100) + (lane & 0b10) + (i & 0b1)

    wrong = [(lane, i) for lane in range(32) for i in range(8) if seed_store(lane, i) != seed_c(lane, i)]
    assert [lane for lane, _ in wrong] == [16] * 8
    assert sorted(seed_store(16, i) for i in range(8)) == [(r, c) for r in (0, 2) for c in (0, 1, 4, 5)]
    # In the seed's kernel all four quad-pairs load the same rows of A and columns of B (row_a ignores the
    # quad-pair), so lanes 20, 24, 28 still write lane 16's elements correctly; the damage is a race on
    # rows 0 and 2, columns 0, 1, 4, 5 between the right value and lane 16's.
    right = {seed_c(lane, i) for lane in range(32) if lane != 16 for i in range(8)}
    assert len(right) == 64


def test_001_tensor_layouts():
    # 001's main() prints a_tensor (M, K):(K, 1), b_tensor (K, N):(1, K) and c_tensor (M, N) with
    # print_tensor; the article shows no output, so C++ is the reference for the layouts (run-time M, N, K).
    M, N, K = dyn(8), dyn(8), dyn(4)
    got = [make_layout((M, K), (K, dyn(1))), make_layout((K, N), (dyn(1), K)), make_layout((M, N))]
    assert [str(L) for L in got] == CPP["001 tensors"].split()
