"""The stage/phase logic of a warp-specialised Hopper GEMM pipeline, and a small event simulation of it.

The main loop of kernels/hopper_gemm.py streams K in k-tiles through `stages` shared-memory buffers. Each
stage s has two mbarriers (PTX `mbarrier`, arrival count fixed at init):
  full[s]   count 1: the producer arrives once (`arrive.expect_tx`, announcing the bytes to come); the
            phase completes when that arrival is in AND the TMA copies have delivered every announced byte;
  empty[s]  count `empty_arrivals(consumers)`: one arrival per consumer warp when it is done with the stage.
A phase of an mbarrier completes when its pending count reaches zero; the barrier then starts the next
phase. `try_wait.parity P` succeeds once the phase of parity P is complete, i.e. while the *current*
phase's parity is not P (so on a fresh barrier, parity 1 passes at once: it names the phase "before" 0).

K-tile kt uses stage kt % stages for the (kt // stages)-th time, so:
    consumer waits full[s]  with parity  (kt // stages) & 1        (that use's fill is completion kt // stages)
    producer waits empty[s] with parity  ((kt // stages) + 1) & 1  (the previous use's release), kt >= stages

`simulate_pipeline` runs these very functions against a model of mbarriers, a TMA engine and the tensor
cores, and returns a timeline (what `cutelite.teach.viz.draw_pipeline` draws). Standard library only.
"""

import heapq
from dataclasses import dataclass, field

__all__ = ["stage_of", "full_parity", "empty_parity", "producer_waits", "empty_arrivals", "tma_box_bytes",
           "expect_tx_bytes", "MBarrier", "PipelineRun", "simulate_pipeline"]


def stage_of(kt, stages):
    """The shared-memory stage k-tile kt goes through."""
    return kt % stages


