"""cutelite.tma against compiled C++ CuTe (tests/fixtures/tma_cpp.txt, made by gen_tma.sh): the tensor map
parameters C++ passes to cuTensorMapEncodeTiled, the atom and TiledCopy as C++ prints them, the TMA tensor,
tma_partition's parts and create_tma_multicast_mask; inputs C++ refuses are refused with its message. Where
C++ builds a map that the driver refuses, the source is the CUDA driver API's documentation of
cuTensorMapEncodeTiled; where a box lands in shared memory, the PTX ISA's tensor copy (the box is written
densely, dimension 0 fastest, before the swizzle)."""
import re

import pytest

import cpp_fixture

from cutelite import Layout, _, dyn, group, local_tile, make_tensor, size
from cutelite.gmma import GmmaSmemLayout, Layout_K_SW128_Atom, make_gmma_layout_atom, tile_to_smem
from cutelite.layout import ComposedLayout
from cutelite.parse import parse_layout
from cutelite.swizzle import Swizzle
from cutelite.tma import TMA_Atom, make_tma_atom, make_tma_copy, multicast_mask, tensor_map_params, tma_partition

BLOCKS = cpp_fixture.blocks("tma_cpp.txt")
CASES = [k[:-len(" | params")] for k in BLOCKS if k.endswith(" | params")]
MASKS = [k for k in BLOCKS if k.startswith("mask ")]
REJECTS = [k[len("reject "):] for k in BLOCKS if k.startswith("reject ")]


# ---- the cases of gen_tma.sh, built with cutelite (C++ ints are dyn, Int<n> plain) -------------------------
def row(m, n):
    return Layout((dyn(m), n if n == 64 else dyn(n)), (n if n == 64 else dyn(n), 1))


def row_static(m, n):
    return Layout((m, n), (n, 1))


def col(m, n):
    return Layout((dyn(m), dyn(n)), (1, dyn(m)))


def gmma(atom, shape, step=False):
    a = make_gmma_layout_atom(f"GMMA::{atom}")
    return tile_to_smem(a, shape, (1, 0)) if step else tile_to_smem(a, shape)


STAGED = ("A K SW128 half_t (512,256) tile (128,64)", "B K SW128 half_t (384,256) tile (128,64) multicast 2")


def _case(name):
    """(op, value_type, gmem, smem, tiler, multicast, smem tensor layout, tiler rank) of a fixture case."""
    m = re.match(r"(A|B|C) (K|MN) (SW128|SW64|SW32|INTER) (\w+) \((\d+),(\d+)(?:,3)?\)( batched)? tile "
                 r"\((\d+),(\d+)\)( Step<_2,_1>)?( multicast (\d+))?( store)?$", name)
    if m:
        major, sw, ty = m.group(2), m.group(3), m.group(4)
        rows, cols, tm, tn = (int(m.group(i)) for i in (5, 6, 8, 9))
        atom, step = f"Layout_{major}_{sw}_Atom<{ty}>", bool(m.group(10))
        smem = gmma(atom, (tm, tn), step)
        cluster = int(m.group(12) or 1)
        op = "SM90_TMA_STORE" if m.group(13) else "SM90_TMA_LOAD_MULTICAST" if m.group(11) else "SM90_TMA_LOAD"
        if m.group(7):
            g = Layout((dyn(rows), dyn(cols), dyn(3)), (dyn(cols), 1, dyn(rows * cols)))
        else:
            g = row(rows, cols) if major == "K" else col(rows, cols)
        full = gmma(atom, (tm, tn, 4)) if name in STAGED else smem
        return op, ty, g, smem, (tm, tn), cluster, full, 2
    plain = {
        "plain float (1024,256) row-major smem (64,32) row-major":
            ("SM90_TMA_LOAD", "float", row(1024, 256), row_static(64, 32), (64, 32), 1),
        "plain float (1024,32,512):(64,_1,65536) smem (16,8,2):(16,1,8)":
            ("SM90_TMA_LOAD", "float", Layout((dyn(1024), dyn(32), dyn(512)), (dyn(64), 1, dyn(65536))),
             Layout((16, 8, 2), (16, 1, 8)), (16, 8, 2), 1),
        "plain half_t (1024,_64) static K smem (4,64) row-major":
            ("SM90_TMA_LOAD", "half_t", row(1024, 64), row_static(4, 64), (4, 64), 1),
        "plain half_t (1024,1024) smem (8,64) row-major multicast 16":
            ("SM90_TMA_LOAD_MULTICAST", "half_t", row(1024, 1024), row_static(8, 64), (8, 64), 16),
        "plain half_t (1024,1024) col-major smem (64,8) col-major":
            ("SM90_TMA_LOAD", "half_t", col(1024, 1024), Layout((64, 8)), (64, 8), 1),
        "plain float (_32,(_4,_8)):(_1,(_64,_256)) smem (32,32) col-major":   # a box mode over two global modes
            ("SM90_TMA_LOAD", "float", Layout((32, (4, 8)), (1, (64, 256))), Layout((32, 32)), (32, 32), 1),
    }
    op, ty, g, smem, tiler, cluster = plain[name]
    return op, ty, g, smem, tiler, cluster, smem, len(tiler)


