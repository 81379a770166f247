"""Attention's arithmetic for chapter 10 and its benchmark (standard library only): how many FLOPs it does,
how many bytes a naive attention moves, and which (query, key) pairs a causal mask lets through, tile by tile,
read off an identity tensor.

    attention_flops(1, 16, 4096, 4096, 128, causal=False)       # 4 B H S_q S_k D
    naive_bytes(1, 16, 4096, 4096, 128, 2)                        # S and P through global memory
    visible(i, j, 6, 10, causal=True)                             # key j <= i + S_k - S_q
    tile_mask(0, 2, (4, 4), 6, 10, causal=True)                   # a tile's visibility, from its coordinates
"""

from ..identity import make_identity_tensor
from ..tensor import local_tile

__all__ = ["attention_flops", "naive_passes", "naive_bytes", "fused_bytes", "visible", "tile_mask", "tile_kind"]


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
