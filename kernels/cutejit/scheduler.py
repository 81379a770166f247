"""Which output tiles a block computes: CuTe's tile scheduler, as one piece.

    sched = TileScheduler(tiles_m, tiles_n, group=16, persistent=True)
    for tile in sched.tiles():          # a run-time loop over this block's work tiles
        m, n = tile.coords
        ...
    m, n = TileScheduler(tiles_m, tiles_n, group=8).initial_work().coords   # one tile a block

Tiles are numbered in a grouped raster: `group` row-tiles at a time, walked column by column, so the
blocks running together share B's column-tiles (and A's row-tiles) while they sit in L2. A block computes
tile blockIdx.x; a persistent block (gridDim.x = the number of SMs) computes tiles blockIdx.x,
blockIdx.x + gridDim.x, ..., so its producer can load the next tile while its consumers finish this one.
The scheduler hands each tile over as a value, a WorkTile (the CuTe DSL's WorkTileInfo).

Stream-K (stream_k=True, persistent): the grid's G blocks compute the tiles of the full waves whole (the
first T - T % G tiles, as tiles() walks them), then share the last T % G tiles' k-tiles evenly: those
(T % G) * k_tiles iterations, in order, are cut into G contiguous runs, one a block, crossing tile
boundaries anywhere (CUTLASS's data-parallel + stream-K hybrid). A block's piece of a tile is partial: its
kernel adds it into C (zeroed there first: last_tiles_box), so no block waits for another. runs() hands
out either kind of work, each WorkTile with its run of k-tiles.
"""

from .kernel import assign, block_idx, else_, grid_dim, if_, max_, min_, range_, var
from .trace import current

__all__ = ["TileScheduler", "WorkTile", "last_tiles_box"]


class WorkTile:
    """A tile a block computes, as run-time values: its number in the grouped raster (`index`), its
    coordinates among the output tiles (`coords`, (m, n)), and (from runs()) the k-tiles the block computes
    of it, k_first .. k_first + k_tiles - 1, and whether that is part of its sum under stream-K (`partial`,
    a run-time boolean). Not a tuple: `for m, n in sched.tiles()` fails rather than binding the number and
    the coordinates."""

    __slots__ = ("index", "coords", "k_first", "k_tiles", "partial")

    def __init__(self, index, coords, k_first=0, k_tiles=None, partial=False):
        self.index, self.coords = index, coords
        self.k_first, self.k_tiles, self.partial = k_first, k_tiles, partial


def last_tiles_box(tiles_m, tiles_n, group, first):
    """(m, n): the grouped raster's tiles numbered `first` and after all lie in the tile rows m.. and tile
    columns n.. (host integers; the last group, walked column by column, ends at the last column). Stream-K's
    partial tiles are the last T % G: their box of C is what the host zeroes."""
    per_group = group * tiles_n
    m = first // per_group * group
    last = (tiles_m * tiles_n - 1) // per_group
    rows = min(tiles_m - m, group)
    return m, (first % per_group) // rows if first // per_group == last else 0