def _atom(name):
    op, ty, g, smem, tiler, cluster, _full, _r = _case(name)
    return make_tma_atom(op, g, smem, tiler, cluster, value_type=ty)


def _params(text):
    p = {}
    for line in text.splitlines():
        key, *vals = line.split()
        p[key] = tuple(int(v) for v in vals)
    return p


def test_fixture_is_complete():
    assert len(CASES) == 25 and len(MASKS) == 64 and len(REJECTS) == 10


@pytest.mark.parametrize("name", CASES)
def test_tensor_map_params_are_what_cpp_passes_the_driver(name):
    cpp = _params(BLOCKS[name + " | params"])
    p = tensor_map_params(_atom(name))
    assert (p.data_type, p.rank) == (cpp["data_type"][0], cpp["rank"][0])
    assert (p.dims, p.strides, p.box, p.element_strides) == (cpp["dims"], cpp["strides"], cpp["box"],
                                                             cpp["element_strides"])
    assert (p.interleave, p.swizzle, p.l2_promotion, p.oob_fill) == (
        cpp["interleave"][0], cpp["swizzle"][0], cpp["l2_promotion"][0], cpp["oob_fill"][0])


@pytest.mark.parametrize("name", CASES)
def test_atom_and_tiled_copy_print_as_cpp(name):
    op, ty, g, smem, tiler, cluster, _full, _r = _case(name)
    assert str(_atom(name)) == BLOCKS[name + " | atom"]
    assert str(make_tma_copy(op, g, smem, tiler, cluster, value_type=ty)) == BLOCKS[name + " | tiled"]


@pytest.mark.parametrize("name", CASES)
def test_tma_tensor_and_partitions_print_as_cpp(name):
    op, ty, g, smem, tiler, cluster, full, r = _case(name)
    atom = _atom(name)
    m = atom.get_tma_tensor(g.shape)
    assert str(m) + "\n" == BLOCKS[name + " | tma_tensor"]
    tiles = local_tile(m, tiler, (_,) * r)
    tiles = tiles.view(group(tiles.layout, 0, r))
    inner = full.layout_b if isinstance(full, ComposedLayout) else full
    s = full.with_inner(group(inner, 0, r)) if isinstance(full, ComposedLayout) else group(inner, 0, r)
    for i in range(cluster):
        tg, ts = tma_partition(atom, dyn(i), Layout(cluster), s, tiles)
        lay = ts.layout.layout_b if isinstance(ts.layout, ComposedLayout) else ts.layout
        assert (f"gmem: {tg}\nsmem: {lay}\noffset: {int(ts.engine.coord)}\n" == BLOCKS[f"{name} | cta {i}"])


@pytest.mark.parametrize("name", CASES)
def test_boxes_fill_the_tile_where_the_smem_layout_says(name):
    """Place every instruction's box as the PTX ISA's tensor copy does (box element p, dimension 0
    fastest, at the destination's start + its dense index; global element at the map's strides) and check,
    against the layouts alone, that each element of tile (0, 0) lands once, where the smem layout puts it."""
    op, ty, g, smem, tiler, cluster, _full, r = _case(name)
    atom = _atom(name)
    inner = smem.layout_b if isinstance(smem, ComposedLayout) else smem
    tiles = local_tile(atom.get_tma_tensor(g.shape), tiler, (_,) * r)
    tiles = tiles.view(group(tiles.layout, 0, r))
    # where each element of the tile is in global memory, and where the smem layout keeps it
    want = {}
    for t in range(size(inner)):
        coord = _idx2crd(t, tiler)
        want[g(coord + (0,) * (len(g.shape) - r))] = inner(coord)
    si = group(inner, 0, r)
    got = {}
    for c in range(cluster):
        tg, ts = tma_partition(atom, c, Layout(cluster), si, tiles)
        for i in range(atom.num_tma):
            start = tuple(tg((0, i), *(0,) * (len(g.shape))))
            start += (0,) * (len(atom.box) - len(start))
            dst = ts(((0, i),))
            for p in range(_prod(atom.box)):
                x = _idx2crd(p, atom.box)
                gofs = sum((s + xi) * st for s, xi, st in zip(start, x, atom.strides))
                assert gofs not in got, f"element at {gofs} loaded twice"
                got[gofs] = dst + p
    assert got == want


