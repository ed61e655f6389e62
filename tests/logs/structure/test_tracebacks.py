"""Facts read from Python tracebacks, and the fallback rules that name the terminal exception."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gpudoctor.logs.reader import InputStats, read_blocks
from gpudoctor.logs.scanner import Scanner
from gpudoctor.logs.structure import tracebacks
from gpudoctor.pipeline import explain_text
from gpudoctor.rulebook.book import load_rulebook


def facts_of(text: str) -> dict[str, object]:
    scanner = Scanner(list(tracebacks.PATTERNS))
    scanner.scan(read_blocks(io.BytesIO(text.encode()), InputStats(name="t")))
    return tracebacks.facts(scanner.hits)


PLAIN = """\
epoch 3 step 120 loss 0.412
Traceback (most recent call last):
  File "/work/proj/train.py", line 212, in <module>
    main(cfg)
  File "/work/proj/train.py", line 190, in main
    cfg = load(path)
  File "/home/ana/.venv/lib/python3.11/site-packages/omegaconf/omegaconf.py", line 190, in load
    raise KeyError(key)
omegaconf.errors.ConfigKeyError: Key 'optimizer.lr' is not in struct
"""


def test_plain_traceback() -> None:
    facts = facts_of(PLAIN)
    assert facts["traceback_count"] == 1
    assert facts["exception_type"] == "omegaconf.errors.ConfigKeyError"
    assert facts["exception_name"] == "ConfigKeyError"
    assert facts["exception_message"] == "Key 'optimizer.lr' is not in struct"
    assert facts["exception_chain"] == ["omegaconf.errors.ConfigKeyError"]
    assert facts["exception_in_worker"] is False
    assert facts["user_frame"] == "/work/proj/train.py:190 in main"
    assert facts["exception_from_library"] is True
    assert facts["exception_at_end"] is True
    assert facts["exception_gpu_like"] is False


@pytest.mark.parametrize(
    "prefix",
    ["[rank3]: ", "3: ", "[default0]:", "E1203 10:11:12.345678 9876 run.py:40] ",
     "2025-02-03 04:05:06,789 ERROR ", "(RayTrainWorker pid=5511, ip=10.1.2.3) ", "> ",
     "[gpu-node-07:3]", "[gpu-node-07:3]: "],
)  # fmt: skip
def test_prefixed_lines(prefix: str) -> None:
    text = "".join(prefix + line + "\n" for line in PLAIN.splitlines())
    facts = facts_of(text)
    assert facts["exception_type"] == "omegaconf.errors.ConfigKeyError"
    assert facts["user_frame"] == "/work/proj/train.py:190 in main"


def test_chained_causes_outermost_first() -> None:
    facts = facts_of(
        "Traceback (most recent call last):\n"
        '  File "/srv/app/io.py", line 9, in read\n'
        "FileNotFoundError: [Errno 2] No such file or directory: 'shard-07.bin'\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/app/loader.py", line 30, in load\n'
        "RuntimeError: could not read shard 7\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/app/main.py", line 4, in <module>\n'
        "jax.errors.JaxRuntimeError: dataset unavailable\n"
    )
    assert facts["traceback_count"] == 3
    assert facts["exception_type"] == "jax.errors.JaxRuntimeError"
    assert facts["exception_chain"] == [
        "jax.errors.JaxRuntimeError",
        "RuntimeError",
        "FileNotFoundError",
    ]
    assert facts["exception_cause_type"] == "FileNotFoundError"
    assert facts["user_frame"] == "/srv/app/main.py:4 in <module>"


DATALOADER = """\
[rank1]: Traceback (most recent call last):
[rank1]:   File "/home/u/proj/train.py", line 88, in <module>
[rank1]:     batch = next(it)
[rank1]:   File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 630, in __next__
[rank1]:     data = self._next_data()
[rank1]: PIL.UnidentifiedImageError: Caught UnidentifiedImageError in DataLoader worker process 2.
[rank1]: Original Traceback (most recent call last):
[rank1]:   File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop
[rank1]:     data = fetcher.fetch(index)
[rank1]:   File "/home/u/proj/data.py", line 41, in __getitem__
[rank1]:     img = Image.open(path)
[rank1]: PIL.UnidentifiedImageError: cannot identify image file 'img_0042.jpg'
"""  # noqa: E501


def test_dataloader_worker_reraise() -> None:
    facts = facts_of(DATALOADER)
    assert facts["traceback_count"] == 1
    assert facts["exception_type"] == "PIL.UnidentifiedImageError"
    assert facts["exception_message"] == "cannot identify image file 'img_0042.jpg'"
    assert facts["exception_in_worker"] is True
    assert facts["worker_exception_type"] == "PIL.UnidentifiedImageError"
    assert facts["exception_chain"] == ["PIL.UnidentifiedImageError", "PIL.UnidentifiedImageError"]
    assert facts["user_frame"] == "/home/u/proj/data.py:41 in __getitem__"
    assert facts["exception_from_library"] is False


def test_multiprocessing_remote_traceback() -> None:
    facts = facts_of(
        "multiprocessing.pool.RemoteTraceback: \n"
        '"""\n'
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.12/multiprocessing/pool.py", line 125, in worker\n'
        '  File "/data/prep/tokenize.py", line 17, in encode\n'
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0\n"
        '"""\n'
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/data/prep/run.py", line 50, in <module>\n'
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0\n"
    )
    assert facts["exception_in_worker"] is True
    assert facts["worker_exception_type"] == "UnicodeDecodeError"
    assert facts["user_frame"] == "/data/prep/run.py:50 in <module>"


