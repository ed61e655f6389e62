"""Where a log line came from: the rank, the node and the time, read from the line and its file.

A job of many GPUs writes many logs, or one log with every rank's lines interleaved. Which
rank and node a line belongs to is written in one of a few places, each read here from a
table of formats (nothing else in gpudoctor parses them):

* the line's prefix (:data:`LINE_PREFIXES`), applied in turn from the start of the line:
  srun ``--label`` (`` 3: ``), pdsh's ``host: ``, a ``[host:rank]`` prefix (a torchrun
  ``--log-line-prefix-template``), torchrun's ``--tee`` prefix ``[default3]:`` (role and
  local rank), PyTorch's ``[rank3]:``, NCCL's ``host:pid:tid [dev] NCCL`` and syslog's host
  field; failing those, the ``[Rank 3]`` / ``[PG … Rank 3]`` that c10d writes inside its
  messages (:data:`IN_MESSAGE`);
* the file's name (:data:`FILE_NAMES`): ``rank3``, ``rank-3``, ``node-07``, Slurm
  ``%j.%t`` / ``%j-%t`` output names (``job.1234.7.out``), a torchrun ``--log-dir`` tree
  (``attempt_0/3/stderr.log``, 3 being the local rank) and Kubernetes pod names
  (``train-worker-3``, ``train-master-0``);
* the line's timestamp (:data:`TIMESTAMPS`): ISO 8601, Python logging's ``asctime``, glog's
  ``E1203 14:02:11.123456``, syslog's ``Nov 26 14:02:11`` and torchelastic's
  ``2026-11-26_14:02:11``.

What the line says wins over the file name, except that a global rank (srun's task id, a
``rank3`` or ``%t`` file name) is not replaced by a local one. A local rank stands for the rank
when nothing gives the global one (on one node they are the same). srun's task id is taken for
the rank: when srun starts one torchrun per node it numbers nodes instead, which no line says.

Times are seconds since the start of their year, without time zone: glog and syslog write
neither the year nor the zone, and the lines of one job are compared with each other, not with
the clock (a job running across New Year would order its lines wrongly; none is known to).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

PREFIX_BYTES = 160
"""How much of a line's start is looked at for its prefixes and timestamp."""


class Origin(NamedTuple):
    """The rank and node a line or file belongs to; ``None`` where it does not say.

    (A named tuple rather than a frozen dataclass: the scanner makes one per matching line.)
    """

    rank: int | None = None
    node: str | None = None
    local: bool = False
    """``rank`` is a local rank (torchrun's ``[default3]:``, a ``--log-dir`` tree)."""

    def over(self, fallback: Origin) -> Origin:
        """This origin, with what it does not say taken from ``fallback`` (a file's)."""
        if fallback == _NOWHERE:
            return self
        rank, local = self.rank, self.local
        if rank is None or (local and fallback.rank is not None and not fallback.local):
            rank, local = fallback.rank, fallback.local
        return Origin(rank, self.node or fallback.node, local)

    @property
    def known(self) -> bool:
        """Whether the origin says anything at all."""
        return self.rank is not None or self.node is not None


_NOWHERE = Origin()


def _int(text: str) -> int | None:
    return int(text) if len(text) <= 7 else None


_PrefixReader = Callable[["re.Match[str]"], Origin]


def _rank_of(group: str, local: bool = False) -> _PrefixReader:
    return lambda m: Origin(rank=_int(m.group(group)), local=local)


def _node_of(group: str) -> _PrefixReader:
    return lambda m: Origin(node=m.group(group))


