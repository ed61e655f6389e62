"""Closest known signatures: the fallback that compares an unrecognised error with the
rules' example messages."""

from __future__ import annotations

import pytest

from gpudoctor.pipeline import explain_text
from gpudoctor.rulebook.book import RuleBook, load_rulebook
from gpudoctor.rulebook.model import Example, Role, Rule, Severity
from gpudoctor.rulebook.signatures import MIN_SIMILARITY, SignatureIndex, words


def rule(rule_id: str, cause: str, *messages: str, role: Role = Role.ROOT) -> Rule:
    return Rule(
        id=rule_id,
        cause=cause,
        title=f"{rule_id} title",
        severity=Severity.ERROR,
        role=role,
        confidence=0.9,
        summary="s",
        explanation="e",
        fix=("Step one.", "Step with {value}."),
        references=(),
        examples_match=tuple(Example(text=m) for m in messages),
    )


RULES = (
    rule("oom", "gpu_oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate"),
    rule(
        "peer",
        "nccl_failure",
        "NCCL error: remote process exited or there was a network error, peer host-3",
    ),
    rule("asserted", "device_side_assert", "device-side assert triggered in indexing kernel"),
    rule("fb", "app_exception", "ValueError: a fallback example", role=Role.FALLBACK),
)
INDEX = SignatureIndex.from_rules(RULES)


def test_words_split_identifiers_and_drop_places_numbers_and_frames() -> None:
    text = (
        'File "/home/u/fit.py", line 3, in step\n'
        "cudaErrorIllegalAddress at /src/kernels/gemm.cu:88 on device 0x7f, NCCL_SOCKET_IFNAME"
    )
    assert words(text) == {"cuda", "illegal", "address", "device", "nccl", "socket", "ifname"}


def test_the_closest_cause_comes_first_one_per_cause() -> None:
    found = INDEX.closest("the remote process exited during allreduce: network error on peer")
    assert [RULES[r.rule].id for r in found] == ["peer"]
    assert MIN_SIMILARITY <= found[0].similarity <= 1.0
    assert set(found[0].shared) >= {"remote", "process", "network", "peer"}


def test_an_identical_message_is_fully_similar() -> None:
    [found] = INDEX.closest("device-side assert triggered in indexing kernel")
    assert RULES[found.rule].id == "asserted"
    assert found.similarity == pytest.approx(1.0)


def test_unrelated_or_short_errors_resemble_nothing() -> None:
    assert INDEX.closest("KeyError: 'learning_rate'") == []
    assert INDEX.closest("FileNotFoundError: no such dataset split: validation") == []
    assert INDEX.closest("") == []


def test_fallback_rules_are_not_signatures() -> None:
    assert INDEX.closest("ValueError: a fallback example") == []


@pytest.fixture(scope="module")
def pack() -> RuleBook:
    return load_rulebook()


# an error no rule knows, in words close to NCCL's "remote process exited or there was a
# network error"
PARAPHRASED = (
    "Traceback (most recent call last):\n"
    '  File "/srv/job/fit.py", line 12, in <module>\n'
    "    sync()\n"
    "commlib.CollectiveError: remote process exited or network error while the peer "
    "host-9 held the communicator\n"
)


def test_a_paraphrased_error_gets_the_resembling_cause_at_low_confidence(pack: RuleBook) -> None:
    diagnoses = [d for d in explain_text(PARAPHRASED, pack).diagnoses if d.is_cause]
    similar = [d for d in diagnoses if d.rule.startswith("similar/")]
    assert similar, [d.rule for d in diagnoses]
    assert similar[0].cause == "nccl_failure"
    assert similar[0].role == "fallback"
    assert similar[0].confidence < 0.3
    assert similar[0].evidence[0].line == 4
    assert "{" not in similar[0].summary + "".join(similar[0].fix)


@pytest.mark.parametrize(
    "prefix",
    [
        "trainer-1  | ",  # docker compose
        "May  4 08:00:01 gpu-node-7 python3[4821]: ",  # syslog, journalctl
        "(RayWorkerWrapper pid=4821, ip=10.0.0.7) ",  # Ray
    ],
)
def test_a_tools_prefix_is_not_compared(pack: RuleBook, prefix: str) -> None:
    prefixed = "".join(prefix + line + "\n" for line in PARAPHRASED.splitlines())

    def resemblances(text: str) -> list[tuple[str, str, float]]:
        return [
            (d.cause, d.rule, d.confidence)
            for d in explain_text(text, pack).diagnoses
            if d.rule.startswith("similar/")
        ]

    assert resemblances(PARAPHRASED)
    assert resemblances(prefixed) == resemblances(PARAPHRASED)


def test_no_resemblance_once_a_rule_recognised_the_error(pack: RuleBook) -> None:
    log = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    rules = [d.rule for d in explain_text(log, pack).diagnoses]
    assert rules and not any(r.startswith("similar/") for r in rules)


