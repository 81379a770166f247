"""Which output tiles a block computes: CuTe's tile scheduler, as one piece.

    sched = TileScheduler(tiles_m, tiles_n, group=16, persistent=True)
    for bm, bn in sched.tiles():        # a run-time loop over this block's tiles
        ...

Tiles are numbered in a grouped raster: `group` row-tiles at a time, walked column by column, so the
blocks running together share B's column-tiles (and A's row-tiles) while they sit in L2. A block computes
tile blockIdx.x; a persistent block (gridDim.x = the number of SMs) computes tiles blockIdx.x,
blockIdx.x + gridDim.x, ..., so its producer can load the next tile while its consumers finish this one.
"""

from .kernel import block_idx, grid_dim, min_, range_
from .trace import current

__all__ = ["TileScheduler"]


class TileScheduler:
    """tiles_m x tiles_n output tiles (run-time counts), in groups of `group` row-tiles."""

    def __init__(self, tiles_m, tiles_n, group=1, persistent=False):
        if not isinstance(group, int) or group < 1:
            raise ValueError("cutejit: TileScheduler: group must be an int >= 1, got %r" % (group,))
        self.tiles_m, self.tiles_n, self.group, self.persistent = tiles_m, tiles_n, group, persistent

    def count(self):
        return self.tiles_m * self.tiles_n

    def coords(self, tile):
        """(bm, bn) of tile number `tile` in the grouped raster."""
        t = current()
        per_group = self.group * self.tiles_n
        first = t.let((tile // per_group) * self.group, "first")
        rows = t.let(min_(self.tiles_m - first, self.group), "rows")
        within = t.let(tile % per_group, "within")
        return t.let(first + within % rows, "bm"), t.let(within // rows, "bn")

    def tiles(self, first=0, step=1):
        """This block's tiles, as (bm, bn) run-time values inside a run-time loop (one pass unless
        persistent): its tiles first, first + step, ... in the order the block walks them (blockIdx.x +
        j * gridDim.x). `self.tile` is the tile's number while the loop runs (ping-pong consumers take every
        other tile: first = 0 or 1, step = 2)."""
        if self.persistent:
            grid = grid_dim()
            for tile in range_(self.count(), block_idx() + first * grid, step * grid):
                self.tile = tile
                yield self.coords(tile)
        else:
            if (first, step) != (0, 1):
                raise ValueError("cutejit: TileScheduler: a block that is not persistent has one tile")
            self.tile = block_idx()
            yield self.coords(block_idx())