LINE_PREFIXES: tuple[tuple[str, str, bool], ...] = (
    # srun --label: the task id, right-aligned, a colon and a space ("  3: text")
    ("srun --label", r" *(?P<rank>\d{1,6}): ", False),
    # pdsh (DeepSpeed's multi-node launcher) and clush: "{host}: " — a host name has a digit
    # or a hyphen, which "RuntimeError: " has not, and no underscore; a dotted name ending in
    # an exception's name ("cv2.error: ", "urllib3.exceptions.ReadTimeoutError: ") is none
    (
        "pdsh host",
        r"(?P<node>[A-Za-z][A-Za-z0-9.]*(?:\d|-)[A-Za-z0-9.-]*)"
        r"(?<![Ee]rror)(?<!Exception)(?<!Warning)(?<!Exit): ",
        False,
    ),
    # a launcher's "[host:rank]" prefix (torchrun --log-line-prefix-template, pdsh-style)
    ("[host:rank]", r"\[(?P<node>[A-Za-z][\w.-]*):(?P<rank>\d{1,6})\]:? ?", False),
    # torchrun --tee / --redirects: "[{role}{local_rank}]:", the role is "default" unless set
    ("torchrun --tee", r"\[(?:default|trainer|worker)(?P<rank>\d{1,6})\]: ?", True),
    # PyTorch's rank prefix on a worker's stderr lines and c10 log lines: "[rank3]:"
    ("[rankN]:", r"\[rank(?P<rank>\d{1,6})\]: ?", False),
    # NCCL's own lines: "{host}:{pid}:{tid} [{cuda dev}] NCCL INFO ..."
    ("NCCL host", r"(?P<node>[A-Za-z][\w.-]*):\d+:\d+ \[\d+\] NCCL ", False),
    # syslog / journalctl short: "Nov 26 14:02:11 {host} kernel: ..."
    (
        "syslog host",
        r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d (?P<node>[A-Za-z][\w.-]*) \S+?: ",
        False,
    ),
)
"""Prefixes recognised at the start of a line, each after the ones before it that matched
(srun's label comes before what the program wrote): (name, regex with a ``rank`` and/or a
``node`` group, whether the rank is a local rank)."""


def _chain(rows: tuple[tuple[str, str, bool], ...]) -> re.Pattern[str]:
    """The rows as one regex, each optional and in order, their groups numbered by row (one
    match per line instead of one per row: the scanner asks for thousands of lines)."""
    parts = []
    for index, (_name, regex, _local) in enumerate(rows):
        numbered = regex.replace("(?P<rank>", f"(?P<rank{index}>")
        parts.append("(?:" + numbered.replace("(?P<node>", f"(?P<node{index}>") + ")?")
    return re.compile("".join(parts))


_CHAIN = _chain(LINE_PREFIXES)
_SLOTS = tuple(
    (
        _CHAIN.groupindex[f"rank{i}"] - 1 if f"rank{i}" in _CHAIN.groupindex else None,
        _CHAIN.groupindex[f"node{i}"] - 1 if f"node{i}" in _CHAIN.groupindex else None,
        is_local,
    )
    for i, (_name, _regex, is_local) in enumerate(LINE_PREFIXES)
)
"""Per row: the index of its rank and node groups in the chain's ``groups()``, and whether
its rank is a local one."""

_MAY_PREFIX = re.compile(
    r" *\d|\[|[A-Za-z][\w.-]*:\d|[A-Za-z][\w.]*(?:\d|-)[\w.-]*: |[A-Z][a-z]{2} [ \d]\d \d"
)
"""What every line prefix starts with: the lines that do not (most) skip the chain."""

IN_MESSAGE = re.compile(r"\[(?:PG [^\]]*?)?Rank (?P<rank>\d{1,6})\]")
"""c10d names the rank inside its messages: ``[Rank 3]``, ``[PG 0 Rank 3]``,
``[PG ID 0 PG GUID 0(default_pg) Rank 3]``."""

FILE_NAMES: tuple[tuple[str, re.Pattern[str], _PrefixReader], ...] = (
    (
        "torchrun --log-dir",
        re.compile(r"attempt_\d+/(?P<rank>\d{1,6})/(?:stdout|stderr|error)\.(?:log|json)$"),
        _rank_of("rank", local=True),
    ),
    (
        "rankN",
        re.compile(r"(?:^|[^A-Za-z])rank[-_.]?(?P<rank>\d{1,6})(?!\d)", re.IGNORECASE),
        _rank_of("rank"),
    ),
    (
        "Slurm %j.%t",
        # the job id starts the name or follows a word and a separator ("job.4411.3.out");
        # "resnet50-1.log" names a model and "train-2026-11.log" a month, not a job's task
        re.compile(
            r"(?:^|/|[A-Za-z][._-])(?!(?:19|20)\d\d[._-](?:0?[1-9]|1[0-2])\.)"
            r"\d{2,12}[._-](?P<rank>\d{1,6})\.(?:out|err|log|txt)$"
        ),
        _rank_of("rank"),
    ),
    (
        "Kubernetes pod",
        re.compile(r"(?P<node>[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?-(?:master|worker|launcher)-\d+)"),
        _node_of("node"),
    ),
    (
        "node name",
        re.compile(r"(?P<node>(?:[A-Za-z][A-Za-z0-9]*-)*(?:node|nid|host)-?\d+)", re.IGNORECASE),
        _node_of("node"),
    ),
)
"""Ranks and nodes in a file's path, tried in this order; the first that gives a rank and
the first that gives a node win."""

_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
        start=1,
    )
}
# Days before each month in a leap year: a year-less date is ordered the same either way.
_DAYS_BEFORE = (0, 0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335)

