"""A cache of loaded rule packs, so that each run does not parse every YAML file again.

Parsing and validating a pack of ~100 YAML files takes longer than the whole rest of a short
``explain`` run. A pack that loaded without errors is stored as JSON (never a pickle: see
:mod:`gpudoctor.rulebook.codec`) in the user's cache directory (``$GPUDOCTOR_CACHE_DIR``, else
``$XDG_CACHE_HOME/gpudoctor``, else ``~/.cache/gpudoctor``); ``GPUDOCTOR_NO_CACHE=1`` turns
the cache off.

The cache decides what a report says and whether ``--fail-on`` fails, so it must not be
forgeable by anyone but the user:

* the directory is created ``0700`` and used only when it is a real directory (not a symbolic
  link) owned by the user and not writable by group or others; every file in it is opened
  through the checked directory's descriptor, without following symbolic links, and checked
  on the open descriptor (a regular file, owned by the user, not writable by group or others);
* each cache file carries a keyed BLAKE2b MAC of its content; the key is a random secret kept
  ``0600`` in the same directory and checked like the rest before use, so a planted file fails
  verification even where permissions are somehow loose;
* the file name holds a hash of which rule files make the pack (and the interpreter's version)
  and of their bytes (and gpudoctor's version), so any edit makes a new name.

The payload is JSON lines: a header (schema and key), the rules' entries
(:mod:`gpudoctor.rulebook.index`: what a run needs before the rules themselves), then one line
per rule, rebuilt only when asked for (:class:`CachedPack`): a short ``explain`` rebuilds the
few rules whose lines occur in its log; last, the words of every rule's examples
(:mod:`gpudoctor.rulebook.signatures`), read only by a run that compares an unrecognised error
with them.

Anything unexpected (a missing or unknown field, a bad MAC, a truncated file) makes the cached
pack unusable: it is reported in the notes, the pack is loaded from YAML and the cache file is
rewritten atomically (temporary file, then ``os.replace``). Writing a pack removes the older
files of the same set of rule files, so only the current one remains.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gpudoctor import __version__
from gpudoctor.rulebook.codec import CodecError, rule_from_data, rule_to_data
from gpudoctor.rulebook.index import RuleEntry, entry_from_data, entry_to_data
from gpudoctor.rulebook.model import Rule

if TYPE_CHECKING:
    from gpudoctor.rulebook.signatures import Signature

try:  # what hashlib.blake2b is; importing hashlib itself loads OpenSSL (~2 ms more at start)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - CPython always builds _blake2
    from hashlib import blake2b

SCHEMA = "gpudoctor.rulecache/4"
"""Changes with the cache's format and with how entries are computed from rules (4: patterns
scanned as pasted, :func:`gpudoctor.rulebook.index.as_pasted`), which the key does not hash."""
SECRET_NAME = "mac-key"
SECRET_SIZE = 32
MAC_SIZE = 32
MAX_CACHE_BYTES = 64 << 20
"""A cache file larger than this is not read (today's bundled pack is about 2 MB)."""
STALE_OTHER_PACK = 30 * 86400
"""Cache files of other sets of rule files are removed when older than this (seconds)."""
STALE_TEMP = 3600
_TEMP_PREFIX = ".tmp-"
_SUPPORTED = (
    all(hasattr(os, name) for name in ("O_NOFOLLOW", "O_DIRECTORY", "geteuid"))
    and {os.open, os.stat, os.unlink, os.link, os.rename} <= os.supports_dir_fd
    and os.listdir in os.supports_fd
)
"""Whether this platform can check and open files relative to a checked directory."""


class _Refused(Exception):
    """A cache path failed a check; the message says which."""


def cache_dir() -> Path | None:
    """Where rule caches live, or ``None`` when caching is off."""
    if os.environ.get("GPUDOCTOR_NO_CACHE") == "1" or not _SUPPORTED:
        return None
    explicit = os.environ.get("GPUDOCTOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no HOME and no passwd entry (some containers): no cache
            return None
    return Path(base) / "gpudoctor"


def cache_key(files: Sequence[Path]) -> str | None:
    """A key that changes whenever gpudoctor, the interpreter or any rule file's name or
    bytes change; ``None`` when a rule file cannot be read (the loader then reports it).

    It has two parts, ``WHICH-WHAT``: ``WHICH`` names the set of rule files and the
    interpreter, ``WHAT`` hashes gpudoctor's version and the files' bytes.
    """
    which = blake2b(digest_size=8)
    which.update(f"{SCHEMA}\0{sys.implementation.cache_tag}\0{sys.version}".encode())
    what = blake2b(digest_size=16)
    what.update(__version__.encode())
    for file in files:
        name = f"\0{file}\0{os.path.abspath(file)}".encode("utf-8", "surrogateescape")
        try:
            data = _read_all(file)
        except OSError:
            return None
        which.update(name)
        what.update(len(data).to_bytes(8, "little"))
        what.update(data)
    return f"{which.hexdigest()}-{what.hexdigest()}"


def _read_all(file: Path) -> bytes:
    # os.read, not open(): half the time for ~100 small files, and this runs at every start.
    fd = os.open(file, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def _file_name(key: str) -> str:
    return f"rules-{key}.json"


class CorruptRule(ValueError):
    """A rule of a verified cache file does not decode (a bug, or a forger holding the key)."""


class CachedPack:
    """A pack read from the cache: its entries at once, each rule when first asked for."""

    def __init__(
        self,
        entries: tuple[RuleEntry, ...],
        rule_lines: Sequence[bytes],
        signature_line: bytes = b"",
    ) -> None:
        self.entries = entries
        self._rule_lines = rule_lines
        self._signature_line = signature_line

    def signatures(self) -> list[Signature]:
        """The rules' signatures (:func:`~gpudoctor.rulebook.signatures.rule_signatures` of
        each rule, in order)."""
        from gpudoctor.rulebook.signatures import WORDS_KEY, Signature

        try:
            data = json.loads(self._signature_line)
        except ValueError as exc:
            raise CorruptRule(f"the signatures do not decode ({exc})") from exc
        if isinstance(data, dict) and data.get("words") != WORDS_KEY:
            raise CorruptRule("the signatures were read by another version of the word reader")
        rows = data.get("signatures") if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise CorruptRule("the signatures do not decode")
        found = []
        for row in rows:
            if not (
                isinstance(row, list)
                and len(row) == 3
                and type(row[0]) is int
                and 0 <= row[0] < len(self.entries)
                and isinstance(row[1], str)
                and isinstance(row[2], str)
            ):
                raise CorruptRule(f"a signature does not decode: {row!r:.80}")
            found.append(Signature(row[0], row[1], frozenset(row[2].split())))
        return found

    def rule(self, index: int, *, examples: bool) -> Rule:
        """The rule of entry ``index``; with ``examples`` false, without its examples."""
        try:
            rule = rule_from_data(json.loads(self._rule_lines[index]), examples=examples)
        except ValueError as exc:  # CodecError and JSON errors
            raise CorruptRule(f"rule {index} does not decode ({exc})") from exc
        entry = self.entries[index]
        if rule.id != entry.id or rule.path != entry.path:
            raise CorruptRule(f"rule {index} is not the rule {entry.id} of its entry")
        return rule


def load_cached(key: str, files: Sequence[Path], notes: list[str]) -> CachedPack | None:
    """The cached pack of ``files`` (whose key is ``key``), or ``None`` when there is none or
    it is not usable.

    Why a cache could not be used (other than there being none yet) is appended to
    ``notes``, for ``-v``.
    """
    folder = cache_dir()
    if folder is None:
        return None
    folder_fd = _open_folder(folder, notes, create=False)
    if folder_fd is None:
        return None
    path = folder / _file_name(key)
    try:
        data = _read_checked(folder_fd, _file_name(key), MAX_CACHE_BYTES, private=False)
        secret = _read_checked(folder_fd, SECRET_NAME, SECRET_SIZE, private=True)
        pack = _decode(data, secret, key)
        # Every rule file's rules, in file order, as the loader gives them (a catalogue file
        # gives several): an empty pack or a pack of other files is never taken for this one.
        paths = list(dict.fromkeys(entry.path for entry in pack.entries))
        if paths != [str(file) for file in files]:
            raise CodecError("its rules are not those of the rule files")
        return pack
    except FileNotFoundError as exc:
        if exc.filename == SECRET_NAME:
            notes.append(f"rule cache {path} cannot be verified (no key); rebuilt")
        return None
    except (OSError, _Refused, ValueError) as exc:  # CodecError and JSON errors are ValueErrors
        notes.append(f"rule cache {path} not used ({_reason(exc)}); rebuilt")
        return None
    finally:
        os.close(folder_fd)


def store(
    key: str, rules: tuple[Rule, ...], entries: tuple[RuleEntry, ...], notes: list[str]
) -> None:
    """Save a pack that loaded cleanly and remove the older files of the same rule files.

    Failures only add a note: the cache is a speed-up, never a reason to fail.
    """
    folder = cache_dir()
    if folder is None:
        return
    try:
        signatures = _signatures(rules)
        payload = _encode(rules, entries, signatures, key)
        pack = _parse(payload, key)
        faithful = (
            pack.entries == entries
            and all(pack.rule(i, examples=True) == rule for i, rule in enumerate(rules))
            and pack.signatures() == signatures
        )
    except (TypeError, ValueError):  # a value JSON cannot hold at all
        payload, faithful = b"", False
    if not faithful:  # e.g. an example's facts hold a YAML date, which JSON cannot keep
        notes.append("rule cache not written: the pack does not come back the same from JSON")
        return
    folder_fd = _open_folder(folder, notes, create=True)
    if folder_fd is None:
        return
    try:
        secret = _secret(folder_fd, folder, notes)
        mac = blake2b(payload, key=secret, digest_size=MAC_SIZE).hexdigest().encode()
        _write_atomically(folder_fd, _file_name(key), mac + b"\n" + payload)
        _remove_old(folder_fd, key)
    except (OSError, _Refused) as exc:
        notes.append(f"rule cache not written in {folder}: {_reason(exc)}")
    finally:
        os.close(folder_fd)


def _encode(
    rules: tuple[Rule, ...],
    entries: tuple[RuleEntry, ...],
    signatures: Sequence[Signature],
    key: str,
) -> bytes:
    if len(rules) != len(entries):
        raise ValueError("one entry per rule")
    lines = [
        {"schema": SCHEMA, "key": key, "rules": len(rules)},
        [entry_to_data(e) for e in entries],
        *(rule_to_data(r) for r in rules),
        {
            "words": _words_key(),
            "signatures": [[s.rule, s.cause, " ".join(sorted(s.words))] for s in signatures],
        },
    ]
    # json.dumps escapes every newline inside strings, so a line is exactly one record.
    return b"\n".join(json.dumps(line, separators=(",", ":")).encode() for line in lines)


def _words_key() -> str:
    from gpudoctor.rulebook.signatures import WORDS_KEY

    return WORDS_KEY


def _signatures(rules: Sequence[Rule]) -> list[Signature]:
    from gpudoctor.rulebook.signatures import SignatureIndex  # only when a pack is stored

    return SignatureIndex.from_rules(rules).signatures


def _decode(data: bytes, secret: bytes, key: str) -> CachedPack:
    mac, newline, payload = data.partition(b"\n")
    if len(secret) != SECRET_SIZE:
        raise _Refused("the key file has the wrong size")
    expected = blake2b(payload, key=secret, digest_size=MAC_SIZE).hexdigest().encode()
    # A plain comparison: the MAC is checked on local files, where nobody times the check.
    if not newline or mac != expected:
        raise _Refused("its MAC does not verify")
    return _parse(payload, key)


def _parse(payload: bytes, key: str) -> CachedPack:
    lines = payload.split(b"\n")
    header = json.loads(lines[0])
    if not isinstance(header, dict) or header.keys() != {"schema", "key", "rules"}:
        raise CodecError("not a rule cache")
    if header["schema"] != SCHEMA or header["key"] != key:
        raise CodecError("another schema or key")
    entries = json.loads(lines[1]) if len(lines) > 1 else None
    if not isinstance(entries, list) or not header["rules"] == len(entries) == len(lines) - 3:
        raise CodecError("the entries do not match the rules")
    return CachedPack(tuple(entry_from_data(e) for e in entries), lines[2:-1], lines[-1])


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc) or type(exc).__name__


def _unsafe(info: os.stat_result, *, directory: bool, private: bool) -> str | None:
    """Why a path with this status must not be trusted, or ``None``."""
    if directory and not stat.S_ISDIR(info.st_mode):
        return "is not a directory"
    if not directory and not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if info.st_uid != os.geteuid():
        return f"is owned by uid {info.st_uid}, not by this user (uid {os.geteuid()})"
    if info.st_mode & (0o077 if private else 0o022):
        return "is readable or writable by others" if private else "is writable by others"
    return None


def _open_folder(folder: Path, notes: list[str], *, create: bool) -> int | None:
    """A descriptor of the cache directory when it passes the checks, else ``None``."""
    if create:
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            notes.append(f"rule cache off: cannot create {folder}: {_reason(exc)}")
            return None
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(folder, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        reason = "is a symbolic link" if os.path.islink(folder) else _reason(exc)
        notes.append(f"rule cache off: {folder} {reason}")
        return None
    problem = _unsafe(os.fstat(fd), directory=True, private=False)
    if problem:
        os.close(fd)
        notes.append(f"rule cache off: {folder} {problem}")
        return None
    return fd


def _read_checked(folder_fd: int, name: str, limit: int, *, private: bool) -> bytes:
    """The bytes of ``name`` in the directory, after checking the open file.

    Raises ``FileNotFoundError`` (with ``filename`` set) when it does not exist, and
    :class:`_Refused` when it fails a check or is larger than ``limit``.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=folder_fd)
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "not found", name) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Refused(f"{name} is a symbolic link") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        problem = _unsafe(info, directory=False, private=private)
        if problem:
            raise _Refused(f"{name} {problem}")
        if info.st_size > limit:
            raise _Refused(f"{name} is larger than {limit} bytes")
        return handle.read(info.st_size + 1)


def _secret(folder_fd: int, folder: Path, notes: list[str]) -> bytes:
    """The MAC key of this directory, created when missing, replaced when it fails a check."""
    try:
        secret = _read_checked(folder_fd, SECRET_NAME, SECRET_SIZE, private=True)
        if len(secret) == SECRET_SIZE:
            return secret
        problem = "has the wrong size"
    except FileNotFoundError:
        problem = ""
    except _Refused as exc:
        problem = str(exc).removeprefix(f"{SECRET_NAME} ")
    if problem:
        notes.append(f"rule cache key {folder / SECRET_NAME} {problem}; replaced")
        os.unlink(SECRET_NAME, dir_fd=folder_fd)
    # Written under a temporary name, then linked: link() fails when another process made
    # the key first, and nobody ever sees a partly written key.
    temp = _write_new(folder_fd, os.urandom(SECRET_SIZE))
    try:
        os.link(temp, SECRET_NAME, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except FileExistsError:
        pass
    finally:
        os.unlink(temp, dir_fd=folder_fd)
    secret = _read_checked(folder_fd, SECRET_NAME, SECRET_SIZE, private=True)
    if len(secret) != SECRET_SIZE:
        raise _Refused(f"{SECRET_NAME} has the wrong size")
    return secret


def _write_new(folder_fd: int, data: bytes) -> str:
    """Write ``data`` to a new private file with a fresh name; returns the name."""
    name = f"{_TEMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(name, flags, 0o600, dir_fd=folder_fd)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    except BaseException:
        os.unlink(name, dir_fd=folder_fd)
        raise
    return name


def _write_atomically(folder_fd: int, name: str, data: bytes) -> None:
    temp = _write_new(folder_fd, data)
    try:
        os.replace(temp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        os.unlink(temp, dir_fd=folder_fd)
        raise


def _remove_old(folder_fd: int, key: str) -> None:
    """Remove older packs of the same rule files (and pickles of older versions), other
    packs not written for :data:`STALE_OTHER_PACK` seconds, and forgotten temporary files."""
    current = _file_name(key)
    same_files = f"rules-{key.partition('-')[0]}-"
    now = time.time()
    for name in os.listdir(folder_fd):
        if name == current:
            continue
        if name.startswith(same_files) or (name.startswith("rules-") and name.endswith(".pickle")):
            age = 0.0
        elif name.startswith("rules-"):
            age = STALE_OTHER_PACK
        elif name.startswith(_TEMP_PREFIX):
            age = STALE_TEMP
        else:
            continue
        try:
            if age == 0 or _mtime(folder_fd, name) < now - age:
                os.unlink(name, dir_fd=folder_fd)
        except OSError:
            continue


def _mtime(folder_fd: int, name: str) -> float:
    return os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mtime
