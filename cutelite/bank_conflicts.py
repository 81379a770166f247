"""Shared-memory banks: which banks a warp's access touches, and how many wavefronts it costs.

The hardware model (NVIDIA GPUs from Volta on; the CUDA C++ Programming Guide's shared-memory section
and the Nsight Compute documentation on wavefronts and bank conflicts):

  * Shared memory is 32 banks, each 4 bytes wide: byte address a lives in 4-byte word a // 4, and that
    word lives in bank (a // 4) % 32. Each bank delivers one word per cycle.
  * One warp instruction is split into phases, groups of lanes served together:
        up to 32-bit accesses   1 phase  of 32 lanes
        64-bit  (v2.b32)        2 phases of 16 lanes (half-warps)
        128-bit (v4.b32)        4 phases of  8 lanes (quarter-warps)
        ldmatrix .x1/.x2/.x4    one phase per 8x16-byte matrix (8 lanes give its 8 row addresses)
  * Within a phase, lanes that read the *same* word share it (broadcast); *different* words in the same
    bank are served one after another. A phase therefore needs as many wavefronts as the largest number
    of distinct words any one bank must deliver.
  * One exception, for loads only: a 64- or 128-bit load whose lanes come in pairs with equal addresses
    (lane n and n^1 for every active n, or lane n and n^2) returns packed registers, so each phase serves
    twice as many lanes (64-bit: 1 phase of 32; 128-bit: 2 phases of 16). A reply on the NVIDIA developer
    forum ("Unexpected shared memory bank conflict") states it for 128-bit loads on CC 7.0-7.5; the H100
    (CC 9.0) counters in benchmarks/bank_conflicts/RESULTS.md show it for 64- and 128-bit loads (a
    warp-wide float4 broadcast takes 2 wavefronts, not 4).
  * wavefronts = sum over phases of that maximum; the ideal is one wavefront per phase, and
    conflicts = wavefronts - ideal. That difference is what Nsight Compute reports as
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum (and _op_st for stores) next to
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum (ldmatrix, LDSM, is counted under _op_ld);
    benchmarks/bank_conflicts/ compares the analyser with those counters on an H100: 44 of 44 cases agree.

A layout maps a coordinate to an ELEMENT offset; `elem_bytes` turns it into a byte address. A warp access
is one entry per lane: the coordinate it touches (its first element, with `vector` elements read together),
or a list of the coordinates it touches (they must be contiguous and aligned after the layout, as one
vector instruction needs), or None for an inactive lane.
"""

from dataclasses import dataclass, field

from .errors import check_cells, quote
from .int_tuple import idx2crd, is_int
from .layout import ComposedLayout, Layout, _check_shape, _need_layout, rank, size
from .swizzle import Swizzle

__all__ = ["NUM_BANKS", "BANK_BYTES", "bank_of", "lanes_per_phase", "BankReport",
           "wavefronts", "ldmatrix_wavefronts", "byte_addresses", "analyse", "analyse_ldmatrix",
           "bank_grid", "lane_coords", "access_cells", "swizzle_for"]

NUM_BANKS = 32
BANK_BYTES = 4


def _need_count(x, op, what, low=0, power_of_two=False):
    """TypeError naming `op` unless x is an int; ValueError below `low` or, where asked, not a power of two."""
    if not is_int(x):
        raise TypeError(f"{op}: {what} must be an int, got {quote(x)} ({type(x).__name__})")
    if x < low or power_of_two and x & (x - 1):
        need = f"a power of two, at least {low}" if power_of_two else f"at least {low}"
        raise ValueError(f"{op}: {what} must be {need}, got {quote(x)}")
    return int(x)