_TIME = r"(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:[.,](?P<frac>\d{1,9}))?"
TIMESTAMPS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # ISO 8601 / Python logging's asctime / torchelastic's "time : 2026-11-26_14:02:11"
    ("ISO 8601", re.compile(r"(?<!\d)\d{4}-(?P<mo>\d\d)-(?P<d>\d\d)[T _]" + _TIME)),
    # glog: "E1203 14:02:11.123456", also inside "[rank3]:[E1203 ...]"
    ("glog", re.compile(r"(?<![\w])[IWEF](?P<mo>\d\d)(?P<d>\d\d) " + _TIME)),
    # syslog: "Nov 26 14:02:11"
    ("syslog", re.compile(r"(?P<mon>[A-Z][a-z]{2}) (?P<d>[ \d]\d) " + _TIME)),
)
"""Timestamps recognised near a line's start, tried in this order."""


def _seconds(match: re.Match[str]) -> float | None:
    """Seconds since the start of the year for a timestamp match; ``None`` if out of range."""
    groups = match.groupdict()
    month = _MONTHS.get(groups["mon"]) if groups.get("mon") else int(groups["mo"])
    day, hour, minute, second = (int(groups[k]) for k in ("d", "h", "mi", "s"))
    if month is None or not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    if hour > 23 or minute > 59 or second > 60:
        return None
    frac = groups.get("frac")
    fraction = int(frac) / 10 ** len(frac) if frac else 0.0
    days = _DAYS_BEFORE[month] + day - 1
    return days * 86400 + hour * 3600 + minute * 60 + second + fraction


def line_time(line: str) -> float | None:
    """The time a line was written (seconds since the start of its year), when it says."""
    head = line[:PREFIX_BYTES]
    for _name, pattern in TIMESTAMPS:
        match = pattern.search(head)
        if match is not None:
            return _seconds(match)
    return None


def line_origin(line: str) -> Origin:
    """The rank and node a line's prefixes (or its c10d message) name."""
    head = line[:PREFIX_BYTES]
    if _MAY_PREFIX.match(head) is None:  # most lines: no prefix, one cheap test
        match = IN_MESSAGE.search(head) if "Rank " in head else None
        return Origin(_int(match.group("rank"))) if match is not None else _NOWHERE
    chained = _CHAIN.match(head)
    assert chained is not None  # every part is optional: it always matches
    rank, node, local = _prefix_origin(head[: chained.end()]) if chained.end() else _NOWHERE
    if rank is None and "Rank " in head:
        match = IN_MESSAGE.search(head)
        if match is not None:
            rank = _int(match.group("rank"))
    return Origin(rank, node, local)


@lru_cache(maxsize=4096)
def _prefix_origin(prefix: str) -> Origin:
    """The origin a line's prefixes (the chain's whole match) give; cached, since the lines
    of a job repeat a few prefixes ("[rank6]:") thousands of times."""
    chained = _CHAIN.match(prefix)
    assert chained is not None
    values = chained.groups()
    rank: int | None = None
    local = False
    node: str | None = None
    for rank_at, node_at, is_local in _SLOTS:
        found = values[rank_at] if rank_at is not None else None
        # A global rank is not replaced by a local one (srun's label, then torchrun's tee).
        if found is not None and (rank is None or (local and not is_local)):
            rank, local = _int(found), is_local
        if node is None and node_at is not None:
            node = values[node_at]
    return Origin(rank, node, local)


@lru_cache(maxsize=4096)
def file_origin(name: str) -> Origin:
    """The rank and node a file's path names (``logs/node-07/rank3.log``)."""
    path = name.replace("\\", "/")
    rank: int | None = None
    local = False
    node: str | None = None
    for _name, pattern, read in FILE_NAMES:
        match = pattern.search(path)
        if match is None:
            continue
        found = read(match)
        if rank is None and found.rank is not None:
            rank, local = found.rank, found.local
        node = node or found.node
    return Origin(rank, node, local)


def origin_of(line: str, source: str) -> Origin:
    """A line's origin: what its prefixes say, completed by its file's name."""
    return line_origin(line).over(file_origin(source))


def format_time(seconds: float) -> str:
    """A time from :func:`line_time` as ``MM-DD HH:MM:SS.mmm`` (the year is not known)."""
    days, rest = divmod(seconds, 86400)
    month = max(m for m in range(1, 13) if _DAYS_BEFORE[m] <= days)
    day = int(days) - _DAYS_BEFORE[month] + 1
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{month:02d}-{day:02d} {int(hours):02d}:{int(minutes):02d}:{secs:06.3f}"
