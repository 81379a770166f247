"""Attention's arithmetic for chapter 10 and its benchmark (standard library only; the figure imports
matplotlib inside): how many FLOPs it does, how many bytes a naive attention moves, which (query, key) pairs a
causal mask lets through, tile by tile, read off an identity tensor, and the measured sweep of the record.

    attention_flops(1, 16, 4096, 4096, 128, causal=False)       # 4 B H S_q S_k D
    naive_bytes(1, 16, 4096, 4096, 128, 2)                        # S and P through global memory
    visible(i, j, 6, 10, causal=True)                             # key j <= i + S_k - S_q
    tile_mask(0, 2, (4, 4), 6, 10, causal=True)                   # a tile's visibility, from its coordinates
    draw_sweep(load("kernels/attention"))                         # TFLOP/s against S, one line per kernel
"""

from ..identity import make_identity_tensor
from ..tensor import local_tile

__all__ = ["attention_flops", "naive_passes", "naive_bytes", "fused_bytes", "visible", "tile_mask", "tile_kind",
           "COLUMNS", "record_rows", "sweep", "draw_sweep"]

# the columns of benchmarks/attention/bench.py's attention.csv, and of each row of chapter 10's record
COLUMNS = ("dtype", "D", "mask", "S", "B", "H", "kernel", "ms", "TFLOP/s", "GB/s", "rel_err", "note")


def _counts(op, **sizes):
    for name, x in sizes.items():
        if isinstance(x, bool) or not isinstance(x, int) or x < 1:
            raise ValueError(f"{op}: {name} must be a whole number >= 1, got {x!r}")


def attention_flops(B, H, S_q, S_k, D, causal=False):
    """The FLOPs of forward attention as FlashAttention's papers and benchmarks count them: two GEMMs
    (S = Q K^T and O = P V) of 2 S_q S_k D each per head, 4 B H S_q S_k D in all, half that with a causal
    mask (whatever S_q and S_k; the softmax's exponentials are not counted)."""
    _counts("attention_flops", B=B, H=H, S_q=S_q, S_k=S_k, D=D)
    flops = 4 * B * H * S_q * S_k * D
    return flops // 2 if causal else flops


def naive_passes(causal=False):
    """How many times a naive attention moves the B H S_q S_k scores through global memory: S = Q K^T writes
    S; the softmax reads S and writes P; O = P V reads P (4); a causal mask applied in place (masked_fill_)
    reads and writes S once more (6)."""
    return 6 if causal else 4


def naive_bytes(B, H, S_q, S_k, D, elem_bytes, causal=False):
    """Bytes a naive attention (S materialised, softmax, P V) moves to and from global memory, at the least:
    naive_passes over the B H S_q S_k scores plus reading Q, K, V and writing O once, each element
    `elem_bytes` (2 for fp16 and bf16). K and V have S_k rows, Q and O S_q."""
    _counts("naive_bytes", B=B, H=H, S_q=S_q, S_k=S_k, D=D, elem_bytes=elem_bytes)
    return (naive_passes(causal) * B * H * S_q * S_k + fused_bytes(B, H, S_q, S_k, D, 1)) * elem_bytes


def fused_bytes(B, H, S_q, S_k, D, elem_bytes):
    """Bytes a fused attention must move at the least: Q, K, V read once, O written once (the scores never
    leave the chip)."""
    _counts("fused_bytes", B=B, H=H, S_q=S_q, S_k=S_k, D=D, elem_bytes=elem_bytes)
    return 2 * B * H * (S_q + S_k) * D * elem_bytes


def visible(i, j, S_q, S_k, causal=False):
    """Whether query i sees key j: inside the S_q x S_k problem and, with a causal mask, j <= i + S_k - S_q
    (the diagonal aligned bottom-right, as FlashAttention aligns it: the last query sees every key)."""
    inside = 0 <= i < S_q and 0 <= j < S_k
    return inside and (not causal or j <= i + S_k - S_q)