def full_parity(kt, stages):
    """The parity a consumer waits for on full[stage_of(kt)] before reading k-tile kt."""
    return (kt // stages) & 1


def empty_parity(kt, stages):
    """The parity the producer waits for on empty[stage_of(kt)] before refilling it with k-tile kt."""
    return ((kt // stages) + 1) & 1


def producer_waits(kt, stages):
    """Whether the producer must wait before loading k-tile kt (the first `stages` stages start empty)."""
    return kt >= stages


def empty_arrivals(consumers, warps_per_consumer=4):
    """The arrival count of an empty[s] barrier: one arrival per warp of every consumer warpgroup."""
    return consumers * warps_per_consumer


def tma_box_bytes(box_shape, element_bits):
    """Bytes one TMA copy of a box moves: product of the box's extents times the element size."""
    n = 1
    for e in box_shape:
        n *= e
    if (n * element_bits) % 8:
        raise ValueError(f"tma_box_bytes: a box of {box_shape} {element_bits}-bit elements is not whole bytes")
    return n * element_bits // 8


def expect_tx_bytes(boxes, element_bits):
    """The transaction count the producer announces on full[s] (`mbarrier.arrive.expect_tx`): the bytes of
    every box copied into the stage."""
    return sum(tma_box_bytes(b, element_bits) for b in boxes)


class MBarrier:
    """A model of one mbarrier: an arrival count, a pending transaction (byte) count and a phase number.

    Post: phase == number of completed phases; try_wait(p) is True exactly when phase & 1 != p.
    """

    def __init__(self, name, count):
        self.name, self.count = name, count
        self.phase, self.pending, self.tx = 0, count, 0

    def arrive(self, expect_tx=0):
        self.tx += expect_tx
        self.pending -= 1
        if self.pending < 0:
            raise RuntimeError(f"{self.name}: more arrivals than its count {self.count} in phase {self.phase}")
        return self._maybe_complete()

    def complete_tx(self, nbytes):
        self.tx -= nbytes
        return self._maybe_complete()

    def _maybe_complete(self):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count
            return True
        return False

    def try_wait(self, parity):
        return (self.phase & 1) != parity


@dataclass
class PipelineRun:
    """What simulate_pipeline returns. intervals: (row, start, end, kind, k-tile) with kind "tma", "mma",
    "wait"; phases: (time, barrier name, completed phase number); errors: what went wrong (stale data read,
    deadlock); end: the time the last consumer finished."""
    stages: int
    consumers: int
    ktiles: int
    intervals: list = field(default_factory=list)
    phases: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    end: float = 0.0

    def rows(self):
        return ["producer (TMA)"] + [f"consumer {c + 1} (wgmma)" for c in range(self.consumers)]


def simulate_pipeline(ktiles=8, stages=4, consumers=2, load_time=1.0, mma_time=1.0, stage_bytes=49152,
                      full_parity=full_parity, empty_parity=empty_parity):
    """Run the producer and `consumers` consumers of the kernel's main loop on modelled hardware.

    Model: the producer issues k-tile kt's TMA copies once empty[s] lets it; copies go through one copy
    engine, each k-tile taking `load_time` after the previous one's end; when its bytes land, full[s]
    completes. A consumer waits on full[s], runs its wgmma for `mma_time` (the consumers share the SM's
    tensor cores, so their wgmmas run one after another), checks it read k-tile kt, and its 4 warps arrive
    on empty[s]. The parity functions are parameters so that a wrong one can be tried.

    Post: with the module's parities, no errors; every k-tile is loaded once and multiplied by every
    consumer; full[s] completes ceil((ktiles - s) / stages) times.
    """
    run = PipelineRun(stages, consumers, ktiles)
    full = [MBarrier(f"full[{s}]", 1) for s in range(stages)]
    empty = [MBarrier(f"empty[{s}]", empty_arrivals(consumers)) for s in range(stages)]
    contents = [None] * stages          # which k-tile each stage holds
    tx = stage_bytes                    # announced by arrive.expect_tx, delivered by the copies
    state = {"engine": 0.0, "tensor": 0.0}
    queue, seq = [], [0]

    def push(t, fn):
        seq[0] += 1
        heapq.heappush(queue, (t, seq[0], fn))

    def note(bar, t, completed):
        if completed:
            run.phases.append((t, bar.name, bar.phase))

    def producer():
        for kt in range(ktiles):
            s = stage_of(kt, stages)
            if producer_waits(kt, stages):
                yield ("wait", empty[s], empty_parity(kt, stages), 0, kt)
            t = yield ("now",)
            note(full[s], t, full[s].arrive(expect_tx=tx))
            start = max(t, state["engine"])
            state["engine"] = start + load_time

            def land(t, s=s, kt=kt):
                contents[s] = kt
                note(full[s], t, full[s].complete_tx(tx))
            run.intervals.append((0, start, start + load_time, "tma", kt))
            push(start + load_time, land)

    def stale(c, s, kt, t, when):
        if contents[s] != kt:
            run.errors.append(f"consumer {c + 1} {when} k-tile {kt} at t={t:g}, but stage {s} holds "
                              f"{'nothing' if contents[s] is None else 'k-tile %d' % contents[s]}")

    def consumer(c):
        for kt in range(ktiles):
            s = stage_of(kt, stages)
            yield ("wait", full[s], full_parity(kt, stages), c + 1, kt)
            t = yield ("now",)
            start = max(t, state["tensor"])
            state["tensor"] = start + mma_time
            run.intervals.append((c + 1, start, start + mma_time, "mma", kt))
            yield ("sleep", start)
            t = yield ("now",)
            stale(c, s, kt, t, "started")
            yield ("sleep", start + mma_time)
            t = yield ("now",)
            stale(c, s, kt, t, "finished")
            for _ in range(4):
                note(empty[s], t, empty[s].arrive())
            run.end = max(run.end, t)

    agents = [producer()] + [consumer(c) for c in range(consumers)]
    waiting = []                          # (agent, barrier, parity, row, kt, since)

    def step(agent, t, value=None):
        while True:
            try:
                cmd = agent.send(value)
            except StopIteration:
                return
            except RuntimeError as e:      # an mbarrier misuse stops that agent, as a trap would
                run.errors.append(str(e))
                return
            value = None
            if cmd[0] == "now":
                value = t
            elif cmd[0] == "sleep":
                push(cmd[1], lambda t2, a=agent: step(a, t2, None))
                return
            elif cmd[0] == "wait":
                _, bar, parity, row, kt = cmd
                if bar.try_wait(parity):
                    continue
                waiting.append((agent, bar, parity, row, kt, t))
                return

    for a in agents:
        push(0.0, lambda t, a=a: step(a, t, None))
    while queue:
        t, _, fn = heapq.heappop(queue)
        fn(t)
        again = True
        while again:                       # barrier changes may release waiters at this very time
            again = False
            for w in list(waiting):
                agent, bar, parity, row, kt, since = w
                if bar.try_wait(parity):
                    waiting.remove(w)
                    if t > since:
                        run.intervals.append((row, since, t, "wait", kt))
                    step(agent, t, None)
                    again = True
    for agent, bar, parity, row, kt, since in waiting:
        run.errors.append(f"deadlock: {run.rows()[row]} waits forever on {bar.name} parity {parity} "
                          f"(k-tile {kt}; the barrier is in phase {bar.phase})")
    return run
