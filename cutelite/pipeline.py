"""The producer/consumer pipeline of a warp-specialised Hopper GEMM: its state, its barriers, the consumers'
asynchronous wgmma groups, and an event simulation that checks a protocol against PTX's rules.

The main loop streams K in k-tiles through `stages` shared-memory buffers. Each stage s has two mbarriers
(PTX `mbarrier`, arrival count fixed at init):
  full[s]   count 1: the producer arrives once (`arrive.expect_tx`, announcing the bytes to come); the
            phase completes when that arrival is in AND the TMA copies have delivered every announced byte;
  empty[s]  count `empty_arrivals(consumers)`: one arrival per consumer warp when it is done with the stage.
A phase completes when its pending count reaches zero; the barrier then starts the next phase.
`try_wait.parity P` succeeds once the phase of parity P is complete, i.e. while the *current* phase's
parity is not P (on a fresh barrier parity 1 passes at once: it names the phase "before" phase 0).

Where a role is in the ring is a `PipelineState` (CuTe's): stage index, phase, count. The consumers start
at phase 0 (they wait for fills), the producer at phase 1 (its first `stages` waits on the fresh empty
barriers pass at once). A consumer issues its wgmmas asynchronously, in groups (`wgmma.fence`,
`mma_async` x4, `wgmma.commit_group`), and `wgmma.wait_group N` returns once at most N of its groups are
still pending. The kernel waits with N = 1 and then releases the stage of k-tile kt - 1: the group of
k-tile kt stays in flight while the producer refills the stage k-tile kt - 1 used.

`simulate_pipeline` runs this protocol against a model of mbarriers, a TMA engine and the tensor cores, and
returns a timeline (what `cutelite.teach.viz.draw_pipeline` draws) with every rule it broke; a run that
hangs names the barrier each stuck role waits on and what that barrier's phase still lacks.

After the main loop, a TMA-store epilogue hands shared memory from the threads' stores (the generic proxy)
to the copy engine (the async proxy) and back: `SharedMemoryProxies` checks the fences and waits that
order the two (`tma_store_epilogue` writes the kernel's steps out).

Beside it, the numbers such a pipeline is built from: the bytes a stage announces (expect_tx_bytes), the
boundary its stages start on (stage_alignment, desc_base_offset), the registers its roles trade with
`setmaxnreg` (setmaxnreg_plan), and a cluster's arrival counts (its multicast masks: tma.multicast_mask).
Standard library only.
"""

import heapq
import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from .errors import quote
from .int_tuple import is_int

__all__ = ["PipelineState", "make_producer_start_state", "stage_of", "full_parity", "empty_parity",
           "producer_waits", "empty_arrivals", "tma_box_bytes", "expect_tx_bytes", "stage_alignment",
           "desc_base_offset", "launch_register_cap", "setmaxnreg_plan", "setmaxnreg_room",
           "MBarrier", "WgmmaGroups",
           "Op", "consumer_ops", "PipelineRun", "simulate_pipeline",
           "EpilogueOp", "tma_store_epilogue", "SharedMemoryProxies", "check_epilogue"]


MAX_KTILES = 4096        # consumer_ops' limit: a model, not a GEMM
MAX_SIMULATED = 2048     # simulate_pipeline's limit on ktiles x consumers: a run it accepts takes well under a second
MBARRIER_MAX = 2 ** 20 - 1   # the most an mbarrier counts: arrivals, and bytes (tx-count) either way (PTX ISA,
                             # mbarrier; CUTLASS barrier.h and the CuTe DSL's pipeline helpers: 2^20 - 1)
MAX_REGISTERS = 255      # registers a thread may have (CUDA C++ Programming Guide, technical specifications)


def _count(value, what, low=0, high=None):
    if not is_int(value) or isinstance(value, bool):
        raise TypeError(f"{what} must be an int, got {quote(value)} ({type(value).__name__})")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{what} must be {f'from {low} to {high}' if high is not None else f'at least {low}'}, "
                         f"got {quote(value)}")
    return int(value)