def test_broken_wraps_and_one_line_paste() -> None:
    wrapped = facts_of(
        "Traceback (most recent call last):\n"
        '  File "/mnt/team/experiments/very/long/path/that/the/terminal/wrapped/mod\n'
        'el.py", line 77, in forward\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a\n"
        " total capacity of 23.6 GiB\n"
    )
    assert wrapped["exception_type"] == "torch.OutOfMemoryError"
    assert wrapped["exception_gpu_like"] is True
    one_line = facts_of(
        'Traceback (most recent call last): File "run.py", line 3, in <module> go() '
        "File \"run.py\", line 2, in go NameError: name 'go2' is not defined\n"
    )
    assert one_line["exception_type"] == "NameError"
    assert one_line["exception_message"] == "name 'go2' is not defined"


def test_ipython_frames() -> None:
    facts = facts_of(
        "ValueError                                Traceback (most recent call last)\n"
        "Cell In[7], line 3\n"
        "File ~/miniconda3/lib/python3.11/site-packages/sklearn/base.py:1151, in fit(self, X)\n"
        "ValueError: Input X contains NaN.\n"
    )
    assert facts["exception_type"] == "ValueError"
    assert facts["user_frame"] == "Cell In[7]:3"
    assert facts["exception_from_library"] is True


NOTEBOOK_CUT = """\
Epoch 1/40
---------------------------------------------------------------------------
InternalError                             Traceback (most recent call last)
<ipython-input-4-1b2c3d4e5f60> in <module>()
----> 1 history = model.fit(x_train, y_train, epochs=40)

/usr/local/lib/python3.7/dist-packages/keras/engine/training.py in fit(self, x, y)
   1182           callbacks.on_train_batch_begin(step)
-> 1183           tmp_logs = self.train_function(iterator)
"""


def test_a_notebook_traceback_cut_before_its_exception_is_named_by_its_header() -> None:
    facts = facts_of(NOTEBOOK_CUT)
    assert facts["exception_type"] == "InternalError"
    assert facts["exception_message"] == ""
    assert facts["exception_has_traceback"] is True
    top = explain_text(NOTEBOOK_CUT, load_rulebook()).causes[0]
    assert top.rule == "fallback-python-exception"
    assert "ended on InternalError" in top.summary
    assert "InternalError:" not in top.summary  # no dangling colon for the missing message


def test_a_complete_notebook_traceback_keeps_its_exception_line() -> None:
    facts = facts_of(NOTEBOOK_CUT + "InternalError: Failed copying input tensor to GPU\n")
    assert facts["exception_message"] == "Failed copying input tensor to GPU"
    # a plain header names no type: a paste cut after it stays unfinished
    assert "exception_type" not in facts_of(
        'Traceback (most recent call last):\n  File "x.py", line 2, in <module>\n'
    )


def test_ordinary_log_lines_are_not_exceptions() -> None:
    assert facts_of("Error: file saved to out/ckpt.pt\nERROR: retrying in 5s\n") == {}
    assert facts_of("INFO trainer: ValueError-free run\n    raise ValueError(x)\n") == {}


def test_a_survived_traceback_is_not_at_end() -> None:
    lines = [PLAIN]
    lines += [f"epoch 4 step {n} loss 0.3{n % 10}\n" for n in range(200, 240)]
    lines.append("Training complete.\n")
    assert facts_of("".join(lines))["exception_at_end"] is False
    # A few lines after the exception (a launcher's summary) do not mean the job went on.
    assert facts_of(PLAIN + "wandb: Synced 5 W&B file(s)\n")["exception_at_end"] is True


def test_is_library_path() -> None:
    assert tracebacks.is_library_path("/usr/lib/python3.10/threading.py")
    assert tracebacks.is_library_path("<frozen runpy>")
    assert tracebacks.is_library_path("C:\\Python311\\Lib\\site-packages\\torch\\nn\\f.py")
    assert not tracebacks.is_library_path("/home/u/proj/train.py")
    assert not tracebacks.is_library_path("train.py")


# The fallback rules, through the whole pipeline with the bundled rules.


def causes(text: str) -> list[tuple[str, str]]:
    report = explain_text(text, load_rulebook())
    return [(d.rule, d.cause) for d in report.causes]


def test_fallback_names_an_unknown_exception() -> None:
    report = explain_text(PLAIN, load_rulebook())
    top = report.causes[0]
    assert top.rule == "fallback-python-exception"
    assert top.cause == "app_exception"
    assert top.confidence < 0.5
    assert "omegaconf.errors.ConfigKeyError" in top.summary
    assert "/work/proj/train.py:190 in main" in top.summary


