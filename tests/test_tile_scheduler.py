"""kernels.cutejit.TileScheduler: the work tiles each block is handed, run from the code the scheduler writes
(plain Python, no GPU), against the grouped raster enumerated here with loops: one tile a block, a
persistent block's walk, ping-pong consumers taking every other tile of it; and the misuse it refuses."""

from types import SimpleNamespace

import pytest

from kernels.cutejit import Sym, TileScheduler
from kernels.cutejit.scheduler import last_tiles_box
from kernels.expr import src
from kernels.cutejit.trace import Trace, recording

SHAPES = [(7, 5, 3), (8, 4, 16), (4, 4, 1), (5, 3, 8), (1, 1, 1), (9, 2, 4)]   # tiles_m, tiles_n, group


def raster(tiles_m, tiles_n, group):
    """Every tile (m, n) in the order the book describes: `group` tile rows at a time (the last group may
    have fewer), column by column, top to bottom in a column."""
    return [(m, n) for g in range(0, tiles_m, group) for n in range(tiles_n)
            for m in range(g, min(g + group, tiles_m))]


def walks(tiles_m, tiles_n, group, persistent, grid, first=0, step=1, initial=False):
    """{block: [(index, (m, n)), ...]}: what the scheduler's generated code hands each block of `grid`
    (by tiles(first, step), or initial_work() if `initial`)."""
    cuda = SimpleNamespace(blockIdx=SimpleNamespace(x=0), gridDim=SimpleNamespace(x=grid))
    t = Trace("walk", ["out", "TM", "TN"], 32)
    t.use("cuda", cuda)
    with recording(t):
        sched = TileScheduler(Sym("TM", True), Sym("TN", True), group, persistent)
        for tile in [sched.initial_work()] if initial else sched.tiles(first, step):
            m, n = tile.coords
            t.emit("out.append((%s, (%s, %s)))" % (src(tile.index), src(m), src(n)))
    walk = t.function()
    seen = {}
    for b in range(grid):
        cuda.blockIdx.x = b
        walk(seen.setdefault(b, []), tiles_m, tiles_n)
    return seen


@pytest.mark.parametrize("tiles_m, tiles_n, group", SHAPES)
def test_one_tile_a_block_in_grouped_raster_order(tiles_m, tiles_n, group):
    order = raster(tiles_m, tiles_n, group)
    expected = {b: [(b, order[b])] for b in range(len(order))}
    assert walks(tiles_m, tiles_n, group, False, len(order)) == expected
    assert walks(tiles_m, tiles_n, group, False, len(order), initial=True) == expected


@pytest.mark.parametrize("tiles_m, tiles_n, group", SHAPES)
@pytest.mark.parametrize("grid", [1, 3, 7, 64])
def test_a_persistent_block_walks_its_tiles_grid_apart(tiles_m, tiles_n, group, grid):
    order = raster(tiles_m, tiles_n, group)
    expected = {b: [(i, order[i]) for i in range(b, len(order), grid)] for b in range(grid)}
    assert walks(tiles_m, tiles_n, group, True, grid) == expected


@pytest.mark.parametrize("tiles_m, tiles_n, group", SHAPES)
@pytest.mark.parametrize("grid", [1, 3, 7])
def test_ping_pong_consumers_take_every_other_tile(tiles_m, tiles_n, group, grid):
    order = raster(tiles_m, tiles_n, group)
    for c in (0, 1):
        expected = {b: [(i, order[i]) for i in range(b + c * grid, len(order), 2 * grid)] for b in range(grid)}
        assert walks(tiles_m, tiles_n, group, True, grid, first=c, step=2) == expected


def test_misuse_is_refused():
    with pytest.raises(ValueError, match="group must be an int >= 1, got 0"):
        TileScheduler(4, 4, group=0)
    t = Trace("walk", [], 32)
    with recording(t):
        with pytest.raises(ValueError, match="not persistent has one tile"):
            list(TileScheduler(4, 4).tiles(first=1, step=2))
        with pytest.raises(TypeError):       # a WorkTile is not its coordinates
            for m, n in TileScheduler(4, 4).tiles():
                pass


def stream_k_walks(tiles_m, tiles_n, group, grid, k_tiles):
    """{block: [(index, (m, n), k_first, k_tiles, partial), ...]}: what runs() hands each block of a stream-K
    grid, from the scheduler's generated code."""
    cuda = SimpleNamespace(blockIdx=SimpleNamespace(x=0), gridDim=SimpleNamespace(x=grid))
    t = Trace("walk", ["out", "TM", "TN", "KT"], 32)
    t.use("cuda", cuda)
    with recording(t):
        sched = TileScheduler(Sym("TM", True), Sym("TN", True), group, True, stream_k=True)
        for tile in sched.runs(Sym("KT", True)):
            m, n = tile.coords
            t.emit("out.append((%s, (%s, %s), %s, %s, bool(%s)))" % tuple(
                src(x) for x in (tile.index, m, n, tile.k_first, tile.k_tiles, tile.partial)))
    walk = t.function()
    seen = {}
    for b in range(grid):
        cuda.blockIdx.x = b
        walk(seen.setdefault(b, []), tiles_m, tiles_n, k_tiles)
    return seen


@pytest.mark.parametrize("tiles_m, tiles_n, group", SHAPES)
@pytest.mark.parametrize("grid, k_tiles", [(1, 3), (3, 5), (7, 1), (7, 4), (64, 3), (16, 13)])
def test_stream_k_blocks_take_whole_waves_then_even_shares(tiles_m, tiles_n, group, grid, k_tiles):
    """The first T - T % G tiles whole, as a persistent block walks them; the last T % G tiles' k-tiles, in
    raster order, cut into G contiguous runs of floor or ceil of their mean, block b the b-th; a piece of a
    tile per block and tile, partial."""
    order = raster(tiles_m, tiles_n, group)
    whole = len(order) - len(order) % grid
    rest = [(i, k) for i in range(whole, len(order)) for k in range(k_tiles)]    # the shared iterations
    got = stream_k_walks(tiles_m, tiles_n, group, grid, k_tiles)
    for b in range(grid):
        mine = rest[b * len(rest) // grid:(b + 1) * len(rest) // grid]
        pieces = {}
        for i, k in mine:
            pieces.setdefault(i, []).append(k)
        expected = [(i, order[i], 0, k_tiles, False) for i in range(b, whole, grid)]
        expected += [(i, order[i], ks[0], len(ks), True) for i, ks in pieces.items()]
        assert got[b] == expected, b


@pytest.mark.parametrize("tiles_m, tiles_n, group", SHAPES)
def test_last_tiles_box_holds_the_last_tiles(tiles_m, tiles_n, group):
    """Every tile the raster numbers `first` or later lies in the box last_tiles_box gives; where they are
    one group's last columns, the box holds no other tile."""
    order = raster(tiles_m, tiles_n, group)
    last_group = (len(order) - 1) // (group * tiles_n) * group * tiles_n      # its first tile's number
    for first in range(len(order)):
        m0, n0 = last_tiles_box(tiles_m, tiles_n, group, first)
        assert all(m >= m0 and n >= n0 for m, n in order[first:]), first
        if first >= last_group and (first - last_group) % (tiles_m - m0) == 0:   # whole columns of the last group
            assert sorted(order[first:]) == sorted((m, n) for m in range(m0, tiles_m) for n in range(n0, tiles_n))
