"""A cache of loaded rule packs, so that each run does not parse every YAML file again.

Parsing and validating a pack of ~100 YAML files takes longer than the whole rest of a short
``explain`` run. A pack that loaded without errors is stored as a pickle under the user's cache
directory (``$GPUDOCTOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/gpudoctor``, else
``~/.cache/gpudoctor``), keyed by gpudoctor's version and every rule file's path, size and
modification time; any change to a file makes a new key. Loading only accepts gpudoctor's own
rule classes and plain data (a restricted unpickler), and a cache that cannot be read or
written is ignored: the pack is then loaded from YAML as usual. ``GPUDOCTOR_NO_CACHE=1``
turns the cache off.
"""

from __future__ import annotations

import io
import os
import pickle
import zlib
from collections.abc import Sequence
from pathlib import Path

from gpudoctor import __version__
from gpudoctor.rulebook.model import Rule

_ALLOWED = {
    ("gpudoctor.rulebook.model", name)
    for name in ("Rule", "Pattern", "Adjustment", "Example", "Role", "Severity", "MatchMode")
} | {
    ("gpudoctor.logs.scanner", "CaptureType"),
    ("gpudoctor.errors", "SourceLocation"),
    ("builtins", "frozenset"),
    ("builtins", "set"),
    ("copyreg", "_reconstructor"),
    ("builtins", "object"),
}


class _RulesUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> object:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in the rule cache")
        return super().find_class(module, name)


def cache_dir() -> Path | None:
    """Where rule caches live, or ``None`` when caching is off."""
    if os.environ.get("GPUDOCTOR_NO_CACHE") == "1":
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


def cache_key(files: Sequence[Path]) -> str:
    """A key that changes whenever gpudoctor or any rule file changes."""
    parts = [__version__]
    for file in files:
        stat = file.stat()
        parts.append(f"{os.path.abspath(file)}\0{stat.st_size}\0{stat.st_mtime_ns}")
    text = "\n".join(parts).encode()
    # Two 32-bit checksums (zlib is already loaded; hashlib would cost start-up time).
    return f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}{len(text):x}"


def load_cached(key: str) -> tuple[Rule, ...] | None:
    """The cached pack for ``key``, or ``None`` when there is none or it is unusable."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        data = (folder / f"rules-{key}.pickle").read_bytes()
        rules = _RulesUnpickler(io.BytesIO(data)).load()
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError):
        return None
    if not isinstance(rules, tuple) or not all(isinstance(r, Rule) for r in rules):
        return None
    return rules


def store(key: str, rules: tuple[Rule, ...]) -> None:
    """Save a pack that loaded cleanly; failures are ignored (the cache is only a speed-up)."""
    folder = cache_dir()
    if folder is None:
        return
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, delete=False, suffix=".tmp") as tmp:
            pickle.dump(rules, tmp, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp.name, folder / f"rules-{key}.pickle")
    except OSError:
        return