# ---- where a role is in the ring ----------------------------------------------------------------------------
class PipelineState:
    """CuTe's PipelineState (cutlass/pipeline/sm90_pipeline.hpp): a role's position in a ring of `stages`
    buffers: the stage `index`, the `phase` parity it waits for there, and the `count` of k-tiles passed.

    Post: advance(n) from (i, p, c) gives ((i + n) % stages, p ^ ((i + n) // stages % 2), c + n), in place.
    """

    __slots__ = ("stages", "index", "phase", "count")

    def __init__(self, stages, index=0, phase=0, count=0):
        self.stages = _count(stages, "PipelineState: stages", 1)
        self.index = _count(index, "PipelineState: index")
        if self.index >= self.stages:
            raise ValueError(f"PipelineState: index {index} is not a stage of {stages}")
        if phase not in (0, 1) or isinstance(phase, bool):
            raise ValueError(f"PipelineState: phase must be 0 or 1, got {quote(phase)}")
        self.phase, self.count = int(phase), _count(count, "PipelineState: count")

    def advance(self, n=1):
        """Move n k-tiles on (C++: ++state, or state.advance(n)); returns the state itself."""
        total = self.index + _count(n, "PipelineState.advance: n")
        self.index, self.phase = total % self.stages, self.phase ^ ((total // self.stages) & 1)
        self.count += n
        return self

    def __eq__(self, other):
        return isinstance(other, PipelineState) and (self.stages, self.index, self.phase, self.count) == \
            (other.stages, other.index, other.phase, other.count)

    def __repr__(self):
        return f"PipelineState(stages={self.stages}, index={self.index}, phase={self.phase}, count={self.count})"


def make_producer_start_state(stages):
    """The producer's first state: stage 0, phase 1 (CuTe's make_producer_start_state): the stages start empty,
    so its waits on the fresh empty barriers pass until it comes round to a stage the second time."""
    return PipelineState(stages, 0, 1, 0)


def stage_of(kt, stages):
    """The shared-memory stage k-tile kt goes through: the index of PipelineState(stages) advanced kt times."""
    return PipelineState(stages).advance(_count(kt, "stage_of: kt")).index


def full_parity(kt, stages):
    """The parity a consumer waits for on full[stage_of(kt)] before reading k-tile kt: the phase of the
    consumer's state (starting at phase 0) advanced kt times."""
    return PipelineState(stages).advance(_count(kt, "full_parity: kt")).phase


def empty_parity(kt, stages):
    """The parity the producer waits for on empty[stage_of(kt)] before filling it with k-tile kt: the phase
    of the producer's state (starting at phase 1) advanced kt times."""
    return make_producer_start_state(stages).advance(_count(kt, "empty_parity: kt")).phase


def producer_waits(kt, stages):
    """Whether the producer's wait before k-tile kt can block: only from the second round on (kt >= stages);
    the first `stages` waits are on fresh barriers with parity 1, and pass at once."""
    return _count(kt, "producer_waits: kt") >= _count(stages, "producer_waits: stages", 1)


def _cluster(shape, what):
    """(CTAs along M, CTAs along N) of a cluster: at most 16 CTAs, the most a cluster (and a ctaMask) has."""
    if not isinstance(shape, tuple) or len(shape) != 2:
        raise TypeError(f"{what}: cluster_shape must be a tuple (CTAs along M, CTAs along N), got {quote(shape)}")
    cm, cn = (_count(e, f"{what}: cluster_shape", 1, 16) for e in shape)
    if cm * cn > 16:
        raise ValueError(f"{what}: a cluster has at most 16 CTAs; {cm} x {cn} has {cm * cn}")
    return cm, cn


def empty_arrivals(consumers, warps_per_consumer=4, cluster_shape=(1, 1)):
    """The arrival count of an empty[s] barrier: one arrival per warp of every consumer warpgroup that reads
    the stage (1 to 8 warpgroups of up to 4 warps: a block has at most 1024 threads). In a cluster with TMA
    multicast a CTA's stage is also written by the CTAs of its cluster row and column, so their consumers must
    release it too: (CTAs along M + CTAs along N - 1) times as many."""
    cm, cn = _cluster(cluster_shape, "empty_arrivals")
    return (cm + cn - 1) * _count(consumers, "empty_arrivals: consumers", 1, 8) * \
        _count(warps_per_consumer, "empty_arrivals: warps_per_consumer", 1, 4)


def tma_box_bytes(box_shape, element_bits):
    """Bytes one TMA copy of a box moves: product of the box's extents times the element size.

    A box has 1 to 5 dimensions (PTX cp.async.bulk.tensor: .1d to .5d) of 1 to 256 elements each (C++
    make_tma_copy_desc: assert smem_box_shape[i] <= 256; the driver's boxDim), of 8-, 16-, 32- or 64-bit
    elements (the tensor map's data types, tma.DATA_TYPES)."""
    what = "tma_box_bytes"
    if not isinstance(box_shape, tuple):
        raise TypeError(f"{what}: a box is a tuple of extents, got {quote(box_shape)}")
    if not 1 <= len(box_shape) <= 5:
        raise ValueError(f"{what}: a box has 1 to 5 dimensions, got {quote(box_shape)}")
    n = 1
    for e in box_shape:
        n *= _count(e, f"{what}: box extent", 1, 256)
    if element_bits not in (8, 16, 32, 64) or not is_int(element_bits):
        raise ValueError(f"{what}: element_bits must be 8, 16, 32 or 64 (a tensor map's element types), got "
                         f"{quote(element_bits)}")
    return n * element_bits // 8


def expect_tx_bytes(boxes, element_bits):
    """The transaction count the producer announces on full[s] (`mbarrier.arrive.expect_tx`): the bytes of
    every box copied into the stage; at most 2^20 - 1, the most an mbarrier's tx-count holds."""
    if not isinstance(boxes, (list, tuple)) or not boxes:
        raise TypeError(f"expect_tx_bytes: boxes must be a non-empty list of box shapes, got {quote(boxes)}")
    total = sum(tma_box_bytes(b, element_bits) for b in boxes)
    if total > MBARRIER_MAX:
        raise ValueError(f"expect_tx_bytes: {total} bytes is more than an mbarrier's tx-count holds (2^20 - 1)")
    return total


# ---- stages in shared memory, roles' registers, clusters --------------------------------------------------
def stage_alignment(swizzle):
    """The byte boundary a stage must start on so that a swizzle computed from offsets inside the stage (the
    layout's, cutelite's and CuTe's) is the one the hardware computes from shared-memory addresses (the
    TMA's writes, wgmma's reads): the swizzle's period, 2 to the bit just above the bits it reads and flips.
    Sw<3,4,3> on bytes (128-byte swizzle): 1024 = 8 rows of 128 bytes; Sw<2,4,3>: 512; Sw<1,4,3>: 256.

    Post: swizzle(x + p) == swizzle(x) + p for every x >= 0, p = stage_alignment(swizzle)."""
    if not hasattr(swizzle, "yyy_msk"):
        raise TypeError(f"stage_alignment: expected a Swizzle, got {quote(swizzle)}")
    return 1 << (swizzle.yyy_msk | swizzle.zzz_msk).bit_length()


def desc_base_offset(address, swizzle):
    """The wgmma descriptor's base-offset field (bits 49-51) for a tile at shared-memory byte `address`: 0 when
    the address is on the swizzle's period (stage_alignment), else bits 7-9 of the address (the 128-byte row
    within the repeating 8-row pattern), the PTX ISA's formula. CuTe always writes 0 and so needs aligned tiles.
    The swizzle is one a descriptor names, Sw<0..3,4,3> on bytes; the address one its 14-bit start address
    field holds (16-byte units: below 2^18)."""
    if not is_int(address) or not 0 <= address < 1 << 18 or address % 16:
        raise ValueError(f"desc_base_offset: address must be a multiple of 16 bytes from 0 to 2^18 - 16 (a "
                         f"descriptor's start address), got {quote(address)}")
    period = stage_alignment(swizzle)
    if (swizzle.base, swizzle.shift) != (4, 3) or not 0 <= swizzle.bits <= 3:
        raise ValueError(f"desc_base_offset: {swizzle} is not a swizzle a descriptor names (Sw<0..3,4,3> on bytes)")
    return 0 if address % period == 0 else (address >> 7) & 7


def launch_register_cap(threads, register_file=65536, granule=8):
    """The most registers per thread a kernel of `threads` threads a block (1 to 1024) can be compiled for and
    still fit one block on an SM: the register file over the block's warps (a partial warp takes a whole
    warp's), rounded down to the allocation granule (8 a thread), and at most 255, the most a thread may have
    (CUDA C++ Programming Guide, technical specifications). A thread compiled for 255 holds 256, a whole
    number of granules."""
    what = "launch_register_cap"
    granule = _count(granule, f"{what}: granule", 1)
    register_file = _count(register_file, f"{what}: register_file", 1)
    warps = -(-_count(threads, f"{what}: threads", 1, 1024) // 32)
    cap = register_file // (32 * warps) // granule * granule
    if cap < granule:
        raise ValueError(f"{what}: a register file of {register_file} leaves {warps} warps fewer than one granule "
                         f"of {granule} registers a thread")
    return min(MAX_REGISTERS, cap)


def _allotted(cap, granule=8):
    """The registers a thread compiled for `cap` holds: cap rounded up to the allocation granule."""
    return -(-cap // granule) * granule


def setmaxnreg_plan(roles, register_file=65536):
    """Check a warp-specialised block's `setmaxnreg` counts and return what they move: roles is a list of
    (name, warpgroups, registers per thread after setmaxnreg). Each count must be a multiple of 8 from 24 to
    256 (PTX). The registers `.inc` takes come from a pool PTX keeps per CTA, which only the block's own
    `.dec`s fill: after the change the block must still fit the registers it was given at launch,
    threads x the registers each holds at launch (the rest of the SM's register file is not the block's).

    Returns {"threads", "launch_cap" (launch_register_cap), "cta_registers" (threads x the registers a thread
    compiled for launch_cap holds: the block's registers), "roles": [(name, warpgroups, registers, registers
    given (+) or taken (-) from the CTA's pool)], "total" (the block's registers after setmaxnreg)}."""
    if not isinstance(roles, (list, tuple)) or not roles or not all(
            isinstance(r, tuple) and len(r) == 3 and isinstance(r[0], str) for r in roles):
        raise TypeError(f"setmaxnreg_plan: roles must be a non-empty list of (name, warpgroups, registers), got "
                        f"{quote(roles)}")
    threads = 128 * sum(_count(wg, f"setmaxnreg_plan: warpgroups of {quote(name)}", 1, 8) for name, wg, _ in roles)
    if threads > 1024:
        raise ValueError(f"setmaxnreg_plan: a block has 1 to 8 warpgroups (1024 threads), got {threads // 128}")
    cap = launch_register_cap(threads, register_file)
    held = _allotted(cap)
    rows, total = [], 0
    for name, wg, regs in roles:
        if not is_int(regs) or not 24 <= regs <= 256 or regs % 8:
            raise ValueError(f"setmaxnreg_plan: {quote(name)}: setmaxnreg takes a multiple of 8 from 24 to 256 "
                             f"(PTX), got {quote(regs)}")
        rows.append((name, wg, regs, 128 * wg * (held - regs)))
        total += 128 * wg * regs
    if total > threads * held:
        raise ValueError(f"setmaxnreg_plan: the roles need {total} registers after setmaxnreg, more than the "
                         f"{threads * held} the block was given at launch ({threads} threads x {held})")
    return {"threads": threads, "launch_cap": cap, "cta_registers": threads * held, "roles": rows, "total": total}


def setmaxnreg_room(roles, warpgroups, register_file=65536):
    """The largest `setmaxnreg` count that `warpgroups` more warpgroups can ask for beside `roles` (as in
    setmaxnreg_plan; roles may be empty): what the block's launch registers (as setmaxnreg_plan's
    cta_registers, for the whole block) leave for them, per thread, down to a multiple of 8, at most 256.
    Raises when not even 24 are left."""
    if isinstance(roles, (list, tuple)) and not roles:
        used, beside = 0, 0
    else:
        used, beside = setmaxnreg_plan(roles, register_file)["total"], sum(wg for _, wg, _ in roles)
    threads = 128 * _count(warpgroups, "setmaxnreg_room: warpgroups", 1, 8)
    block = threads + 128 * beside
    if block > 1024:
        raise ValueError(f"setmaxnreg_room: a block has at most 8 warpgroups, got {block // 128}")
    left = block * _allotted(launch_register_cap(block, register_file)) - used
    room = min(256, left // threads // 8 * 8)
    if room < 24:
        raise ValueError(f"setmaxnreg_room: {left} registers left for {threads} threads: fewer "
                         "than setmaxnreg's 24 a thread")
    return room


# ---- the hardware's rules ------------------------------------------------------------------------------------
class MBarrier:
    """A model of one mbarrier: an arrival count (1 to 2^20 - 1), a pending transaction (byte) count and a
    phase number. Misuse while it runs (more arrivals than the count, a tx-count past +-(2^20 - 1)) raises
    RuntimeError, as a trap would stop the kernel; a wrong argument raises TypeError or ValueError.

    Post: phase == number of completed phases; try_wait(p) is True exactly when phase & 1 != p.
    """

    def __init__(self, name, count):
        self.name, self.count = name, _count(count, f"MBarrier {quote(name)}: count", 1, MBARRIER_MAX)
        self.phase, self.pending, self.tx = 0, self.count, 0

    def arrive(self, expect_tx=0):
        """One arrival that announces `expect_tx` bytes to come (mbarrier.arrive.expect_tx when > 0)."""
        self._add_tx(self._bytes(expect_tx, "arrive: expect_tx"))
        self.pending -= 1
        if self.pending < 0:
            raise RuntimeError(f"{self.name}: more arrivals than its count {self.count} in phase {self.phase}")
        return self._maybe_complete()

    def complete_tx(self, nbytes):
        """`nbytes` bytes of a copy landed (the copy's complete_tx on the barrier)."""
        self._add_tx(-self._bytes(nbytes, "complete_tx: nbytes"))
        return self._maybe_complete()

    def _bytes(self, n, what):
        if type(n) is int and 0 <= n <= MBARRIER_MAX:       # the simulation's many calls: no message built
            return n
        return _count(n, f"{quote(self.name)}: {what}", 0, MBARRIER_MAX)

    def _add_tx(self, n):
        self.tx += n
        if abs(self.tx) > MBARRIER_MAX:
            raise RuntimeError(f"{self.name}: tx-count {self.tx} in phase {self.phase} leaves PTX's range "
                               "-(2^20 - 1)..2^20 - 1")

    def _maybe_complete(self):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count
            return True
        return False

    def try_wait(self, parity):
        if not is_int(parity) or parity not in (0, 1):
            raise ValueError(f"{quote(self.name)}: try_wait: parity must be 0 or 1, got {quote(parity)}")
        return (self.phase & 1) != parity

    def lacks(self):
        """What the current phase still waits for, in words (a deadlock's diagnosis)."""
        got = self.count - self.pending
        text = f"its phase {self.phase} has {got} of its {self.count} arrivals"
        if self.tx > 0:
            return text + f" and still expects {self.tx} announced bytes that no copy delivers"
        if got == 0:
            return text + ": every role that could arrive is itself waiting, or done"
        return text + (": the missing arrivals never come" if self.pending else "")


class WgmmaGroups:
    """One warpgroup's wgmma groups as PTX defines them: `mma_async` joins the open group, `commit_group`
    closes it, and `wait_group(n)` returns once at most the n most recent committed groups are pending.

    The model is strict: a group counts as complete only when a wait_group has covered it, the latest moment
    PTX allows, whatever the hardware's timing; so a protocol that is right here is right on any GPU.
    Post: after wait_group(n), pending() lists at most n groups, the newest.
    """

    def __init__(self):
        self.open, self.committed = [], []          # k-tiles of the open group; committed groups, oldest first

    def mma_async(self, ktile):
        self.open.append(ktile)

    def commit_group(self):
        self.committed.append(tuple(self.open))
        self.open = []

    def wait_group(self, n):
        """Cover all but the n newest committed groups; returns the groups this wait completed."""
        n = _count(n, "wgmma.wait_group: N", 0, 7)                # CuTe: "N must be in range [0, 7]"
        keep = len(self.committed) - n
        if keep <= 0:
            return []
        done, self.committed = self.committed[:keep], self.committed[keep:]
        return done

    def pending(self):
        """The groups not known complete: committed but not covered by a wait, and the open one."""
        return self.committed + ([tuple(self.open)] if self.open else [])

    def may_read(self, ktile):
        """Whether a group that is not known complete reads k-tile `ktile`."""
        return any(ktile in g for g in self.pending())


# ---- a consumer's program ------------------------------------------------------------------------------------
class Op(NamedTuple):
    """One instruction of a consumer's main loop: kind is "wait_full", "fence", "mma", "commit", "wait_group"
    or "release"; ktile the iteration it belongs to (ktiles for the drain after the loop); arg the parity
    (wait_full), the k-block (mma), N (wait_group) or the k-tile whose stage is freed (release)."""
    kind: str
    ktile: int
    stage: int = -1
    arg: int = 0

    def __str__(self):
        return {"wait_full": f"mbarrier.try_wait.parity  full[{self.stage}], {self.arg}",
                "fence": "wgmma.fence",
                "mma": f"wgmma.mma_async           stage {self.stage}, k-block {self.arg}",
                "commit": "wgmma.commit_group",
                "wait_group": f"wgmma.wait_group          {self.arg}",
                "release": f"mbarrier.arrive           empty[{self.stage}]   (frees k-tile {self.arg}'s stage)",
                }[self.kind]


def consumer_ops(ktiles, stages, wait_group=1, release_lag=1, kblocks=4, phase=0):
    """The instructions one consumer warpgroup executes in the main loop, as the kernel writes it: per k-tile,
    wait for the stage to be full, issue its `kblocks` wgmmas as one group, `wgmma.wait_group wait_group`, then
    release the stage of k-tile kt - release_lag; after the loop, `wgmma.wait_group 0` and the last releases.
    The stages come from PipelineStates (`phase`: the consumer's start phase, 0 when right)."""
    ktiles = _count(ktiles, "consumer_ops: ktiles", 1, MAX_KTILES)
    release_lag = _count(release_lag, "consumer_ops: release_lag")
    kblocks = _count(kblocks, "consumer_ops: kblocks", 1, 64)
    wait_group = _count(wait_group, "consumer_ops: wait_group", 0, 7)
    read, free = PipelineState(stages, phase=phase), PipelineState(stages, phase=phase)
    ops = []
    for kt in range(ktiles):
        ops += [Op("wait_full", kt, read.index, read.phase), Op("fence", kt)]
        ops += [Op("mma", kt, read.index, kb) for kb in range(kblocks)]
        ops += [Op("commit", kt), Op("wait_group", kt, arg=wait_group)]
        if kt >= release_lag:
            ops.append(Op("release", kt, free.index, kt - release_lag))
            free.advance()
        read.advance()
    ops.append(Op("wait_group", ktiles, arg=0))
    for j in range(max(0, ktiles - release_lag), ktiles):
        ops.append(Op("release", ktiles, free.index, j))
        free.advance()
    return ops


# ---- the simulation --------------------------------------------------------------------------------------------
@dataclass
class PipelineRun:
    """What simulate_pipeline returns. intervals: (row, start, end, kind, k-tile) with kind "tma" (a copy),
    "mma" (a consumer's wgmma group on the tensor cores), "wait" (on an mbarrier) or "wait_group" (on
    `wgmma.wait_group`); phases: (time, barrier name, completed phase number); errors: every rule broken
    (a release before the group that reads the stage is known complete, a stage overwritten or read too
    early, a deadlock, which names the barrier, the phase and what that phase still lacks); marks: (row,
    time) of each broken rule; end: the time the last consumer finished."""
    stages: int
    consumers: int
    ktiles: int
    wait_group: int = 1
    release_lag: int = 1
    intervals: list = field(default_factory=list)
    phases: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    marks: list = field(default_factory=list)
    end: float = 0.0

    def rows(self):
        return ["producer (TMA)"] + [f"consumer {c + 1} (wgmma)" for c in range(self.consumers)]

    def hangs(self):
        """The deadlocks among the errors: the roles that wait forever, and why."""
        return [e for e in self.errors if e.startswith("deadlock")]


class _TensorCores:
    """The SM's tensor cores, shared by the wgmma groups in flight: with n groups running each advances at
    1/n of the full rate (the warps of the consumer warpgroups interleave their wgmmas), so a group alone
    takes `work`, and the cores idle only when no group is in flight. `done` is called when a group ends."""

    def __init__(self, push, done):
        self.push, self.done = push, done
        self.running, self.last, self.version = {}, Fraction(0), 0

    def _advance(self, t):
        if self.running:
            share = (t - self.last) / len(self.running)
            for g in self.running:
                self.running[g] -= share
        self.last = t

    def _schedule(self, t):
        self.version += 1
        if self.running:
            nxt = t + min(self.running.values()) * len(self.running)
            self.push(nxt, lambda t2, v=self.version: self._tick(t2, v))

    def start(self, t, group, work):
        self._advance(t)
        self.running[group] = work
        self._schedule(t)

    def _tick(self, t, version):
        if version != self.version:           # the set of running groups changed since this was planned
            return
        self._advance(t)
        for g in [g for g, left in self.running.items() if left <= 0]:
            del self.running[g]
            self.done(g, t)
        self._schedule(t)


def simulate_pipeline(ktiles=8, stages=4, consumers=2, load_time=1.0, mma_time=1.0, stage_bytes=49152,
                      wait_group=1, release_lag=1, issue_time=0.0, consumer_phase=0, producer_phase=1,
                      load_latency=0.0, bytes_landed=None, empty_count=None, arrivals_per_release=4):
    """Run the producer and `consumers` consumers of the main loop on modelled hardware.

    Producer: for each k-tile, wait on empty[s] (its PipelineState starts at `producer_phase`), announce
    `stage_bytes` on full[s] and start the copy; copies go through one copy engine, `load_time` each (the
    bandwidth), and their bytes land `load_latency` after that (the latency); full[s] completes when the
    bytes land. Consumers: each runs `consumer_ops` (starting at `consumer_phase`); a group enters the
    tensor cores `issue_time` after the consumer wakes and needs `mma_time` of them (the groups in flight
    share them: _TensorCores); `wgmma.wait_group` blocks until the groups it covers have finished; a
    release is `arrivals_per_release` arrivals on empty[s] (one per warp, 4, as the kernels do; at most one
    per thread, 128). At most MAX_SIMULATED (2048) consumer k-tiles, ktiles x consumers: a run takes well
    under a second.

    Ways to break it on purpose (a right kernel keeps the defaults): `bytes_landed`, the bytes a stage's
    copies deliver (default stage_bytes); `empty_count`, the arrival count empty[s] is initialised with
    (default empty_arrivals(consumers)); `arrivals_per_release`.

    Checked as it runs: a release of a stage that a group not yet covered by a wait_group may read (the
    PTX rule, independent of timing); a group that starts before its k-tile has landed; a TMA copy that
    writes a stage while a group of another k-tile reads it; a role that waits forever, named with the
    barrier and what its phase still lacks (arrivals, bytes) once no other role can move.
    Post: with the defaults, no errors; every k-tile is loaded once and multiplied by every consumer.
    """
    ktiles = _count(ktiles, "simulate_pipeline: ktiles", 1, MAX_SIMULATED)
    stages = _count(stages, "simulate_pipeline: stages", 1, 64)
    consumers = _count(consumers, "simulate_pipeline: consumers", 1, 7)       # 1024 threads: 8 warpgroups
    if ktiles * consumers > MAX_SIMULATED:
        raise ValueError(f"simulate_pipeline: ktiles x consumers must be at most {MAX_SIMULATED} (a model, not a "
                         f"GEMM), got {ktiles} x {consumers}")
    stage_bytes = _count(stage_bytes, "simulate_pipeline: stage_bytes", 1, MBARRIER_MAX)
    bytes_landed = stage_bytes if bytes_landed is None else _count(bytes_landed, "simulate_pipeline: bytes_landed",
                                                                   0, stage_bytes)
    empty_count = empty_arrivals(consumers) if empty_count is None else \
        _count(empty_count, "simulate_pipeline: empty_count", 1, MBARRIER_MAX)
    arrivals_per_release = _count(arrivals_per_release, "simulate_pipeline: arrivals_per_release", 0, 128)
    times = {}
    for name, v, zero_ok in (("load_time", load_time, False), ("mma_time", mma_time, False),
                             ("issue_time", issue_time, True), ("load_latency", load_latency, True)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not (v >= 0 if zero_ok else v > 0) \
                or v == float("inf"):
            raise ValueError(f"simulate_pipeline: {name} must be a finite number {'>= 0' if zero_ok else '> 0'}, "
                             f"got {quote(v)}")
        times[name] = Fraction(v)             # exact times: equal times compare equal
    program = consumer_ops(ktiles, stages, wait_group, release_lag, phase=consumer_phase)
    run = PipelineRun(stages, consumers, ktiles, wait_group, release_lag)
    full = [MBarrier(f"full[{s}]", 1) for s in range(stages)]
    empty = [MBarrier(f"empty[{s}]", empty_count) for s in range(stages)]
    contents = [None] * stages                 # which k-tile each stage holds
    writes = [[] for _ in range(stages)]       # (k-tile, start, end) of each copy into the stage
    groups_at = {}                             # group (row, k-tile) -> (stage, start)
    finished, reported = set(), set()          # groups done; errors already listed
    queue, order, waiting = [], itertools.count(), []
    engine = [Fraction(0)]

    def push(t, fn):                           # events at equal times run in the order they were made
        heapq.heappush(queue, (t, next(order), fn))

    def note(bar, t, completed):
        if completed:
            run.phases.append((float(t), bar.name, bar.phase))

    def error(row, t, text):
        if text not in reported:
            reported.add(text)
            run.errors.append(text)
            run.marks.append((row, float(t)))

    def group_done(group, t):
        row, kt = group
        s, start = groups_at[group]
        finished.add(group)
        run.intervals.append((row, float(start), float(t), "mma", kt))
        overlaps = []
        for j, a, b in reversed(writes[s]):    # copies into a stage start and end in order: once one ended
            if b <= start:                     # before the group started, so did every earlier one
                break
            if j != kt and a < t:
                overlaps.append((j, a, b))
        for j, a, b in reversed(overlaps):
            error(row, a, f"the TMA writes k-tile {j} into stage {s} during t={float(a):g}-{float(b):g} "
                          f"while consumer {row}'s wgmmas of k-tile {kt} read it "
                          f"(t={float(start):g}-{float(t):g})")

    tensor = _TensorCores(push, group_done)

    def producer():
        state = PipelineState(stages, phase=producer_phase)
        for kt in range(ktiles):
            s = state.index
            yield ("barrier", empty[s], state.phase, 0, kt)
            t = yield ("now",)
            note(full[s], t, full[s].arrive(expect_tx=stage_bytes))
            start = max(t, engine[0])
            engine[0] = start + times["load_time"]
            end = engine[0] + times["load_latency"]
            writes[s].append((kt, start, end))

            def land(t, s=s, kt=kt):
                contents[s] = kt
                note(full[s], t, full[s].complete_tx(bytes_landed))
            run.intervals.append((0, float(start), float(end), "tma", kt))
            push(end, land)
            state.advance()

    def enter(group, s, t):                   # a group's first wgmma reaches the tensor cores
        row, kt = group
        groups_at[group] = (s, t)
        if contents[s] != kt:
            held = "nothing" if contents[s] is None else f"k-tile {contents[s]}"
            error(row, t, f"consumer {row}'s wgmmas of k-tile {kt} start at t={float(t):g}, but stage {s} "
                          f"holds {held}")
        tensor.start(t, group, times["mma_time"])

    def consumer(c):
        row, groups = c + 1, WgmmaGroups()
        for op in program:
            t = yield ("now",)
            run.end = max(run.end, float(t))
            if op.kind == "wait_full":
                yield ("barrier", full[op.stage], op.arg, row, op.ktile)
            elif op.kind == "mma":
                groups.mma_async(op.ktile)
                if op.arg == 0:                  # a group's wgmmas follow each other: it enters once
                    at = t + times["issue_time"]
                    push(at, lambda t2, g=(row, op.ktile), s=op.stage: enter(g, s, t2))
                    if at > t:
                        yield ("sleep", at)
            elif op.kind == "commit":
                groups.commit_group()
            elif op.kind == "wait_group":
                covered = [(row, kt) for g in groups.wait_group(op.arg) for kt in g]
                yield ("groups", covered, row, op.ktile)
            elif op.kind == "release":
                if groups.may_read(op.arg):
                    error(row, t, f"consumer {row} releases stage {op.stage} (k-tile {op.arg}) at t={float(t):g} "
                                  f"after wgmma.wait_group {wait_group}, but k-tile {op.arg}'s wgmma group is not "
                                  "known to be complete: the TMA may overwrite shared memory the tensor cores "
                                  "still read")
                for _ in range(arrivals_per_release):
                    note(empty[op.stage], t, empty[op.stage].arrive())
        t = yield ("now",)
        run.end = max(run.end, float(t))

    def ready(cmd):
        if cmd[0] == "barrier":
            return cmd[1].try_wait(cmd[2])
        return all(g in finished for g in cmd[1])

    def step(agent, t):
        value = None
        while True:
            try:
                cmd = agent.send(value)
            except StopIteration:
                return
            except RuntimeError as e:          # an mbarrier misuse stops that role, as a trap would
                run.errors.append(str(e))
                return
            value = None
            if cmd[0] == "now":
                value = t
            elif cmd[0] == "sleep":
                push(cmd[1], lambda t2, a=agent: step(a, t2))
                return
            elif not ready(cmd):
                waiting.append((agent, cmd, t))
                return

    for a in [producer()] + [consumer(c) for c in range(consumers)]:
        push(Fraction(0), lambda t, a=a: step(a, t))
    while queue:
        t, _, fn = heapq.heappop(queue)
        fn(t)
        again = True
        while again:                           # barrier changes may release waiters at this very time
            again = False
            for w in list(waiting):
                agent, cmd, since = w
                if ready(cmd):
                    waiting.remove(w)
                    if t > since:
                        kind = "wait" if cmd[0] == "barrier" else "wait_group"
                        run.intervals.append((cmd[-2], float(since), float(t), kind, cmd[-1]))
                    step(agent, t)
                    again = True
    for agent, cmd, since in waiting:
        if cmd[0] == "barrier":
            _, bar, parity, row, kt = cmd
            done = kt // stages - (row == 0)     # phases this barrier completes before the one awaited: one a use
            extra = ""
            if done < 0:
                extra = ("; the stage is still fresh: the producer's first round should wait for parity 1, "
                         "which a fresh barrier passes at once (its state starts at phase 1)")
            elif bar.phase > done:
                extra = (f"; it has completed {bar.phase} phases where {done} were due: arrivals beyond its "
                         "count completed extra phases")
            error(row, since, f"deadlock: {run.rows()[row]} waits forever on {bar.name} parity {parity} "
                              f"before k-tile {kt}: {bar.lacks()}{extra}")
    return run


# ---- the TMA store's shared memory: two proxies ------------------------------------------------------------
class EpilogueOp(NamedTuple):
    """One step of a TMA-store epilogue: kind "st_shared", "fence", "bar_sync", "tma_store", "commit" or
    "wait_read"; the thread that takes it (for bar_sync, any one of them); arg: the staging buffer
    (st_shared, tma_store), N (wait_read) or the threads that take part (bar_sync)."""
    kind: str
    thread: int
    arg: object = None

    def __str__(self):
        if self.kind == "bar_sync":
            return f"threads {', '.join(map(str, self.arg))}: bar.sync"
        arg = self.arg
        return f"thread {self.thread}: " + {
            "st_shared": "st.shared                      [buffer {}]",
            "fence": "fence.proxy.async.shared::cta",
            "tma_store": "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [C], [buffer {}]",
            "commit": "cp.async.bulk.commit_group",
            "wait_read": "cp.async.bulk.wait_group.read  {}"}[self.kind].format(arg)


def tma_store_epilogue(boxes=4, buffers=2, threads=2, fence=True, wait_read=1):
    """The steps of one consumer's TMA-store epilogue, as kernels/hopper's epilogue_tma takes them: `boxes`
    boxes of C through `buffers` staging buffers in turn, written by `threads` threads (128 in the kernel), of
    which thread 0 issues the stores. Per box: thread 0 waits until at most `wait_read` of its stores may
    still read shared memory; a barrier; every thread writes its part of the buffer and, with `fence`,
    executes fence.proxy.async; a barrier; thread 0 stores the buffer and commits the store as a bulk group."""
    boxes = _count(boxes, "tma_store_epilogue: boxes", 1, 64)
    buffers = _count(buffers, "tma_store_epilogue: buffers", 1, 8)
    threads = _count(threads, "tma_store_epilogue: threads", 1, 8)
    wait_read = _count(wait_read, "tma_store_epilogue: wait_read", 0, 8)
    everyone = tuple(range(threads))
    ops = []
    for b in range(boxes):
        buf = b % buffers
        ops += [EpilogueOp("wait_read", 0, wait_read), EpilogueOp("bar_sync", 0, everyone)]
        for t in everyone:
            ops.append(EpilogueOp("st_shared", t, buf))
            if fence:
                ops.append(EpilogueOp("fence", t))
        ops += [EpilogueOp("bar_sync", 0, everyone), EpilogueOp("tma_store", 0, buf), EpilogueOp("commit", 0)]
    return ops


class SharedMemoryProxies:
    """The two rules between a block's threads writing a staging buffer (st.shared: the generic proxy) and the
    TMA stores that read it (the async proxy), in PTX's memory consistency model {proxies}:

      * a store sees thread u's st.shared only if u executed fence.proxy.async after the write, and the fence
        is ordered before the store: it is the storing thread's own, or a barrier both threads take part in
        lies between. A barrier orders threads, not proxies: without the fence the copy engine may read what
        the buffer held before;
      * a buffer may be written again only once cp.async.bulk.wait_group.read in the storing thread has
        covered the store that reads it, and a barrier (or program order) puts the write after that wait.

    Strict as WgmmaGroups is: it accepts the order CUTLASS's epilogue uses (each writer fences, then a barrier,
    then one thread stores) and reports every other, whatever the hardware's timing would do.
    `step` takes EpilogueOps one at a time; `errors` lists the rules broken."""

    def __init__(self):
        self.now, self.errors = 0, []
        self.fences, self.barriers = {}, []            # thread -> [times]; [(time, threads)]
        self.writes = {}                               # buffer -> {thread: time of its last write}
        self.stores = []                               # [thread, buffer, time, time its read is known done]
        self.open, self.committed = {}, {}             # thread -> stores not yet committed / committed groups

    def _ordered(self, u, a, t, b):
        """Is thread u's step at time a ordered before thread t's step at time b (program order, or a barrier
        of both between)?"""
        return (u == t and a < b) or any(a < c < b and u in who and t in who for c, who in self.barriers)

    def step(self, op):
        kind, t, arg = _epilogue_op(op)
        self.now += 1
        if kind == "bar_sync":
            self.barriers.append((self.now, frozenset(arg)))
        elif kind == "fence":
            self.fences.setdefault(t, []).append(self.now)
        elif kind == "st_shared":
            for i, (s, buf, when, read) in enumerate(self.stores):
                if buf == arg and not (read is not None and self._ordered(s, read, t, self.now)):
                    self.errors.append(f"thread {t} writes buffer {arg} while the TMA store of box {i} from it "
                                       f"(thread {s}) may still be reading it: no cp.async.bulk.wait_group.read "
                                       f"of thread {s} covers that store before a barrier orders this write")
            self.writes.setdefault(arg, {})[t] = self.now
        elif kind == "tma_store":
            for u, w in sorted(self.writes.get(arg, {}).items()):
                fenced = [f for f in self.fences.get(u, []) if w < f]
                if not any(self._ordered(u, f, t, self.now) for f in fenced):
                    why = ("executed no fence.proxy.async after it: a barrier orders threads, not proxies"
                           if not fenced else f"fenced it, but no barrier with thread {t} follows the fence")
                    self.errors.append(f"the TMA store of box {len(self.stores)} (thread {t}) may read stale "
                                       f"data: thread {u} wrote buffer {arg} with st.shared and {why}")
            self.stores.append([t, arg, self.now, None])
            self.open.setdefault(t, []).append(len(self.stores) - 1)
        elif kind == "commit":
            self.committed.setdefault(t, []).append(self.open.pop(t, []))
        elif kind == "wait_read":
            groups = self.committed.get(t, [])
            for group in groups[:max(0, len(groups) - arg)]:
                for i in group:
                    if self.stores[i][3] is None:
                        self.stores[i][3] = self.now
        return self.errors


_STEPS = ("st_shared", "fence", "bar_sync", "tma_store", "commit", "wait_read")


def _epilogue_op(op):
    """(kind, thread, arg) of one EpilogueOp, checked: a thread of the block (0..1023), a buffer or N >= 0, the
    threads of a bar_sync."""
    what = "SharedMemoryProxies.step"
    if not isinstance(op, tuple) or len(op) != 3:
        raise TypeError(f"{what}: expected an EpilogueOp (kind, thread, arg), got {quote(op)}")
    kind, t, arg = op
    if not isinstance(kind, str) or kind not in _STEPS:
        raise ValueError(f"{what}: unknown step {quote(kind)}; the steps are {', '.join(_STEPS)}")
    _count(t, f"{what}: {kind}: thread", 0, 1023)
    if kind == "bar_sync":
        if not isinstance(arg, tuple) or not arg:
            raise TypeError(f"{what}: bar_sync: arg must be the tuple of threads that take part, got {quote(arg)}")
        for u in arg:
            _count(u, f"{what}: bar_sync: thread", 0, 1023)
    elif kind in ("st_shared", "tma_store"):
        _count(arg, f"{what}: {kind}: buffer", 0)
    elif kind == "wait_read":
        _count(arg, f"{what}: wait_read: N", 0)
    return kind, t, arg


def check_epilogue(ops):
    """Every rule of SharedMemoryProxies that the steps `ops` break, in order (none for a right epilogue)."""
    if not isinstance(ops, (list, tuple)):
        raise TypeError(f"check_epilogue: ops must be a list of EpilogueOps, got {quote(ops)}")
    model = SharedMemoryProxies()
    for op in ops:
        model.step(op)
    return model.errors