def _prod(t):
    n = 1
    for x in t:
        n *= x
    return n


def _idx2crd(i, shape):
    out = []
    for s in shape:
        out.append(i % s)
        i //= s
    return tuple(out)


@pytest.mark.parametrize("name", CASES)
def test_counts_and_bytes(name):
    atom = _atom(name)
    op, ty, g, smem, tiler, cluster, _full, _r = _case(name)
    assert atom.num_tma * _prod(atom.tile_box) == size(smem)
    assert atom.transaction_bytes == size(smem) * atom.bits // 8
    assert atom.tma_bytes * cluster == _prod(atom.tile_box) * atom.bits // 8


def test_a_stage_of_the_hopper_gemm():
    """A (M, K) K-major fp16, one (128, 64) stage with the 128-byte swizzle: one instruction, box (64 halves
    = 128 bytes, 128 rows), 16 KB for expect_tx; a NumPy dtype name for the element type."""
    a = make_tma_atom("SM90_TMA_LOAD", Layout((4096, 4096), (4096, 1)),
                      tile_to_smem(Layout_K_SW128_Atom("half_t"), (128, 64)), (128, 64), value_type="float16")
    assert (a.box, a.num_tma, a.tma_bytes, a.transaction_bytes, a.swizzle_mode) == ((64, 128), 1, 16384, 16384, 3)


# ---- multicast masks --------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", MASKS)
def test_multicast_mask_as_cpp(key):
    m = re.match(r"mask (\S+) \((\d+),(\d+)\) mode (\d)$", key)
    layout = parse_layout(m.group(1))
    mask = multicast_mask(layout, (int(m.group(2)), int(m.group(3))), int(m.group(4)))
    assert mask == int(BLOCKS[key], 16)


def test_multicast_mask_two_modes_and_errors():
    L = Layout((2, 4))
    assert multicast_mask(L, (1, 2), (0, 1)) == 0xFF
    with pytest.raises(ValueError, match="multicast_mask: mode 2"):
        multicast_mask(L, (0, 0), 2)
    with pytest.raises(ValueError, match="multicast_mask: cta_coord"):
        multicast_mask(L, 0, 1)
    # a cluster has at most 16 CTAs, ranks 0..15 (the 16 bits of a ctaMask): both sides of each bound
    assert multicast_mask(Layout((4, 4)), (3, 3), (0, 1)) == 0xFFFF
    assert multicast_mask(Layout((2, 2), (1, 8)), (1, 1), 0) == 0b11 << 8       # rank 9 of ranks 0, 1, 8, 9
    for big in (Layout((4, 8)), Layout((32, 1)), Layout((17, 1))):
        with pytest.raises(ValueError, match=r"multicast_mask: the cluster .* CTAs; a cluster has at most 16"):
            multicast_mask(big, (0, 0), 1)                                       # (32, 1) mode 1 fits 16 bits
    for reach in (Layout((2, 2), (1, 15)), Layout((2, 2), (-1, 2))):
        with pytest.raises(ValueError, match=r"multicast_mask: the cluster .* gives ranks .*; a ctaMask names"):
            multicast_mask(reach, (0, 0), 0)
    # a coordinate past the cluster: C++ computes a mask there and cuts it to 16 bits; cutelite refuses one
    # whose CTAs' ranks leave 0..15 (or, where slices check coordinates, the coordinate itself)
    for coord, mode in (((-1, 0), 1), (("x", 0), 1), ((0, 9), 0)):
        with pytest.raises(ValueError, match=r"multicast_mask: .*cta_coord \(.*\) (is not a|in the cluster)"):
            multicast_mask(Layout((2, 2)), coord, mode)
    with pytest.raises(TypeError, match="multicast_mask: cluster_layout"):
        multicast_mask((2, 1), (0, 0), 0)