def bank_of(byte_addr):
    """The bank holding byte address `byte_addr` (an int >= 0): (byte_addr // 4) % 32."""
    _need_count(byte_addr, "bank_of", "a byte address")
    return (byte_addr // BANK_BYTES) % NUM_BANKS


def lanes_per_phase(width_bytes):
    """How many lanes one phase serves for an access of `width_bytes` per lane (1, 2, 4, 8 or 16)."""
    _need_count(width_bytes, "lanes_per_phase", "width_bytes", low=1)
    if width_bytes in (1, 2, 4):
        return 32
    if width_bytes == 8:
        return 16
    if width_bytes == 16:
        return 8
    raise ValueError(f"lanes_per_phase: a lane accesses 1, 2, 4, 8 or 16 bytes, got {width_bytes}")


@dataclass
class BankReport:
    """The cost of one warp-wide shared-memory instruction under the 32-bank model.

    phases[p] lists the lanes of phase p; per_phase[p] is its wavefront count; banks[lane] the banks
    the lane touches (empty for an inactive lane); words[lane] the 4-byte word indices it touches.
    """
    kind: str
    addresses: list
    banks: list
    words: list
    phases: list
    per_phase: list
    wavefronts: int = 0
    ideal: int = 0
    conflicts: int = field(init=False)

    def __post_init__(self):
        self.conflicts = self.wavefronts - self.ideal

    @property
    def ways(self):
        """The worst phase's serialisation: 1 means conflict-free, 32 means one bank did all the work."""
        return max(self.per_phase) if self.per_phase else 0

    def __str__(self):
        return (f"{self.kind}: {self.wavefronts} wavefronts (ideal {self.ideal}), {self.conflicts} "
                f"bank conflicts, worst phase {self.ways}-way")


def _phase_cost(addrs, width_bytes, lanes):
    """Max over banks of the distinct words the given lanes touch."""
    words_in_bank = {}
    for lane in lanes:
        a = addrs[lane]
        for w in range(a // BANK_BYTES, (a + max(width_bytes, 1) - 1) // BANK_BYTES + 1):
            words_in_bank.setdefault(w % NUM_BANKS, set()).add(w)
    return max((len(ws) for ws in words_in_bank.values()), default=0)


def _report(kind, addrs, width_bytes, phases):
    words, banks = [], []
    for a in addrs:
        if a is None:
            words.append([]), banks.append([])
            continue
        ws = list(range(a // BANK_BYTES, (a + width_bytes - 1) // BANK_BYTES + 1))
        words.append(ws)
        banks.append([w % NUM_BANKS for w in ws])
    active = [[lane for lane in ph if addrs[lane] is not None] for ph in phases]
    active = [ph for ph in active if ph]
    per_phase = [_phase_cost(addrs, width_bytes, ph) for ph in active]
    return BankReport(kind, list(addrs), banks, words, active, per_phase, sum(per_phase), len(active))


def _paired(addrs):
    """True when every active lane n shares its address with lane n^1, or every one with lane n^2."""
    return any(all(a is None or addrs[n ^ d] == a for n, a in enumerate(addrs)) for d in (1, 2))


def wavefronts(byte_addrs, width_bytes=4, store=False):
    """Cost of a warp access given each lane's byte address (None: inactive) and the bytes per lane.

    Post: result.wavefronts == sum over phases of max over banks of #distinct words;
          result.conflicts == result.wavefronts - (number of phases with an active lane).
    """
    addrs = _addresses(byte_addrs, "wavefronts")
    if len(addrs) > 32:
        raise ValueError(f"wavefronts: a warp has 32 lanes, got {len(addrs)} addresses")
    addrs += [None] * (32 - len(addrs))
    n = lanes_per_phase(width_bytes)
    if not isinstance(store, bool):
        raise TypeError(f"wavefronts: store must be True or False, got {quote(store)}")
    for lane, a in enumerate(addrs):
        if a is not None and a % width_bytes:
            raise ValueError(f"wavefronts: lane {lane}'s address {a} is not aligned to its "
                             f"{width_bytes}-byte access")
    kind = f"{8 * width_bytes}-bit {'store' if store else 'load'}"
    if not store and width_bytes in (8, 16) and _paired(addrs):
        n, kind = 2 * n, kind + " (paired addresses)"
    phases = [list(range(p, p + n)) for p in range(0, 32, n)]
    return _report(kind, addrs, width_bytes, phases)


def ldmatrix_wavefronts(row_addrs):
    """Cost of ldmatrix.x1/.x2/.x4: 8, 16 or 32 row addresses (16 bytes each), one phase per matrix.

    Lanes 8j..8j+7 give the rows of matrix j. Post: ideal == number of matrices.
    """
    addrs = _addresses(row_addrs, "ldmatrix_wavefronts", inactive=False)
    if len(addrs) not in (8, 16, 32):
        raise ValueError(f"ldmatrix_wavefronts: .x1/.x2/.x4 take 8, 16 or 32 row addresses, got {len(addrs)}")
    for lane, a in enumerate(addrs):
        if a % 16:
            raise ValueError(f"ldmatrix_wavefronts: row address {a} of lane {lane} is not 16-byte aligned")
    phases = [list(range(p, p + 8)) for p in range(0, len(addrs), 8)]
    return _report(f"ldmatrix.x{len(addrs) // 8}", addrs, 16, phases)


def _as_list(x, op, what):
    """x (a list, tuple, range or array, not a str) as a list; TypeError naming `op` for anything else."""
    if not isinstance(x, (str, bytes, Layout, ComposedLayout)):
        try:
            return list(x)
        except TypeError:
            pass
    raise TypeError(f"{op}: expected {what}, got {quote(x)} ({type(x).__name__})")


def _addresses(addrs, op, inactive=True, what="byte address"):
    """The addresses as a list, each an int >= 0 (or, where `inactive`, None for an idle lane)."""
    addrs = _as_list(addrs, op, f"a list (one {what} a lane)")
    for a in addrs:
        if not (inactive and a is None):
            _need_count(a, op, f"a {what}")
    return addrs


def _offset(layout, coord):
    return int(layout(*coord) if isinstance(coord, tuple) else layout(coord))


def byte_addresses(layout, access, elem_bytes, vector=1):
    """(byte address of each lane, bytes per lane) for a warp access through `layout`.

    access[lane] is a coordinate (the lane reads `vector` elements from there, contiguous in memory),
    a list of coordinates (their element offsets must be consecutive), or None.
    """
    _need_layout(layout, "byte_addresses", composed=True)
    _need_count(elem_bytes, "byte_addresses", "elem_bytes", low=1)
    _need_count(vector, "byte_addresses", "vector", low=1)
    addrs, width = [], vector * elem_bytes
    for lane, a in enumerate(_as_list(access, "byte_addresses", "a list (one entry per lane)")):
        if a is None:
            addrs.append(None)
            continue
        if isinstance(a, list):
            if not a:
                raise ValueError(f"byte_addresses: lane {lane}'s list of coordinates is empty")
            offs = [_offset(layout, c) for c in a]
            if offs != list(range(offs[0], offs[0] + len(offs))):
                raise ValueError(f"byte_addresses: lane {lane}'s elements {a} sit at offsets {offs} in "
                                 f"{layout}, not one contiguous vector")
            width = len(a) * elem_bytes
            addrs.append(offs[0] * elem_bytes)
        else:
            addrs.append(_offset(layout, a) * elem_bytes)
    return addrs, width


def analyse(layout, access, elem_bytes=4, vector=1, store=False):
    """Banks and wavefronts of one warp instruction: lane i touches `access[i]` of `layout`.

    >>> col = [(i, 0) for i in range(32)]            # lane i reads row i, column 0
    >>> analyse(Layout((32, 32), (32, 1)), col).wavefronts    # all 32 lanes in bank 0
    32
    """
    addrs, width = byte_addresses(layout, access, elem_bytes, vector)
    return wavefronts(addrs, width, store)


def analyse_ldmatrix(layout, rows, elem_bytes=2):
    """ldmatrix through `layout`: rows[lane] is the coordinate of the first element of the 16-byte row
    that lane supplies (8 lanes per matrix; 8, 16 or 32 entries)."""
    _need_layout(layout, "analyse_ldmatrix", composed=True)
    _need_count(elem_bytes, "analyse_ldmatrix", "elem_bytes", low=1)
    rows = _as_list(rows, "analyse_ldmatrix", "a list of row coordinates")
    addrs = [_offset(layout, c) * elem_bytes for c in rows]
    return ldmatrix_wavefronts(addrs)


def lane_coords(tv_layout, tile_shape, values=None):
    """From a thread-value layout (thread, value) -> index into a tile of `tile_shape` (colexicographic,
    as CuTe's TV layouts are) to the access list: lane t -> list of tile coordinates of its values."""
    _need_layout(tv_layout, "lane_coords")
    _check_shape(tile_shape, "tile_shape", "lane_coords")
    if rank(tv_layout) != 2 or size(tv_layout, 0) < 32:
        raise ValueError(f"lane_coords: {tv_layout} must be a (thread, value) layout of at least 32 threads")
    nv = size(tv_layout, 1) if values is None else _need_count(values, "lane_coords", "values", low=1)
    if nv > size(tv_layout, 1):
        raise ValueError(f"lane_coords: {nv} values, but {tv_layout} has {size(tv_layout, 1)} a thread")
    return [[idx2crd(int(tv_layout(t, v)), tile_shape) for v in range(nv)] for t in range(32)]


def bank_grid(layout, elem_bytes=4):
    """A rows x cols list of lists: the bank of each element of a rank-2 layout."""
    _need_layout(layout, "bank_grid", composed=True)
    _need_count(elem_bytes, "bank_grid", "elem_bytes", low=1)
    if rank(layout) != 2:
        raise ValueError(f"bank_grid: needs a rank-2 layout, got {layout} of rank {rank(layout)}")
    check_cells(size(layout, 0), size(layout, 1), "bank_grid")
    return [[bank_of(_offset(layout, (m, n)) * elem_bytes) for n in range(size(layout, 1))]
            for m in range(size(layout, 0))]


def access_cells(access, rows, cols, op="access_cells"):
    """The (m, n) cells a warp access touches (per lane a coordinate (m, n), a list of them, or None), each
    checked to lie in a rows x cols grid: what the pictures outline."""
    if access is None:
        return []
    cells = []
    for a in _as_list(access, op, "a list (one entry per lane)"):
        for c in a if isinstance(a, list) else [] if a is None else [a]:
            if not (isinstance(c, tuple) and len(c) == 2 and is_int(c[0]) and is_int(c[1])):
                raise TypeError(f"{op}: an accessed cell must be a coordinate (m, n), got {quote(c)}")
            if not (0 <= c[0] < rows and 0 <= c[1] < cols):
                raise ValueError(f"{op}: accessed cell {c} is outside the {rows}x{cols} grid")
            cells.append(c)
    return cells


def _log2(n):
    return n.bit_length() - 1


def swizzle_for(row_elems, elem_bytes, vector_bytes=16):
    """The Swizzle<B,M,S> that makes reading one vector from each of consecutive rows conflict-free,
    for a row-major tile with `row_elems` elements per row (all sizes powers of two):

        M = log2(vector_bytes / elem_bytes)       a vector moves as a unit
        B = log2(min(row_bytes, 128) / vector_bytes)   vector slots of one row inside a 128-byte bank line
        S = log2(max(row_bytes, 128) / vector_bytes)   the row bits start S above the vector bits

    e.g. 32 floats, 4-byte reads: Sw<5,0,5>; 64 halves, 16-byte ldmatrix rows: Sw<3,3,3>; 32 halves: Sw<2,3,3>.
    A vector holds whole elements and fits in a row (elem_bytes <= vector_bytes <= row bytes).
    """
    row_elems = _need_count(row_elems, "swizzle_for", "row_elems", low=1, power_of_two=True)
    elem_bytes = _need_count(elem_bytes, "swizzle_for", "elem_bytes", low=1, power_of_two=True)
    vector_bytes = _need_count(vector_bytes, "swizzle_for", "vector_bytes", low=elem_bytes, power_of_two=True)
    row_bytes = row_elems * elem_bytes
    if vector_bytes > row_bytes:
        raise ValueError(f"swizzle_for: a {vector_bytes}-byte vector is wider than a row of {row_elems} "
                         f"{elem_bytes}-byte elements ({row_bytes} bytes)")
    M = _log2(vector_bytes // elem_bytes)
    B = _log2(max(min(row_bytes, 128) // vector_bytes, 1))
    S = _log2(max(row_bytes, 128) // vector_bytes)
    try:
        return Swizzle(B, M, S)
    except ValueError as e:
        raise ValueError(f"swizzle_for: rows of {row_bytes} bytes need {e}") from None
