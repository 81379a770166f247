"""The recorded schedule of the Hopper attention kernel (fa3_wgmma built with trace=True): where each stamp
sits in the buffer, the records read back from it, and a drawing, one row per warpgroup.

The lead thread of each warpgroup of the first few blocks writes %globaltimer (ns) at the start and end of each
phase: row `block * warpgroups + warpgroup` of a (rows, 2 x slots) uint64 buffer, slot s in columns 2s, 2s + 1.
Slot 0 is the phase a warpgroup does once (the producer's "load Q", a consumer's "epilogue"); slot
1 + 5 j + i is phase i of BLOCK_PHASES for key block j. A slot left 0 was not reached (or past the buffer).

    stamps = np.zeros((blocks * warpgroups, 2 * slots), np.uint64)      # on the device
    ... launch with it ...
    recs = record(stamps, warpgroups)          # [{cta, warpgroup, role, phase, block, start_ns, end_ns}, ...]
    draw(recs)                                 # a matplotlib Figure

RECORD (check_hopper --timeline) holds two builds' records of the same launch; `span_us` and `gemm_share`
read a build's.
"""

__all__ = ["ONCE", "BLOCK_PHASES", "PHASES", "RECORD", "slot", "slots_for", "record", "recorded", "span_us",
           "gemm_share", "draw"]

ONCE = {"producer": "load Q", "consumer": "epilogue"}
BLOCK_PHASES = ("load K", "load V", "S GEMM", "softmax", "PV GEMM")
PHASES = ("load Q",) + BLOCK_PHASES + ("epilogue",)
COLOURS = {"load Q": "#9e9e9e", "load K": "#8dd3c7", "load V": "#bebada", "S GEMM": "#fb8072",
           "softmax": "#80b1d3", "PV GEMM": "#fdb462", "epilogue": "#b3de69"}
RECORD = "kernels/attention/timeline.json"    # {device, shape, builds: {build: records}}, for chapter 10


def slot(phase, block=0):
    """The slot of `phase` of key block `block` (an int, or a kernel's run-time value)."""
    if phase in ONCE.values():
        return 0
    if phase not in BLOCK_PHASES:
        raise ValueError("timeline slot: phase must be one of %s, got %r" % (", ".join(PHASES), phase))
    return block * len(BLOCK_PHASES) + 1 + BLOCK_PHASES.index(phase)


def slots_for(blocks):
    """The slots a buffer needs for `blocks` key blocks."""
    return 1 + len(BLOCK_PHASES) * blocks


def record(stamps, warpgroups):
    """The phases a stamp buffer holds, as dicts {cta, warpgroup, role, phase, block, start_ns, end_ns}, with times
    from the earliest stamp; warpgroup 0 of each block is the producer. Sorted by (cta, warpgroup, start)."""
    import numpy as np
    s = np.asarray(stamps, dtype=np.uint64)
    if s.ndim != 2 or s.shape[1] % 2 or s.shape[0] % warpgroups:
        raise ValueError("timeline record: stamps must be (blocks x %d warpgroups, 2 x slots), got shape %s"
                         % (warpgroups, s.shape))
    hit = s[:, 0::2] != 0
    t0 = int(s[:, 0::2][hit].min()) if hit.any() else 0
    out = []
    for row in range(s.shape[0]):
        wg = row % warpgroups
        role = "producer" if wg == 0 else "consumer"
        for k in range(s.shape[1] // 2):
            start, end = int(s[row, 2 * k]), int(s[row, 2 * k + 1])
            if not start:
                continue
            if k == 0:
                phase, block = ONCE[role], None
            else:
                block, i = divmod(k - 1, len(BLOCK_PHASES))
                phase = BLOCK_PHASES[i]
            out.append(dict(cta=row // warpgroups, warpgroup=wg, role=role, phase=phase, block=block,
                            start_ns=start - t0, end_ns=end - t0))
    out.sort(key=lambda r: (r["cta"], r["warpgroup"], r["start_ns"]))
    return out


def recorded(root=None):
    """RECORD under `root` (default: this checkout), as JSON reads it."""
    import json
    import os
    root = root or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, RECORD), encoding="utf-8") as f:
        return json.load(f)


def span_us(records):
    """The time from the first stamp of `records` to the last, in microseconds."""
    return (max(r["end_ns"] for r in records) - min(r["start_ns"] for r in records)) / 1e3


def _covered(intervals):
    """The length of the union of (start, end) intervals."""
    total, end = 0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total, end = total + b - a, b
        elif b > end:
            total, end = total + b - end, b
    return total


def gemm_share(records):
    """{cta: the fraction of the block's time (its first stamp to its last) during which at least one of its
    consumers was inside a GEMM phase (stamped from before the wgmmas' issue to after their wait)}."""
    out = {}
    for cta in sorted({r["cta"] for r in records}):
        mine = [r for r in records if r["cta"] == cta]
        gemms = [(r["start_ns"], r["end_ns"]) for r in mine if r["phase"] in ("S GEMM", "PV GEMM")]
        out[cta] = _covered(gemms) / (span_us(mine) * 1e3)
    return out


def draw(records, title=None, ax=None):
    """A horizontal bar chart of `records`: one row per (cta, warpgroup), time in microseconds, phases coloured;
    a consumer's GEMMs in the lower half of its row and its softmax and epilogue in the upper half, so the
    overlapped phases stay visible. Returns the Figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    if ax is None:
        fig, ax = plt.subplots(figsize=(10, 0.5 + 0.45 * len({(r["cta"], r["warpgroup"]) for r in records})))
    else:
        fig = ax.figure
    rows = sorted({(r["cta"], r["warpgroup"]) for r in records})
    y = {key: i for i, key in enumerate(rows)}
    for r in records:
        lower = r["phase"] in ("S GEMM", "PV GEMM", "load K")
        base = y[(r["cta"], r["warpgroup"])] + (0.0 if lower else 0.4) - 0.4
        width = max(r["end_ns"] - r["start_ns"], 1) / 1e3
        ax.broken_barh([(r["start_ns"] / 1e3, width)], (base, 0.4), facecolors=COLOURS[r["phase"]],
                       edgecolor="black", linewidth=0.3)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(["CTA %d %s" % (c, "producer" if w == 0 else "consumer %d" % (w - 1)) for c, w in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time (us)")
    if title:
        ax.set_title(title)
    used = [p for p in PHASES if any(r["phase"] == p for r in records)]
    ax.legend(handles=[Patch(facecolor=COLOURS[p], label=p) for p in used], loc="upper right", fontsize="small",
              ncol=len(used))
    return fig
