"""Lines in which a job points at a rank: the launcher's root cause, c10d's desync report.

Scanned in the same pass as the rules' patterns (keys ``job/…``; rule ids have no ``/``).
Formats, from PyTorch's source:

* torchelastic's ``ChildFailedError`` table (``torch/distributed/elastic/multiprocessing/
  errors/__init__.py``): ``Root Cause (first observed failure):`` followed, a few lines on,
  by ``rank      : {global_rank} (local_rank: {local_rank})`` and ``host      : {fqdn}``;
* c10d's desync report (``torch/csrc/distributed/c10d/TraceUtils.h``): ``ranks [{ranks}] are
  the lagging ranks that caused this timeout``, ``[{ranks}] joined but didn't finish
  collective #{n}``, ``[{ranks}] finished collective #{n}, but didn't join collective
  #{n+1}``; gloo's ``monitored_barrier``: ``Rank {r} failed to pass monitoredBarrier`` /
  ``Ranks {r, s} failed to pass monitoredBarrier``;
* NCCL's lost peer (``transport/net_socket.cc``, ``misc/socket.cc``, ``net_ib.cc``):
  ``Net : Connection closed by remote peer {host or address}<{port}>``, ``socketProgress:
  Connection closed by remote peer …``, ``NET/IB : Got completion from peer
  {address}<{port}> with error {n}``; an address is mapped to its node through NCCL's own
  ``{host}:{pid}:{tid} [{dev}] NCCL INFO Bootstrap : Using {if}:{address}<0>`` and ``NET/IB
  : Using … ; OOB {if}:{address}<0>`` lines (among the lines the scanner keeps);
* NCCL's communicator init line, which gives the world size: ``{host}:{pid}:{tid} [{dev}]
  NCCL INFO comm {ptr} rank {r} nranks {n} cudaDev {d} …`` (with NCCL's own ``[{dev}] NCCL
  INFO`` prefix, as NCCL writes it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from gpudoctor.logs.scanner import MAX_ORIGINS, CaptureType, Event, PatternHits, PatternSpec

ROOT_CAUSE = "job/root_cause"
ELASTIC_RANK = "job/elastic_rank"
ELASTIC_HOST = "job/elastic_host"
MISSING = "job/missing_ranks"
LAGGING = "job/lagging_ranks"
BARRIER = "job/monitored_barrier"
NCCL_INIT = "job/nccl_init"
NCCL_ADDRESS = "job/nccl_address"
NCCL_PEER = "job/nccl_peer"

ROOT_CAUSE_WINDOW = 8
"""Lines after "Root Cause (first observed failure):" where its rank line is looked for."""

PATTERNS: tuple[PatternSpec, ...] = (
    PatternSpec(ROOT_CAUSE, r"Root Cause \(first observed failure\):"),
    PatternSpec(
        ELASTIC_RANK,
        r"\brank\s*:\s*(?P<rank>\d+) \(local_rank: (?P<local_rank>\d+)\)",
        captures={"rank": CaptureType.INT, "local_rank": CaptureType.INT},
    ),
    PatternSpec(ELASTIC_HOST, r"^\s*(?:\d+: )?\s*host\s*:\s*(?P<host>[A-Za-z0-9][\w.-]*)\s*$"),
    PatternSpec(
        MISSING, r"ranks \[(?P<ranks>[\d, ]+)\] are the lagging ranks that caused this timeout"
    ),
    PatternSpec(
        LAGGING,
        r"\[(?P<ranks>[\d, ]+)\] (?:joined but didn't finish collective|finished collective "
        r"#\d+, but didn't join collective)",
    ),
    PatternSpec(BARRIER, r"Ranks? (?P<ranks>[\d, ]+) failed to pass monitoredBarrier"),
    PatternSpec(
        NCCL_ADDRESS,
        r"\[\d+\] NCCL INFO (?:Bootstrap : Using|NET/\w+ : Using .*?OOB) "
        r"[\w.-]+:(?P<address>[0-9A-Fa-f.:]+)<\d+>",
    ),
    PatternSpec(
        NCCL_PEER,
        r"(?:Connection closed by remote peer|Got completion from peer) "
        r"(?P<peer>[\w.:-]+?)<\d+>",
    ),
    PatternSpec(
        NCCL_INIT,
        r"\[\d+\] NCCL INFO comm 0x[0-9a-fA-F]+ rank (?P<rank>\d+) nranks (?P<nranks>\d+)",
        captures={"rank": CaptureType.INT, "nranks": CaptureType.INT},
    ),
)


@dataclass(frozen=True)
class Pointer:
    """A rank (or a node) some line names as the one that failed first, lagged or left."""

    rank: int | None
    how: str
    """``launcher``, ``desync`` or ``peer`` (see :class:`gpudoctor.report.FirstFailure`)."""
    event: Event
    node: str | None = None


def _events(hits: Mapping[str, PatternHits], key: str) -> list[Event]:
    found = hits.get(key)
    return found.events() if found is not None else []


def launcher_root_causes(hits: Mapping[str, PatternHits]) -> list[Pointer]:
    """The ranks torchelastic named as the root cause, one per table, in reading order."""
    ranks = _events(hits, ELASTIC_RANK)
    hosts = _events(hits, ELASTIC_HOST)
    pointers = []
    for header in _events(hits, ROOT_CAUSE):
        after = [
            e
            for e in ranks
            if e.source == header.source and 0 < e.line - header.line <= ROOT_CAUSE_WINDOW
        ]
        if not after:
            continue
        line = min(after, key=lambda e: e.line)
        rank = line.captures.get("rank")
        if not isinstance(rank, int):
            continue
        host = next(
            (
                str(h.captures["host"])
                for h in hosts
                if h.source == header.source
                and 0 < h.line - header.line <= ROOT_CAUSE_WINDOW
                and "host" in h.captures
            ),
            None,
        )
        pointers.append(Pointer(rank, "launcher", line, host))
    return pointers


def desync_ranks(hits: Mapping[str, PatternHits]) -> list[Pointer]:
    """The ranks a desync report or a monitored barrier names as lagging or missing."""
    pointers = []
    for key in (MISSING, LAGGING, BARRIER):
        for event in _events(hits, key):
            for part in str(event.captures.get("ranks", "")).split(","):
                if part.strip().isdigit():
                    pointers.append(Pointer(int(part), "desync", event))
    return pointers


_ADDRESS = re.compile(r"[0-9.]+|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*")


def nccl_peers(hits: Mapping[str, PatternHits]) -> list[Pointer]:
    """The nodes NCCL lost contact with, in reading order: a host name as NCCL wrote it (its
    first label), or an address some node's NCCL said it was using."""
    nodes_by_address = {
        str(e.captures["address"]): e.node
        for e in _events(hits, NCCL_ADDRESS)
        if e.node is not None and "address" in e.captures
    }
    pointers = []
    for event in _events(hits, NCCL_PEER):
        peer = str(event.captures.get("peer", ""))
        node = nodes_by_address.get(peer) if _ADDRESS.fullmatch(peer) else peer.split(".")[0]
        if node and node != event.node:
            pointers.append(Pointer(None, "peer", event, node))
    return pointers


def world_size(hits: Mapping[str, PatternHits]) -> int | None:
    """The number of ranks NCCL's communicator init lines give (the largest); a number past
    :data:`~gpudoctor.logs.scanner.MAX_ORIGINS` is not taken (ranks are counted up to it, and
    a line of the log must not size the sets built from it)."""
    sizes = [e.captures.get("nranks") for e in _events(hits, NCCL_INIT)]
    known = [s for s in sizes if isinstance(s, int) and 0 < s <= MAX_ORIGINS]
    return max(known) if known else None