def tile_mask(m_block, n_block, tile, S_q, S_k, causal=False):
    """The visibility of each element of tile (m_block, n_block) of the scores, as a list of rows of bools:
    the tile of an identity tensor over the problem (local_tile of make_identity_tensor) gives each element
    its (query, key) coordinate, and `visible` decides. Tiles hanging over the edge are padded to whole tiles
    (the identity tensor covers whole tiles), so their outside elements are not visible."""
    BM, BN = tile
    _counts("tile_mask", BM=BM, BN=BN, S_q=S_q, S_k=S_k)
    rows, cols = -(-S_q // BM) * BM, -(-S_k // BN) * BN
    coords = local_tile(make_identity_tensor((rows, cols)), (BM, BN), (m_block, n_block))
    return [[visible(*tuple(coords(r, c)), S_q, S_k, causal) for c in range(BN)] for r in range(BM)]


def tile_kind(m_block, n_block, tile, S_q, S_k, causal=False):
    """"full" (every element visible: no mask needed), "partial" (the kernel masks it) or "skip" (nothing
    visible: the kernel never loads it) for tile (m_block, n_block) of the scores."""
    cells = [v for row in tile_mask(m_block, n_block, tile, S_q, S_k, causal) for v in row]
    return "full" if all(cells) else "partial" if any(cells) else "skip"


# ---- the record of benchmarks/attention/bench.py ------------------------------------------------------------
def record_rows(record):
    """The rows of a record (kernels/attention/records.json, as records.load reads it) as dicts keyed by
    COLUMNS; a ValueError for a row of another width."""
    out = []
    for row in record["rows"]:
        if len(row) != len(COLUMNS):
            raise ValueError(f"record_rows: a row has {len(row)} entries, not the {len(COLUMNS)} of {COLUMNS}: {row!r}")
        out.append(dict(zip(COLUMNS, row)))
    return out


def sweep(record, dtype="fp16"):
    """{(D, mask): {kernel: [(S, TFLOP/s), ...] by increasing S}} of the record's rows of `dtype` that have a
    TFLOP/s (a row the kernel refused or failed has none and is left out), in the record's order."""
    out = {}
    for r in record_rows(record):
        if r["dtype"] == dtype and r["TFLOP/s"] is not None:
            out.setdefault((r["D"], r["mask"]), {}).setdefault(r["kernel"], []).append((r["S"], r["TFLOP/s"]))
    return {key: {k: sorted(pts) for k, pts in lines.items()} for key, lines in out.items()}


def draw_sweep(record, dtype="fp16"):
    """The measured sweep as a matplotlib figure: one panel per (D, mask), TFLOP/s against S (log scale), one
    line per kernel; the device and date of the run in the title. Returns the figure."""
    import matplotlib.pyplot as plt
    lines = sweep(record, dtype)
    if not lines:
        raise ValueError(f"draw_sweep: the record has no {dtype} row with a TFLOP/s")
    keys = sorted(lines, key=lambda k: (k[0], k[1] != "none"))
    names = list(dict.fromkeys(n for key in keys for n in lines[key]))
    fig, axs = plt.subplots(1, len(keys), figsize=(3.6 * len(keys) + 0.6, 3.4), sharey=True, squeeze=False)
    for ax, key in zip(axs[0], keys):
        for i, name in enumerate(names):
            pts = lines[key].get(name)
            if pts:
                ax.plot([s for s, _ in pts], [t for _, t in pts], "o-", ms=3, lw=1.2, color=f"C{i}", label=name)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("S (queries = keys)")
        ax.set_title(f"D = {key[0]}, mask {key[1]}", fontsize=9)
        ax.grid(True, lw=0.3)
    axs[0][0].set_ylabel("TFLOP/s")
    axs[0][-1].legend(fontsize=7, loc="best")
    run = record.get("run") or {}
    fig.suptitle(f"forward attention, {dtype}: {run.get('device', 'device not recorded')}, {run.get('date', '')}",
                 fontsize=10)
    fig.tight_layout()
    return fig
