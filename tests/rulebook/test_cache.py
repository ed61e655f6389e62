"""The rule cache: same rules back, invalidated by any change, never trusted blindly."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest

from gpudoctor.rulebook import cache
from gpudoctor.rulebook.book import load_rulebook
from gpudoctor.rulebook.files import rule_files

RANKING = Path(__file__).parents[1] / "fixtures" / "rules" / "ranking"


@pytest.fixture
def pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUDOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    copy = tmp_path / "rules"
    shutil.copytree(RANKING, copy)
    return copy


def test_second_load_comes_from_cache_and_is_equal(pack: Path) -> None:
    first = load_rulebook([pack], bundled=False)
    key = cache.cache_key(rule_files([pack]))
    assert cache.load_cached(key) == first.rules
    assert load_rulebook([pack], bundled=False).rules == first.rules


def test_editing_a_rule_changes_the_key(pack: Path) -> None:
    load_rulebook([pack], bundled=False)
    before = cache.cache_key(rule_files([pack]))
    target = pack / "t-killed.yaml"
    target.write_text(target.read_text().replace("title: Killed", "title: Killed by someone"))
    assert cache.cache_key(rule_files([pack])) != before
    rules = {r.id: r for r in load_rulebook([pack], bundled=False).rules}
    assert rules["t-killed"].title == "Killed by someone"


def test_foreign_classes_are_refused(pack: Path, tmp_path: Path) -> None:
    key = "0" * 32
    folder = tmp_path / "cache"
    folder.mkdir(exist_ok=True)
    (folder / f"rules-{key}.pickle").write_bytes(pickle.dumps(Path("/etc/passwd")))
    assert cache.load_cached(key) is None


def test_corrupt_cache_is_ignored(pack: Path, tmp_path: Path) -> None:
    load_rulebook([pack], bundled=False)
    for file in (tmp_path / "cache").iterdir():
        file.write_bytes(b"not a pickle")
    assert len(load_rulebook([pack], bundled=False).rules) == 10


def test_cache_can_be_turned_off(pack: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUDOCTOR_NO_CACHE", "1")
    assert cache.cache_dir() is None
    assert len(load_rulebook([pack], bundled=False).rules) == 10