# ---- refusals ---------------------------------------------------------------------------------------------
def _reject_case(name):
    k128 = tile_to_smem(Layout_K_SW128_Atom("half_t"), (128, 64))
    cases = {
        "majorness: M-major gmem, K-major smem": ("SM90_TMA_LOAD", "half_t", col(512, 256), k128, (128, 64), 1),
        "box 512 > 256": ("SM90_TMA_LOAD", "half_t", row(1024, 1024), row_static(2, 512), (2, 512), 1),
        "stride 200 bytes": ("SM90_TMA_LOAD", "half_t", row(512, 100), row_static(8, 64), (8, 64), 1),
        "multicast 16 over box (64,24)": ("SM90_TMA_LOAD_MULTICAST", "half_t", row(1024, 1024),
                                          row_static(24, 64), (24, 64), 16),
        "tile (128,32) for smem (128,64)": ("SM90_TMA_LOAD", "half_t", row(512, 256), k128, (128, 32), 1),
        "Sw<3,3,3> element swizzle": ("SM90_TMA_LOAD", "half_t", row(512, 256),
                                      ComposedLayout(Swizzle(3, 3, 3), 0, row_static(8, 64)), (8, 64), 1),
        "tile takes every other column": ("SM90_TMA_LOAD", "half_t", row(512, 256), row_static(8, 64),
                                          (Layout(8, 1), Layout(64, 2)), 1),
        "int16_t": ("SM90_TMA_LOAD", "int16_t", row(512, 256), row_static(8, 64), (8, 64), 1),
        "driver: inner box 256 bytes > 128B swizzle": ("SM90_TMA_LOAD", "half_t", row(512, 256),
                                                       GmmaSmemLayout(Swizzle(3, 4, 3), 16, row_static(8, 128)),
                                                       (8, 128), 1),
        "driver: inner box 8 bytes": ("SM90_TMA_LOAD", "half_t", row(512, 256), row_static(64, 4), (64, 4), 1),
    }
    return cases[name]


# The driver's rules for what C++ builds (CUDA driver API, cuTensorMapEncodeTiled's requirements)
DRIVER = {"driver: inner box 256 bytes > 128B swizzle": "must be <= the swizzle size",
          "driver: inner box 8 bytes": "must be a multiple of 16 bytes"}


@pytest.mark.parametrize("name", REJECTS)
def test_refused_as_cpp_or_the_driver(name):
    op, ty, g, smem, tiler, cluster = _reject_case(name)
    cpp = BLOCKS["reject " + name].strip()
    expected = DRIVER[name] if cpp == "ACCEPTED" else cpp
    with pytest.raises(ValueError, match=re.escape(expected)) as e:
        make_tma_atom(op, g, smem, tiler, cluster, value_type=ty)
    assert str(e.value).startswith("make_tma_atom: ")


def test_bad_inputs_name_the_operation_and_the_value():
    smem = tile_to_smem(Layout_K_SW128_Atom("half_t"), (128, 64))
    g = row(512, 256)
    with pytest.raises(ValueError, match="make_tma_atom: op must be one of .*'SM90_TMA_COPY'"):
        make_tma_atom("SM90_TMA_COPY", g, smem, (128, 64), value_type="half_t")
    with pytest.raises(ValueError, match="make_tma_atom: a global Layout needs value_type"):
        make_tma_atom("SM90_TMA_LOAD", g, smem, (128, 64))
    with pytest.raises(TypeError, match="make_tma_atom: the global tensor must be a Tensor or a Layout, got"):
        make_tma_atom("SM90_TMA_LOAD", (512, 256), smem, (128, 64), value_type="half_t")
    for n in (0, 17, 2.0):
        with pytest.raises(ValueError, match=f"make_tma_atom: multicast must be an int in 1..16.*{n}"):
            make_tma_atom("SM90_TMA_LOAD_MULTICAST", g, smem, (128, 64), n, value_type="half_t")
    with pytest.raises(ValueError, match="16-bit elements, the tensor holds 32-bit"):
        make_tma_atom("SM90_TMA_LOAD", g, smem, (128, 64), value_type="float")
    with pytest.raises(TypeError, match="make_tma_copy: the shared layout must be"):
        make_tma_copy("SM90_TMA_LOAD", g, "smem", value_type="half_t")
    with pytest.raises(TypeError, match="make_tma_atom: the shared layout must be"):
        make_tma_atom("SM90_TMA_LOAD", g, (128, 64), (128, 64), value_type="half_t")
    with pytest.raises(ValueError, match="make_tma_atom: element type 'int16_t' has no tensor map data type"):
        make_tma_atom("SM90_TMA_LOAD", g, row_static(8, 64), (8, 64), value_type="int16_t")
    with pytest.raises(TypeError, match="make_tma_atom: value_type must be a type name"):
        make_tma_atom("SM90_TMA_LOAD", g, row_static(8, 64), (8, 64), value_type=[16])


