"""cutelite.gmma against compiled C++ CuTe (tests/fixtures/gmma_cpp.txt, made by gen_gmma.sh):
GMMA atoms and TiledMMAs print the same, layout atoms (and their tilings) print the same, descriptors
are bit-exact, and the layouts C++ refuses are refused here with C++'s static_assert text."""
import re

import pytest

import cpp_fixture

from cutelite import Layout, make_tiled_mma, size
from cutelite.gmma import (
    GMMA_ATOMS, GmmaSmemLayout, Layout_K_SW128_Atom, gmma_desc_blocks, make_gmma_atom, make_gmma_desc,
    make_gmma_layout_atom, tile_to_smem,
)
from cutelite.swizzle import Swizzle

BLOCKS = cpp_fixture.blocks("gmma_cpp.txt")
ATOMS = [k[len("atom "):] for k in BLOCKS if k.startswith("atom ")]
LAYOUTS = [k[len("layout "):] for k in BLOCKS if k.startswith("layout ")]
TILES = [k[len("tile "):] for k in BLOCKS if k.startswith("tile ")]
DESCS = sorted({k[len("desc "):].rsplit(" block ", 1)[0] for k in BLOCKS if k.startswith("desc ")})
REJECTS = [k[len("reject "):] for k in BLOCKS if k.startswith("reject ")]


def test_fixture_is_complete():
    assert len(ATOMS) == 66 and len(LAYOUTS) == 32 and len(TILES) == 16 and len(DESCS) == 41 and len(REJECTS) == 7


@pytest.mark.parametrize("name", ATOMS)
def test_atom_prints_as_cpp(name):
    assert str(make_gmma_atom(name)) == BLOCKS["atom " + name]
    assert GMMA_ATOMS[name] == make_gmma_atom(name)


def test_cpp_spelling_and_majors():
    a = make_gmma_atom("SM90::GMMA::MMA_64x128x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::MN>")
    assert (a.name, a.major_a, a.major_b) == ("SM90_64x128x16_F32F16F16_SS", "K", "MN")
    assert a.ptx == "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"
    assert str(a) == BLOCKS["atom SM90_64x128x16_F32F16F16_SS"]
    with pytest.raises(ValueError, match="Register source operand A must have K major layout"):
        make_gmma_atom("SM90_64x64x16_F32F16F16_RS<GMMA::Major::MN,GMMA::Major::K>")
    with pytest.raises(ValueError, match="N = 12"):
        make_gmma_atom("SM90_64x12x16_F32F16F16_SS")


@pytest.mark.parametrize("key", [k for k in BLOCKS if k.startswith("tiled ")])
def test_tiled_mma_prints_as_cpp(key):
    name = key.split()[1]
    assert str(make_tiled_mma(make_gmma_atom(name), Layout((2, 1, 1)))) == BLOCKS[key]


