"""cutelite's 8-bit float GMMA pieces against compiled C++ CuTe and CUTLASS (tests/fixtures/gmma_fp8_cpp.txt,
made by gen_gmma_fp8.sh): the e4m3/e5m2 atoms and TiledMMAs print the same, their layout atoms (in 8-bit
units) and tilings print the same, descriptors are bit-exact, an MN-major request is refused with C++'s
static_assert text, and the blockwise scale-factor layouts are CUTLASS's."""
import re

import numpy as np
import pytest

import cpp_fixture

from cutelite import Layout, cosize, make_tiled_mma, size
from cutelite.gmma import GMMA_ATOMS, gmma_desc_blocks, make_gmma_atom, make_gmma_layout_atom, tile_to_smem
from cutelite.int_tuple import ceil_div
from cutelite.scales import scale_layout

BLOCKS = cpp_fixture.blocks("gmma_fp8_cpp.txt")


def _keys(kind):
    return [k[len(kind) + 1:] for k in BLOCKS if k.startswith(kind + " ")]


ATOMS, LAYOUTS, TILES, REJECTS, SCALES = (_keys(k) for k in ("atom", "layout", "tile", "reject", "scale"))
DESCS = sorted({k.rsplit(" block ", 1)[0] for k in _keys("desc")})


def _bare(text):
    """C++'s printed layout with its static marks dropped: _128 and 128 read alike."""
    return text.replace("_", "").strip()


def test_fixture_is_complete():
    assert (len(ATOMS), len(LAYOUTS), len(TILES), len(DESCS), len(REJECTS), len(SCALES)) == (160, 16, 8, 32, 5, 32)


@pytest.mark.parametrize("name", ATOMS)
def test_atom_prints_as_cpp(name):
    atom = make_gmma_atom(name)
    assert str(atom) == BLOCKS["atom " + name]
    assert GMMA_ATOMS[name] == atom and atom.Shape_MNK[2] == 32 and (atom.major_a, atom.major_b) == ("K", "K")


def test_names_types_and_ptx():
    a = make_gmma_atom("SM90::GMMA::MMA_64x256x32_F16E5M2E4M3_RS_TN")
    assert (a.name, a.source, a.types) == ("SM90_64x256x32_F16E5M2E4M3_RS_TN", "RS",
                                           ("float16", "float8_e5m2", "float8_e4m3fn", "float16"))
    assert a.ptx == "wgmma.mma_async.sync.aligned.m64n256k32.f16.e5m2.e4m3"
    assert repr(a) == "MMA_Atom<SM90_64x256x32_F16E5M2E4M3_RS_TN>"
    # every N that PTX's wgmma takes for 8-bit floats: the multiples of 8 up to 256, each pair, each accumulator
    assert len([n for n in GMMA_ATOMS if n.endswith("_TN")]) == 32 * 8 * 2
    # a request by majors (how the kernels ask) names the same atom
    for request in ("SM90_64x128x32_F32E4M3E4M3_SS<GMMA::Major::K, GMMA::Major::K>", "SM90_64x128x32_F32E4M3E4M3_SS"):
        assert make_gmma_atom(request) == GMMA_ATOMS["SM90_64x128x32_F32E4M3E4M3_SS_TN"]
    with pytest.raises(ValueError, match="F32E4M3E4M3 takes k = 32, e.g. SM90_64x128x32_F32E4M3E4M3_SS_TN"):
        make_gmma_atom("SM90_64x128x16_F32E4M3E4M3_SS")
    with pytest.raises(ValueError, match="F32F16F16 takes k = 16 and no _TN suffix"):
        make_gmma_atom("SM90_64x128x16_F32F16F16_SS_TN")