class TileScheduler:
    """tiles_m x tiles_n output tiles (run-time counts), in groups of `group` row-tiles. In a cluster of
    `cluster` = (cm, cn) blocks (persistent only) the work is cluster-shaped: a cluster takes cm x cn adjacent
    tiles at a time (the grouped raster numbers these cluster tiles), block (i, j) of the cluster the tile
    (cm m' + i, cn n' + j); a cluster's tiles past C's edge are computed on zeros and clipped by the stores,
    since every block of a cluster takes part in every k-tile's multicasts."""

    def __init__(self, tiles_m, tiles_n, group=1, persistent=False, cluster=(1, 1), stream_k=False):
        if not isinstance(group, int) or group < 1:
            raise ValueError("cutejit: TileScheduler: group must be an int >= 1, got %r" % (group,))
        if cluster != (1, 1) and not persistent:
            raise ValueError("cutejit: TileScheduler: a cluster %r of blocks walks cluster tiles: persistent=True"
                             % (cluster,))
        if stream_k and (not persistent or cluster != (1, 1)):
            raise ValueError("cutejit: TileScheduler: stream_k=True shares the last wave among persistent blocks of "
                             "no cluster, got persistent=%r, cluster=%r" % (persistent, cluster))
        self.tiles_m, self.tiles_n, self.group, self.persistent = tiles_m, tiles_n, group, persistent
        self.cluster, self.stream_k = cluster, stream_k

    def count(self):
        return self.tiles_m * self.tiles_n

    def coords(self, index, tiles_m=None, tiles_n=None):
        """(m, n) of tile number `index` in the grouped raster (of tiles_m x tiles_n tiles: by default C's)."""
        t = current()
        tiles_m = self.tiles_m if tiles_m is None else tiles_m
        per_group = self.group * (self.tiles_n if tiles_n is None else tiles_n)
        first = t.let((index // per_group) * self.group, "first")
        rows = t.let(min_(tiles_m - first, self.group), "rows")
        within = t.let(index % per_group, "within")
        return t.let(first + within % rows, "bm"), t.let(within // rows, "bn")

    def block_in_cluster(self):
        """(i, j): this block's coordinate in its cluster, from its rank blockIdx.x % (cm cn) (a cluster is
        cm cn consecutive blocks of a 1-D grid), ranks running along M first (cutelite's Layout((cm, cn)))."""
        t = current()
        cm, cn = self.cluster
        rank = t.let(block_idx() % (cm * cn), "cta_rank")
        return t.let(rank % cm, "cta_m"), t.let(rank // cm, "cta_n")

    def work(self, index):
        """The WorkTile of tile number `index`."""
        return WorkTile(index, self.coords(index))

    def initial_work(self):
        """This block's first work tile, tile blockIdx.x (a block that is not persistent has no other)."""
        return self.work(block_idx())

    def tiles(self, first=0, step=1):
        """This block's work tiles, as WorkTiles inside a run-time loop (one pass unless persistent): its
        tiles first, first + step, ... in the order the block walks them (blockIdx.x + j * gridDim.x).
        Ping-pong consumers take every other tile: first = 0 or 1, step = 2."""
        if not self.persistent:
            if (first, step) != (0, 1):
                raise ValueError("cutejit: TileScheduler: a block that is not persistent has one tile")
            yield self.initial_work()
            return
        if self.cluster != (1, 1):
            yield from self._cluster_tiles()
            return
        grid = grid_dim()
        for index in range_(self.count(), block_idx() + first * grid, step * grid):
            yield self.work(index)

    def _cluster_tiles(self):
        t = current()
        cm, cn = self.cluster
        i, j = self.block_in_cluster()
        cluster_m, cluster_n = (self.tiles_m + cm - 1) // cm, (self.tiles_n + cn - 1) // cn
        for index in range_(cluster_m * cluster_n, block_idx() // (cm * cn), grid_dim() // (cm * cn)):
            m, n = self.coords(index, cluster_m, cluster_n)
            yield WorkTile(index, (t.let(m * cm + i, "tile_m"), t.let(n * cn + j, "tile_n")))

    def runs(self, k_tiles, k_first=0):
        """This block's WorkTiles, each with the run of k-tiles it computes, in a run-time loop: with
        stream_k, its whole tiles then its pieces of the last T % G tiles (see the module); else the tiles of
        tiles(), each over k-tiles k_first .. k_first + k_tiles - 1 (all of K, or split-K's run)."""
        if not self.stream_k:
            for tile in self.tiles():
                tile.k_first, tile.k_tiles = k_first, k_tiles
                yield tile
            return
        t = current()
        grid, b, tiles = grid_dim(), block_idx(), self.count()
        whole = t.let(tiles - tiles % grid, "whole")                  # the tiles of the full waves
        iters = t.let((tiles - whole) * k_tiles, "sk_iters")          # the last tiles' k-tiles, in order
        start, end = t.let(b * iters // grid, "sk_start"), t.let((b + 1) * iters // grid, "sk_end")
        first = t.let(start // k_tiles, "sk_first")                   # this block's first tile among them
        pieces = t.let(min_((end + k_tiles - 1) // k_tiles - first, end - start), "sk_pieces")   # 0 if none
        mine = t.let(whole // grid, "whole_mine")
        for u in range_(mine + pieces):
            index, k0, count = var(0, "tile_index"), var(0, "k_first"), var(k_tiles, "k_count")
            with if_(u < mine):                                       # a whole tile: b + u G
                assign(index, b + u * grid)
            with else_():                                             # a piece: its iterations inside [start, end)
                j = t.let(first + (u - mine), "sk_tile")
                lo = t.let(max_(start, j * k_tiles), "sk_lo")
                assign(index, whole + j)
                assign(k0, lo - j * k_tiles)
                assign(count, min_(end, j * k_tiles + k_tiles) - lo)
            yield WorkTile(index, self.coords(index), k0, count, u >= mine)