def test_fallback_worker_died() -> None:
    assert causes(DATALOADER)[0][0] == "fallback-worker-died"


def test_fallback_gives_way_to_a_real_cause() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 23.65 GiB of which 1.10 GiB is free. Of the allocated memory 20.1 GiB "
        "is allocated by PyTorch, and 1.2 GiB is reserved by PyTorch but unallocated.\n"
    )
    found = causes(text)
    assert found[0][1] == "gpu_oom"
    assert not any(rule.startswith("fallback-") for rule, _ in found)


HEADLESS = """\
step 5400 loss 1.83
  File "/srv/jobs/pretrain.py", line 88, in main
    trainer.fit(model)
  File "/opt/conda/lib/python3.10/site-packages/engine/loop.py", line 211, in fit
    batch = next(self._it)
  File "/opt/conda/lib/python3.10/site-packages/engine/data.py", line 54, in __next__
    return self._queue.get(timeout=600)
"""


def test_frames_without_a_header_are_counted() -> None:
    facts = facts_of(HEADLESS)
    assert facts["traceback_count"] == 0
    assert facts["traceback_frame_count"] == 3
    assert "exception_type" not in facts
    assert facts_of(PLAIN)["traceback_frame_count"] == 3


def test_a_paste_cut_inside_headless_frames_gets_the_unfinished_fallback() -> None:
    found = causes(HEADLESS)
    assert found == [("fallback-unfinished-traceback", "app_exception")]
    assert causes(HEADLESS.split("  File", 2)[0] + "  File" + HEADLESS.split("  File", 2)[1]) == []


def test_no_fallback_on_gpu_like_exception() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "infer.py", line 9, in <module>\n'
        "torch.AcceleratorError: CUDA error: some new failure nobody has catalogued yet\n"
    )
    assert not any(rule == "fallback-python-exception" for rule, _ in causes(text))


def test_no_fallback_when_the_run_went_on() -> None:
    survived = [PLAIN]
    survived += [f"epoch 4 step {n} loss 0.3{n % 10}\n" for n in range(200, 260)]
    survived.append("Training complete\n")
    assert causes("".join(survived)) == []
    assert causes("Error: retrying\nepoch 1 step 10 loss 1.0\nDone\n") == []


@pytest.mark.parametrize(
    "prefix",
    [
        "(EngineCore_0 pid=5150) ERROR 03-02 08:41:17 [core.py:702] ",
        "2025-03-02 08:41:17,204 - trainer - ERROR - ",
        "[2025-03-02 08:41:17] CRITICAL worker.py:88: ",
    ],
)
def test_exception_behind_a_logging_prefix(prefix: str) -> None:
    text = "\n".join(
        prefix + line
        for line in (
            "Traceback (most recent call last):",
            '  File "/srv/app/serve.py", line 31, in load',
            "    weights = table[name]",
            "KeyError: 'decoder.norm.weight'",
        )
    )
    facts = facts_of(text)
    assert facts["exception_type"] == "KeyError"
    assert facts["exception_message"] == "'decoder.norm.weight'"
    assert facts["exception_has_traceback"] is True


def test_a_logged_error_word_alone_is_not_an_exception() -> None:
    facts = facts_of("2025-03-02 08:41:17 - io - ERROR - Retrying: connection reset, attempt 2\n")
    assert "exception_type" not in facts


# CPython's unraisable-exception reports: "Exception ignored in: %R" (from 3.13 also
# "Exception ignored while calling deallocator %R"), each with its own traceback, then a crash
# while the interpreter shuts down.
SHUTDOWN_CASCADE = (
    Path(__file__).parents[2] / "fixtures" / "tracebacks" / "shutdown-cascade.log"
).read_text()


def test_an_ignored_exception_is_not_the_terminal_one() -> None:
    facts = facts_of(SHUTDOWN_CASCADE)
    assert facts["exception_type"] == "TypeError"
    assert facts["exception_message"].startswith("expected Tensor as element 1")
    assert facts["user_frame"] == "/home/lee/sim/run_policy.py:74 in <module>"


def test_an_ignored_exception_without_its_traceback_is_not_terminal_either() -> None:
    text = (
        "ValueError: bad label 7 in sample 31\n"
        "Exception ignored in: 'sampler._shuffle'\n"
        "OverflowError: Python int too large to convert to C long\n"
    )
    assert facts_of(text)["exception_type"] == "ValueError"


def test_a_run_that_went_on_after_an_ignored_exception_gets_no_fallback() -> None:
    text = (
        "epoch 2 step 400 loss 0.31\n"
        "Exception ignored in: <function _Loader.__del__ at 0x7fd1a2b3c4d0>\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/env/lib/python3.11/site-packages/loader/iter.py", line 140, in __del__\n'
        "AssertionError: can only test a child process\n"
        "epoch 2 step 420 loss 0.30\n"
    )
    facts = facts_of(text)
    assert "exception_type" not in facts
    rules = {d.rule for d in explain_text(text, load_rulebook()).causes}
    assert "fallback-python-exception" not in rules