def test_accumulator_layout_is_a_bijection():
    """Every (m, n) of the 64 x N tile is held by exactly one (thread, value): PTX ISA's wgmma D fragment."""
    for n in (8, 64, 256):
        c = make_gmma_atom(f"SM90_64x{n}x16_F32F16F16_SS").LayoutC_TV
        seen = sorted(c(t, v) for t in range(128) for v in range(size(c, 1)))
        assert seen == list(range(64 * n))
        # PTX ISA: thread t, value v=(i0,i1,j) holds row 16*(t//32) + (t%32)//4 + 8*i1, col 8*j + 2*(t%4) + i0
        for t in (0, 5, 37, 127):
            for v in range(size(c, 1)):
                i0, i1, j = v % 2, (v // 2) % 2, v // 4
                row, col = 16 * (t // 32) + (t % 32) // 4 + 8 * i1, 8 * j + 2 * (t % 4) + i0
                assert c(t, v) == row + 64 * col


@pytest.mark.parametrize("name", LAYOUTS)
def test_layout_atom_prints_as_cpp(name):
    assert str(make_gmma_layout_atom(name)) + "\n" == BLOCKS["layout " + name]


def _tile_case(key):
    m = re.match(r"tile_to_shape\((GMMA::Layout_\w+_Atom<\w+>),\((\d+),(\d+)\)(,Step<_2,_1>)?\)$", key)
    atom = make_gmma_layout_atom(m.group(1))
    return atom, (int(m.group(2)), int(m.group(3))), ((1, 0) if m.group(4) else None)


@pytest.mark.parametrize("key", TILES)
def test_tile_to_smem_prints_as_cpp(key):
    atom, shape, order = _tile_case(key)
    tiled = tile_to_smem(atom, shape) if order is None else tile_to_smem(atom, shape, order)
    assert str(tiled) + "\n" == BLOCKS["tile " + key]


def _desc_case(name):
    m = re.match(r"(K|MN) (\w+) (\w+) \((\d+),(\d+)\)( Step<_2,_1>)? tile \((\d+),(\d+)\)$", name)
    if m:
        major, sw, ty = m.group(1), m.group(2), m.group(3)
        atom = make_gmma_layout_atom(f"GMMA::Layout_{major}_{sw}_Atom<{ty}>")
        shape = (int(m.group(4)), int(m.group(5)))
        smem = tile_to_smem(atom, shape, (1, 0)) if m.group(6) else tile_to_smem(atom, shape)
        return major, smem, (int(m.group(7)), int(m.group(8)))
    m = re.match(r"K plain half_t \(\((\d+),(\d+)\),\((\d+),(\d+)\)\):\(\((\d+),(\d+)\),\((\d+),(\d+)\)\) tile", name)
    v = [int(x) for x in m.groups()]
    lay = Layout(((v[0], v[1]), (v[2], v[3])), ((v[4], v[5]), (v[6], v[7])))
    return "K", GmmaSmemLayout(Swizzle(0, 4, 3), 16, lay), (64, 16)


@pytest.mark.parametrize("name", DESCS)
@pytest.mark.parametrize("base", [0, 1024 * 37])
def test_descriptor_is_bit_exact(name, base):
    """C++ answers start_addr 0 on the host; the start is (base + the tile's byte offset C++ printed) >> 4."""
    major, smem, tile = _desc_case(name)
    descs = gmma_desc_blocks(major, smem, tile, address=base)
    keys = [k for k in BLOCKS if k.startswith(f"desc {name} block ")]
    assert len(descs) == len(keys)
    for d, key in zip(descs, keys):
        offset_line, cpp = BLOCKS[key].split("\n", 1)
        offset = int(offset_line.split()[1])
        assert d.start_address == (base + offset) >> 4
        host = d.__class__(0, d.leading_byte_offset, d.stride_byte_offset, d.base_offset, d.layout_type)
        assert str(host) == cpp


def _reject_case(name):
    atom = Layout_K_SW128_Atom("half_t")
    cases = {
        "K SW128 half_t tile (64,32)": ("K", tile_to_smem(atom, (64, 64)), (64, 32)),
        "K SW128 half_t tile (4,16)": ("K", GmmaSmemLayout(atom.layout_a, 16, Layout((4, 16), (16, 1))), (4, 16)),
        "K plain half_t (64,16):(16,1)": ("K", GmmaSmemLayout(Swizzle(0, 4, 3), 16, Layout((64, 16), (16, 1))), (64, 16)),
        "K plain half_t (64,16):(1,64)": ("K", GmmaSmemLayout(Swizzle(0, 4, 3), 16, Layout((64, 16), (1, 64))), (64, 16)),
        "K SW128 as MN half_t": ("MN", tile_to_smem(atom, (64, 64)), (64, 16)),
        "MN SW128 half_t tile (64,32)": ("MN", tile_to_smem(make_gmma_layout_atom("Layout_MN_SW128_Atom<half_t>"),
                                                            (64, 64)), (64, 32)),
        "Sw<3,3,3> half_t": ("K", GmmaSmemLayout(Swizzle(3, 3, 3), 16, Layout((64, 16), (16, 1))), (64, 16)),
    }
    return cases[name]


@pytest.mark.parametrize("name", REJECTS)
def test_rejected_as_cpp(name):
    major, smem, tile = _reject_case(name)
    expected = BLOCKS["reject " + name].strip()
    if expected == "ACCEPTED":
        gmma_desc_blocks(major, smem, tile)
    else:
        with pytest.raises(ValueError, match=re.escape(expected)):
            gmma_desc_blocks(major, smem, tile)


def test_fields_that_do_not_fit_are_errors():
    atom = tile_to_smem(Layout_K_SW128_Atom("half_t"), (64, 64))
    with pytest.raises(ValueError, match="multiple of 16"):
        gmma_desc_blocks("K", atom, (64, 16), address=8)
    with pytest.raises(ValueError, match="14-bit field"):
        gmma_desc_blocks("K", atom, (64, 16), address=1 << 18)


def test_descriptor_bits_follow_the_ptx_isa():
    """PTX ISA matrix-descriptor format: 14-bit address >> 4 at bit 0, LBO at 16, SBO at 32, base offset at
    49, swizzle mode at 62 (1 = 128B)."""
    d = gmma_desc_blocks("K", tile_to_smem(Layout_K_SW128_Atom("half_t"), (64, 64)), (64, 16), address=0x400)[1]
    assert d.desc == (((0x400 + 32) >> 4) | (1 << 16) | (64 << 32) | (1 << 62))


@pytest.mark.parametrize("t, bits", [("half_t", 16), ("float", 32)])
def test_element_layout_is_the_128b_swizzle_in_elements(t, bits):
    # the TMA's and wgmma's 128-byte swizzle, as the CUDA programming guide states it: in row r of 128
    # bytes, 16-byte chunk c is stored at chunk c ^ (r % 8); rows are 128 bytes apart
    L = tile_to_smem(Layout_K_SW128_Atom(t), (64, 1024 // bits))
    per_row = 1024 // bits                      # elements in 128 bytes
    per_chunk = 128 // bits                     # elements in 16 bytes
    E = L.element_layout()
    for r in range(64):
        for c in range(per_row):
            byte = r * 128 + ((c // per_chunk) ^ (r % 8)) * 16 + (c % per_chunk) * bits // 8
            assert E(r, c) * bits // 8 == byte, (r, c)