def test_a_cause_a_lead_already_names_is_not_offered_again(pack: RuleBook) -> None:
    log = (
        "[3/12] c++ -MMD -c /srv/ext/src/pool.cpp -o pool.o -O3 -std=c++17\n"
        "ninja: build stopped: subcommand failed.\n"
    )
    diagnoses = [d for d in explain_text(log, pack).diagnoses if d.is_cause]
    assert diagnoses[0].rule == "build-stopped-without-compiler-error"
    assert [d.cause for d in diagnoses].count("host_oom") == 1


def test_an_ordinary_bug_resembles_no_gpu_cause(pack: RuleBook) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/srv/job/fit.py", line 12, in <module>\n'
        "KeyError: 'learning_rate'\n"
    )
    assert [d.cause for d in explain_text(log, pack).diagnoses] == ["app_exception"]


PEER_ERROR = "comm: fatal: remote process exited or network error, peer host-9 gone"


def test_an_error_line_the_log_ends_on_is_compared(pack: RuleBook) -> None:
    log = "".join(f"step {i} loss 0.{i}\n" for i in range(10)) + PEER_ERROR + "\n"
    assert any(d.rule.startswith("similar/") for d in explain_text(log, pack).diagnoses)


def test_a_book_read_from_the_cache_without_examples_compares_the_same(pack: RuleBook) -> None:
    # `explain` builds its rules from the cache without their examples; the resemblance must
    # not need them (it once did, and the fallback never fired outside the tests).
    lean = load_rulebook(examples=False)
    assert not lean.has_examples  # the pack fixture filled the cache: this one came from it
    log = "".join(f"step {i} loss 0.{i}\n" for i in range(10)) + PEER_ERROR + "\n"

    def resemblances(book: RuleBook) -> list[str]:
        return [d.rule for d in explain_text(log, book).diagnoses if d.rule.startswith("similar/")]

    whole = resemblances(pack)
    assert whole
    assert resemblances(lean) == whole


def test_an_error_line_the_job_went_on_from_is_not(pack: RuleBook) -> None:
    log = PEER_ERROR + "\n" + "".join(f"step {i} loss 0.{i}\n" for i in range(10))
    assert explain_text(log, pack).diagnoses == ()


def test_a_failing_exit_code_makes_an_earlier_error_line_count(pack: RuleBook) -> None:
    log = PEER_ERROR + "\n" + "".join(f"step {i}\n" for i in range(10)) + "exit status 3\n"
    assert any(d.rule.startswith("similar/") for d in explain_text(log, pack).diagnoses)


KEY_ERROR = (
    "Traceback (most recent call last):\n"
    '  File "/srv/job/fit.py", line 12, in <module>\n'
    "KeyError: 'lr'\n"
)


@pytest.mark.parametrize(
    "ending",
    [
        "srun: error: node-1: task 0: Exited with exit code 1",
        "subprocess.CalledProcessError: Command '['python', 'fit.py']' returned non-zero exit "
        "status 1.",
        "Error: Process completed with exit code 1.",
    ],
)
def test_a_launchers_exit_line_is_not_compared(pack: RuleBook, ending: str) -> None:
    for log in (KEY_ERROR + ending + "\n", ending + "\n"):
        rules = [d.rule for d in explain_text(log, pack).diagnoses]
        assert not any(r.startswith("similar/") for r in rules), (log, rules)


def test_the_last_error_lines_are_never_the_first_ones(pack: RuleBook) -> None:
    log = "".join(
        [
            *(f"startup: cannot open optional plugin directory /opt/p{i}\n" for i in range(5)),
            *(f"step {i} loss 0.{i}\n" for i in range(50)),
            PEER_ERROR + "\n",
            *(f"warning: failed to flush metrics buffer {i}\n" for i in range(5)),
            "exit status 1\n",
        ]
    )
    similar = [d for d in explain_text(log, pack).diagnoses if d.rule.startswith("similar/")]
    assert all(e.line == 56 for d in similar for e in d.evidence if e.line), similar


def test_a_crash_report_before_the_error_does_not_end_the_log(pack: RuleBook) -> None:
    log = "".join(
        [
            "thread 'loader' panicked at src/io.rs:12:5:\n",
            *(f"step {i} loss 0.{i}\n" for i in range(50)),
            PEER_ERROR + "\n",
            *(f"step {i} loss 0.{i}\n" for i in range(50, 200)),
        ]
    )
    assert not any(d.rule.startswith("similar/") for d in explain_text(log, pack).diagnoses)


def test_a_signature_that_does_not_lead_back_to_its_cause_is_not_used(pack: RuleBook) -> None:
    # A cache whose signature names a fallback rule under another cause (stale or forged
    # under a valid key) offers nothing: the rule it points at must have that cause.
    from gpudoctor.rulebook.signatures import Signature, SignatureIndex

    fallback = next(i for i, e in enumerate(pack.entries) if e.id == "fallback-crash-signal")
    forged = SignatureIndex([Signature(fallback, "gpu_oom", words(PEER_ERROR))])
    pack._signature_index = forged
    try:
        log = "".join(f"step {i}\n" for i in range(10)) + PEER_ERROR + "\n"
        assert not any(d.rule.startswith("similar/") for d in explain_text(log, pack).diagnoses)
    finally:
        pack._signature_index = None