def test_tensor_map_params_for_another_tensor_and_its_errors():
    atom = make_tma_atom("SM90_TMA_LOAD", row(512, 256), tile_to_smem(Layout_K_SW128_Atom("half_t"), (128, 64)),
                         (128, 64), value_type="half_t")
    p = tensor_map_params(atom, (1000, 4096), (8192, 2), l2_promotion="256B", oob_fill="nan")
    assert (p.dims, p.strides, p.box, p.l2_promotion, p.oob_fill) == ((4096, 1000), (8192,), (64, 128), 3, 1)
    with pytest.raises(ValueError, match="tensor_map_params: stride 3 bytes is not a whole number of half_t"):
        tensor_map_params(atom, (1000, 4096), (8192, 3))
    with pytest.raises(ValueError, match=r"tensor_map_params: global stride 200 bytes of dimension 1"):
        tensor_map_params(atom, (1000, 100), (200, 2))
    with pytest.raises(ValueError, match="tensor_map_params: the box's innermost dimension has global stride 1000"):
        tensor_map_params(atom, (1000, 4096), (2, 2000))
    with pytest.raises(ValueError, match="tensor_map_params: give both"):
        tensor_map_params(atom, (1000, 4096))
    with pytest.raises(ValueError, match="tensor_map_params: shape .* must have the modes"):
        tensor_map_params(atom, (1000, 4096, 2), (8192, 2, 2))
    with pytest.raises(ValueError, match="tensor_map_params: l2_promotion must be one of .*'512B'"):
        tensor_map_params(atom, l2_promotion="512B")
    with pytest.raises(ValueError, match="tensor_map_params: oob_fill"):
        tensor_map_params(atom, oob_fill=7)
    ints = make_tma_atom("SM90_TMA_LOAD", Layout((dyn(256), dyn(512)), (dyn(512), 1)),
                         tile_to_smem(Layout_K_SW128_Atom("uint8_t"), (128, 128)), (128, 128), value_type="uint8")
    with pytest.raises(ValueError, match="tensor_map_params: the NaN fill needs a floating-point type"):
        tensor_map_params(ints, oob_fill="nan")
    with pytest.raises(TypeError, match="tensor_map_params: expected a TMA_Atom"):
        tensor_map_params("atom")


def test_partition_errors():
    atom = _atom(CASES[0])
    m = atom.get_tma_tensor((dyn(512), dyn(256)))
    tiles = local_tile(m, (128, 64), (_, _))
    smem = tile_to_smem(Layout_K_SW128_Atom("half_t"), (128, 64))
    with pytest.raises(ValueError, match=r"tma_partition: size<0>\(stensor\) == size<0>\(gtensor\) fails"):
        tma_partition(atom, 0, Layout(1), smem.with_inner(group(smem.layout_b, 0, 2)), tiles)   # tiles ungrouped
    with pytest.raises(TypeError, match="tma_partition: gmem must be a TMA coordinate tensor"):
        tma_partition(atom, 0, Layout(1), smem, make_tensor(Layout((128, 64))))
    grouped = tiles.view(group(tiles.layout, 0, 2))
    with pytest.raises(ValueError, match=r"tma_partition: cta_coord \(_0,_1\) is not a coordinate of the multicast"):
        tma_partition(atom, (0, 1), Layout(2), smem.with_inner(group(smem.layout_b, 0, 2)), grouped)
    with pytest.raises(TypeError, match="tma_partition: expected a TMA_Atom"):
        tma_partition(None, 0, Layout(1), smem, tiles)
    with pytest.raises(ValueError, match="get_tma_tensor: shape .* is not congruent"):
        atom.get_tma_tensor((512, 256, 2))


def test_partition_of_a_tensor_in_memory_moves_its_start():
    """A smem Tensor over an array: the multicast slice moves the tensor's offset (C++ moves the pointer)."""
    name = "B K SW128 half_t (384,256) tile (128,64) multicast 2"
    atom = _atom(name)
    tiles = local_tile(atom.get_tma_tensor((dyn(384), dyn(256))), (128, 64), (_, _))
    tiles = tiles.view(group(tiles.layout, 0, 2))
    inner = Layout((128, 64), (64, 1))
    sA = make_tensor(inner, dtype="float16")
    sA = sA.view(group(sA.layout, 0, 2))
    _tg, ts = tma_partition(atom, 1, Layout(2), sA, tiles)
    assert ts.offset == 4096 and str(ts.layout) == "((_8192,_1)):((_1,_0))"
    assert isinstance(atom, TMA_Atom) and atom.multicast == 2 and atom.box == (64, 64) and atom.tile_box == (64, 128)