@pytest.mark.parametrize("name", REJECTS)
def test_mn_major_is_refused_as_cpp_refuses_it(name):
    selector, ta, tb, tc, major_a, major_b = name.split()
    letters = {"float_e4m3_t": "E4M3", "float_e5m2_t": "E5M2", "float": "F32", "half_t": "F16"}
    types = letters[tc] + letters[ta] + letters[tb]
    source = "SS" if selector == "ss_op_selector" else "RS"
    request = f"SM90_64x128x32_{types}_{source}<GMMA::Major::{major_a}, GMMA::Major::{major_b}>"
    cpp = BLOCKS["reject " + name].strip()
    if cpp == "ACCEPTED":
        assert make_gmma_atom(request).name == f"SM90_64x128x32_{types}_{source}_TN"
        return
    with pytest.raises(ValueError) as e:
        make_gmma_atom(request)
    assert str(e.value) == (f"make_gmma_atom: SM90_64x128x32_{types}_{source}_TN: {cpp} (8-bit wgmma reads both "
                            "operands K-major; got GMMA::Major::MN)")


@pytest.mark.parametrize("key", [k for k in BLOCKS if k.startswith("tiled ")])
def test_tiled_mma_prints_as_cpp(key):
    assert str(make_tiled_mma(make_gmma_atom(key.split()[1]), Layout((2, 1, 1)))) == BLOCKS[key]


def test_register_a_covers_the_tile_four_bytes_a_register():
    """RS: the 128 threads' values cover the 64 x 32 tile of A once; each 32-bit register (4 consecutive
    values) holds 4 neighbours along k (PTX ISA, wgmma's register fragment of A for .e4m3/.e5m2)."""
    a = make_gmma_atom("SM90_64x64x32_F32E4M3E4M3_RS_TN").LayoutA_TV
    seen = sorted(a(t, v) for t in range(128) for v in range(size(a, 1)))
    assert seen == list(range(64 * 32))
    for t in (0, 9, 77, 127):
        for r in range(size(a, 1) // 4):
            coords = [divmod(a(t, 4 * r + i), 64) for i in range(4)]            # (k, m)
            assert [k for k, _ in coords] == list(range(coords[0][0], coords[0][0] + 4))
            assert len({m for _, m in coords}) == 1


@pytest.mark.parametrize("name", LAYOUTS)
def test_layout_atom_prints_as_cpp(name):
    assert str(make_gmma_layout_atom(name)) + "\n" == BLOCKS["layout " + name]


def test_a_128_byte_row_is_128_elements():
    atom = make_gmma_layout_atom("GMMA::Layout_K_SW128_Atom<float_e4m3_t>")
    assert atom.bits == 8 and atom.layout_b == Layout((8, 128), (128, 1))


@pytest.mark.parametrize("key", TILES)
def test_tile_to_smem_prints_as_cpp(key):
    m = re.match(r"tile_to_shape\((GMMA::Layout_\w+_Atom<\w+>),\((\d+),(\d+)\)(,Step<_2,_1>)?\)$", key)
    atom, shape = make_gmma_layout_atom(m.group(1)), (int(m.group(2)), int(m.group(3)))
    tiled = tile_to_smem(atom, shape, (1, 0)) if m.group(4) else tile_to_smem(atom, shape)
    assert str(tiled) + "\n" == BLOCKS["tile " + key]


@pytest.mark.parametrize("name", DESCS)
def test_descriptor_is_bit_exact(name):
    """C++ answers start_addr 0 on the host; the start is the tile's byte offset C++ printed, >> 4."""
    m = re.match(r"K (\w+) (\w+) \((\d+),(\d+)\)( Step<_2,_1>)? tile \((\d+),(\d+)\)$", name)
    atom = make_gmma_layout_atom(f"GMMA::Layout_K_{m.group(1)}_Atom<{m.group(2)}>")
    shape = (int(m.group(3)), int(m.group(4)))
    smem = tile_to_smem(atom, shape, (1, 0)) if m.group(5) else tile_to_smem(atom, shape)
    descs = gmma_desc_blocks("K", smem, (int(m.group(6)), int(m.group(7))))
    keys = [k for k in BLOCKS if k.startswith(f"desc {name} block ")]
    assert len(descs) == len(keys) == 4
    for d, key in zip(descs, keys):
        offset_line, cpp = BLOCKS[key].split("\n", 1)
        assert d.start_address == int(offset_line.split()[1]) >> 4
        assert str(d.__class__(0, d.leading_byte_offset, d.stride_byte_offset, d.base_offset, d.layout_type)) == cpp


def _scale_case(name):
    m = re.match(r"(SFA|SFB) \((\d+),(\d+),(\d+)\) \((\d+),(\d+),(\d+)\) (MN|K) (MN|K)$", name)
    which, (mm, n, k, vm, vn, vk) = m.group(1), (int(x) for x in m.groups()[1:7])
    if which == "SFA":
        return (mm, k), (vm, vk), m.group(8)
    return (n, k), (vn, vk), m.group(9)


@pytest.mark.parametrize("name", SCALES)
def test_scale_layout_is_cutlass(name):
    """C++'s layout has an L mode (L = 1, stride = the number of scales): ours is its (MN, K) part."""
    shape, block, major = _scale_case(name)
    ours = scale_layout(shape, block, major)
    with_l = Layout(ours.shape + (1,), ours.stride + (cosize(ours),))
    assert _bare(str(with_l)) == _bare(BLOCKS["scale " + name])


@pytest.mark.parametrize("shape, block, major", [
    ((64, 256), (64, 256), "MN"),      # per tensor
    ((64, 256), (1, 256), "MN"),       # per row of A
    ((96, 384), (1, 128), "MN"),       # 1 x 128 blocks of A
    ((96, 384), (1, 128), "K"),
    ((256, 384), (128, 128), "MN"),    # 128 x 128 blocks of B
    ((200, 300), (128, 128), "K"),     # ragged: the last blocks are partial
])
def test_scale_layout_against_numpy(shape, block, major):
    """NumPy's construction: an array of distinct scales, one per block, each repeated over its block
    (np.repeat), read at (mn, k); the layout must name the same scale in the flat array (F order for
    MN-major scales, C order for K-major)."""
    mn, k = shape
    scales = np.arange(ceil_div(mn, block[0]) * ceil_div(k, block[1])).reshape(ceil_div(mn, block[0]), -1)
    per_element = np.repeat(np.repeat(scales, block[0], axis=0), block[1], axis=1)[:mn, :k]
    flat = scales.ravel(order="F" if major == "MN" else "C")
    layout = scale_layout(shape, block, major)
    got = np.array([[flat[layout(i, j)] for j in range(k)] for i in range(mn)])
    assert np.array_equal(got, per_element)


def test_scale_layout_refuses_bad_arguments():
    with pytest.raises(ValueError, match="scale_layout: block must be \\(MN, K\\), two positive ints, got"):
        scale_layout((128, 128), (0, 128))
    with pytest.raises(ValueError, match="scale_layout: major must be 'K' or 'MN'"):
        scale_layout((128, 128), (1, 128), "T")


def test_the_dsl_facade_builds_and_refuses_as_cpp():
    """cutelite.dsl's nvgpu.warpgroup.MmaF8Op is the C++ atom (its prints are compared with the DSL's in
    test_dsl_hopper.py); an MN-major operand is refused with C++'s text."""
    import cutelite.dsl as cute
    wg, major = cute.nvgpu.warpgroup, cute.nvgpu.OperandMajorMode
    op = wg.MmaF8Op(cute.Float8E5M2, cute.Float8E4M3FN, cute.Float32, (64, 96), wg.OperandSource.RMEM, major.K, major.K)
    assert cute.make_mma_atom(op).cutelite == GMMA_ATOMS["SM90_64x96x32_F32E5M2E4M3_RS_TN"]
    mn = wg.MmaF8Op(cute.Float8E4M3FN, cute.Float8E4M3FN, cute.Float32, (64, 128), wg.OperandSource.SMEM, major.K,
                    major.MN)
    with pytest.raises(ValueError, match="SM90_64x128x32_F32E4M3E4M3_SS_TN: MajorB must be GMMA::Major::K"):
        cute.make_mma_atom(mn)
    with pytest.raises(ValueError, match="warpgroup.MmaF8Op: A and B Float8E4M3FN or Float8E5M2"):
        cute.make_mma_atom(wg.MmaF8Op(cute.Float16, cute.Float8E4M3FN, cute.Float32, (64, 128),
                                      wg.OperandSource.SMEM, major.K, major.K))
