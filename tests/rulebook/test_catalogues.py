"""Catalogues: YAML lists of error codes become one generic rule per entry at load time."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.engine import evaluate_rule
from gpudoctor.errors import RuleErrors
from gpudoctor.logs.scanner import PatternSpec, Scanner
from gpudoctor.pipeline import LogInput, make_scanner, scan_logs
from gpudoctor.rulebook.book import RuleBook
from gpudoctor.rulebook.catalogues import camel_spellings
from gpudoctor.rulebook.files import bundled_rules_dir
from gpudoctor.rulebook.loader import load_file, load_rules
from gpudoctor.rulebook.model import Role, Rule, Severity
from gpudoctor.rulebook.selftest import run_examples

FIXTURES = Path(__file__).parents[1] / "fixtures" / "catalogues"
DEMO = FIXTURES / "demo-errors.yaml"


def demo_rules() -> dict[str, object]:
    rules, errors = load_file(DEMO)
    assert errors == []
    return {r.id: r for r in rules}


def test_one_rule_per_entry_with_defaults_and_overrides() -> None:
    rules = demo_rules()
    assert sorted(rules) == ["demo-errors-bad-address", "demo-errors-device-gone"]
    bad = rules["demo-errors-bad-address"]
    gone = rules["demo-errors-device-gone"]
    assert bad.cause == "illegal_memory_access"  # type: ignore[attr-defined]
    assert bad.role is Role.GENERIC  # type: ignore[attr-defined]
    assert bad.severity is Severity.ERROR  # type: ignore[attr-defined]
    assert bad.confidence == 0.6  # type: ignore[attr-defined]
    assert gone.confidence == 0.7  # type: ignore[attr-defined]
    assert bad.fix == ("Run the demo under compute-sanitizer.",)  # type: ignore[attr-defined]
    assert gone.fix == ("Check the kernel log for Xid lines.",)  # type: ignore[attr-defined]
    assert bad.summary == "A demo kernel read memory outside its buffers."  # type: ignore[attr-defined]
    assert "Demo library status codes" in bad.explanation  # type: ignore[attr-defined]
    assert bad.references == ("https://example.org/demo/status-codes",)  # type: ignore[attr-defined]
    assert bad.title == "demoErrorBadAddress (17): the demo kernel touched (bad) memory"  # type: ignore[attr-defined]
    assert gone.title == "The demo device is gone"  # type: ignore[attr-defined]
    assert bad.path == str(DEMO)  # type: ignore[attr-defined]


def test_templates_apply_only_with_their_placeholders() -> None:
    rules = demo_rules()
    bad = rules["demo-errors-bad-address"]
    gone = rules["demo-errors-device-gone"]
    assert [p.id for p in bad.patterns] == ["name", "text", "number", "framed_name"]  # type: ignore[attr-defined]
    assert bad.patterns[0].regex == r"\b(?:demoErrorBadAddress|DEMO_BAD_ADDRESS)\b"  # type: ignore[attr-defined]
    assert bad.patterns[1].regex == r"the demo kernel touched \(bad\) memory"  # type: ignore[attr-defined]
    assert bad.patterns[2].regex == r"demo error(?: code)?[ =:]+17\b"  # type: ignore[attr-defined]
    assert bad.patterns[3].regex == r"\bDemoError::BadAddress\b"  # type: ignore[attr-defined]
    assert [p.regex for p in gone.patterns] == [r"\bdemoErrorDeviceGone\b"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("rule_id", "text", "fires"),
    [
        ("demo-errors-bad-address", "ERROR: DEMO_BAD_ADDRESS: in kernel foo", True),
        ("demo-errors-bad-address", "what: the demo kernel touched (bad) memory", True),
        ("demo-errors-bad-address", "demo error: 17", True),
        ("demo-errors-bad-address", "demo error: 171", False),
        ("demo-errors-bad-address", "demoErrorBadAddressLater", False),
        ("demo-errors-bad-address", "Err(DemoError::BadAddress)", True),
        ("demo-errors-bad-address", "BadAddress", False),
        ("demo-errors-device-gone", "demoErrorBadAddress", False),
        ("demo-errors-device-gone", "status=demoErrorDeviceGone", True),
    ],
)
def test_generated_rules_fire_on_their_signatures(rule_id: str, text: str, fires: bool) -> None:
    rule = demo_rules()[rule_id]
    book = RuleBook((rule,))  # type: ignore[arg-type]
    scan = scan_logs([LogInput.from_text("example", text)], make_scanner(book))
    assert (evaluate_rule(rule, scan.hits, {}) is not None) is fires  # type: ignore[arg-type]


def test_examples_are_generated_and_given_ones_kept() -> None:
    bad = demo_rules()["demo-errors-bad-address"]
    match = [e.text for e in bad.examples_match]  # type: ignore[attr-defined]
    no_match = [e.text for e in bad.examples_no_match]  # type: ignore[attr-defined]
    assert match == [
        "demoErrorBadAddress",
        "DEMO_BAD_ADDRESS",
        "the demo kernel touched (bad) memory",
        "RuntimeError: demo error code 17 in step 3",
    ]
    assert no_match == ["demoErrorBadAddressX", "demoErrorDeviceGone", "demo error code 170"]
    results = run_examples(list(demo_rules().values()))  # type: ignore[arg-type]
    assert results and all(r.passed for r in results)


def test_load_rules_dispatches_catalogues_beside_rule_files(tmp_path: Path) -> None:
    (tmp_path / "catalogues").mkdir()
    (tmp_path / "catalogues" / "demo-errors.yaml").write_text(DEMO.read_text())
    ids = {r.id for r in load_rules([tmp_path]).rules}
    assert ids == {"demo-errors-bad-address", "demo-errors-device-gone"}


@pytest.mark.parametrize(
    ("name", "spellings"),
    [
        ("CUDNN_STATUS_ARCH_MISMATCH", ("cudnnStatusArchMismatch", "cudnnArchMismatch")),
        ("CUFFT_EXEC_FAILED", ("cufftExecFailed",)),
        ("CUSOLVER_STATUS_BAD_PARAM_NULL_POINTER", (
            "cusolverStatusBadParamNullPointer", "cusolverBadParamNullPointer",
        )),
        ("cudaErrorIllegalAddress", ()),
        ("NCCL", ()),
    ],
)  # fmt: skip
def test_camel_spellings_of_status_names(name: str, spellings: tuple[str, ...]) -> None:
    assert camel_spellings(name) == spellings


def test_camel_names_let_a_wrapper_s_exception_class_name_the_code(tmp_path: Path) -> None:
    body = (
        "catalogue: demo\ntitle: t\n{flag}entries:\n"
        "  - {{id: arch, names: [DEMO_STATUS_ARCH_MISMATCH], cause: arch_mismatch, meaning: m,"
        " fix: [f], severity: error, confidence: 0.5}}\n"
    )
    line = "raise cudnnExceptions[status]\nlibdemo.demoStatusArchMismatch"
    for flag, fires in (("camel_names: true\n", True), ("", False)):
        path = tmp_path / "demo.yaml"
        path.write_text(body.format(flag=flag))
        rules, errors = load_file(path)
        assert errors == []
        book = RuleBook(tuple(rules))
        scan = scan_logs([LogInput.from_text("example", line)], make_scanner(book))
        assert (evaluate_rule(rules[0], scan.hits, {}) is not None) is fires


def errors_of(name: str) -> list[str]:
    rules, errors = load_file(FIXTURES / "bad" / name)
    assert rules == []
    return [f"{e.location.line}:{e.location.column}: {e.message}" for e in errors]


def test_entry_errors_are_reported_at_their_place() -> None:
    assert errors_of("entry-problems.yaml") == [
        '12:5: unknown key "colour" in an entry',
        '19:12: unknown cause "gpu_om" (did you mean "gpu_oom"?)',
        '13:5: an entry needs "fix" (or "fixes.nan_blowup")',
    ]


def test_template_errors_are_reported_at_the_template() -> None:
    [message] = errors_of("bad-template.yaml")
    assert message.startswith("4:5: invalid RE2 regex for entry one")
    assert errors_of("no-placeholder.yaml") == [
        "4:5: a match template needs {name}, {text}, {framed_text}, {framed_name} or {number}"
    ]


def test_catalogue_errors_stop_the_pack_unless_collected(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text((FIXTURES / "bad" / "no-placeholder.yaml").read_text())
    with pytest.raises(RuleErrors):
        load_rules([tmp_path])
    assert len(load_rules([tmp_path], collect=True).errors) == 1


def test_aliases_are_refused_in_catalogues_too(tmp_path: Path) -> None:
    path = tmp_path / "alias.yaml"
    path.write_text(
        "catalogue: a\ntitle: t\nfixes:\n  gpu_oom: &f ['x']\nentries:\n"
        "  - {id: b, names: [demoB], cause: gpu_oom, meaning: m, fix: *f,"
        " severity: error, confidence: 0.5}\n"
    )
    rules, errors = load_file(path)
    assert rules == [] and "aliases" in errors[0].message


def test_bundled_catalogues_generate_generic_rules() -> None:
    folder = bundled_rules_dir() / "catalogues"
    rules = load_rules([folder]).rules
    assert len(rules) >= 30
    assert all(r.role in (Role.GENERIC, Role.CASCADE, Role.ROOT) for r in rules)
    assert all(r.references for r in rules)


def test_an_ordinary_short_log_compiles_few_of_the_bundled_patterns() -> None:
    # A template is repeated for every entry of its catalogue: one whose required literals are
    # weak ("rror", from a case-folded "[Ee]rror") puts a catalogue's worth of patterns into
    # the set of every short log, and start-up pays for compiling them.
    ordinary = (
        b"Epoch 1/10 step 100 loss=0.3412 lr=3e-4\n"
        b"validation error rate 0.12, no failure\n"
        b"saving checkpoint to /data/run7/epoch1.pt\n"
    )
    scanner = make_scanner(RuleBook(tuple(load_rules([bundled_rules_dir()]).rules)))
    everything = scanner.set_size
    scanner.keep_only_present([ordinary])
    assert scanner.set_size < everything / 10


# Every cudaError_t code 1..999 of CUDA 12.8/13.0 (driver_types.h), written from the header:
# the catalogue must have an entry for each.
CUDA_RUNTIME_ERRORS = """
1 cudaErrorInvalidValue  2 cudaErrorMemoryAllocation  3 cudaErrorInitializationError
4 cudaErrorCudartUnloading  5 cudaErrorProfilerDisabled  6 cudaErrorProfilerNotInitialized
7 cudaErrorProfilerAlreadyStarted  8 cudaErrorProfilerAlreadyStopped
9 cudaErrorInvalidConfiguration  12 cudaErrorInvalidPitchValue  13 cudaErrorInvalidSymbol
16 cudaErrorInvalidHostPointer  17 cudaErrorInvalidDevicePointer  18 cudaErrorInvalidTexture
19 cudaErrorInvalidTextureBinding  20 cudaErrorInvalidChannelDescriptor
21 cudaErrorInvalidMemcpyDirection  22 cudaErrorAddressOfConstant
23 cudaErrorTextureFetchFailed  24 cudaErrorTextureNotBound  25 cudaErrorSynchronizationError
26 cudaErrorInvalidFilterSetting  27 cudaErrorInvalidNormSetting
28 cudaErrorMixedDeviceExecution  31 cudaErrorNotYetImplemented
32 cudaErrorMemoryValueTooLarge  34 cudaErrorStubLibrary  35 cudaErrorInsufficientDriver
36 cudaErrorCallRequiresNewerDriver  37 cudaErrorInvalidSurface
43 cudaErrorDuplicateVariableName  44 cudaErrorDuplicateTextureName
45 cudaErrorDuplicateSurfaceName  46 cudaErrorDevicesUnavailable
49 cudaErrorIncompatibleDriverContext  52 cudaErrorMissingConfiguration
53 cudaErrorPriorLaunchFailure  65 cudaErrorLaunchMaxDepthExceeded
66 cudaErrorLaunchFileScopedTex  67 cudaErrorLaunchFileScopedSurf
68 cudaErrorSyncDepthExceeded  69 cudaErrorLaunchPendingCountExceeded
98 cudaErrorInvalidDeviceFunction  100 cudaErrorNoDevice  101 cudaErrorInvalidDevice
102 cudaErrorDeviceNotLicensed  103 cudaErrorSoftwareValidityNotEstablished
127 cudaErrorStartupFailure  200 cudaErrorInvalidKernelImage  201 cudaErrorDeviceUninitialized
205 cudaErrorMapBufferObjectFailed  206 cudaErrorUnmapBufferObjectFailed
207 cudaErrorArrayIsMapped  208 cudaErrorAlreadyMapped  209 cudaErrorNoKernelImageForDevice
210 cudaErrorAlreadyAcquired  211 cudaErrorNotMapped  212 cudaErrorNotMappedAsArray
213 cudaErrorNotMappedAsPointer  214 cudaErrorECCUncorrectable  215 cudaErrorUnsupportedLimit
216 cudaErrorDeviceAlreadyInUse  217 cudaErrorPeerAccessUnsupported  218 cudaErrorInvalidPtx
219 cudaErrorInvalidGraphicsContext  220 cudaErrorNvlinkUncorrectable
221 cudaErrorJitCompilerNotFound  222 cudaErrorUnsupportedPtxVersion
223 cudaErrorJitCompilationDisabled  224 cudaErrorUnsupportedExecAffinity
225 cudaErrorUnsupportedDevSideSync  226 cudaErrorContained  300 cudaErrorInvalidSource
301 cudaErrorFileNotFound  302 cudaErrorSharedObjectSymbolNotFound
303 cudaErrorSharedObjectInitFailed  304 cudaErrorOperatingSystem
400 cudaErrorInvalidResourceHandle  401 cudaErrorIllegalState  402 cudaErrorLossyQuery
500 cudaErrorSymbolNotFound  600 cudaErrorNotReady  700 cudaErrorIllegalAddress
701 cudaErrorLaunchOutOfResources  702 cudaErrorLaunchTimeout
703 cudaErrorLaunchIncompatibleTexturing  704 cudaErrorPeerAccessAlreadyEnabled
705 cudaErrorPeerAccessNotEnabled  708 cudaErrorSetOnActiveProcess
709 cudaErrorContextIsDestroyed  710 cudaErrorAssert  711 cudaErrorTooManyPeers
712 cudaErrorHostMemoryAlreadyRegistered  713 cudaErrorHostMemoryNotRegistered
714 cudaErrorHardwareStackError  715 cudaErrorIllegalInstruction
716 cudaErrorMisalignedAddress  717 cudaErrorInvalidAddressSpace  718 cudaErrorInvalidPc
719 cudaErrorLaunchFailure  720 cudaErrorCooperativeLaunchTooLarge
721 cudaErrorTensorMemoryLeak  800 cudaErrorNotPermitted  801 cudaErrorNotSupported
802 cudaErrorSystemNotReady  803 cudaErrorSystemDriverMismatch
804 cudaErrorCompatNotSupportedOnDevice  805 cudaErrorMpsConnectionFailed
806 cudaErrorMpsRpcFailure  807 cudaErrorMpsServerNotReady  808 cudaErrorMpsMaxClientsReached
809 cudaErrorMpsMaxConnectionsReached  810 cudaErrorMpsClientTerminated
811 cudaErrorCdpNotSupported  812 cudaErrorCdpVersionMismatch
900 cudaErrorStreamCaptureUnsupported  901 cudaErrorStreamCaptureInvalidated
902 cudaErrorStreamCaptureMerge  903 cudaErrorStreamCaptureUnmatched
904 cudaErrorStreamCaptureUnjoined  905 cudaErrorStreamCaptureIsolation
906 cudaErrorStreamCaptureImplicit  907 cudaErrorCapturedEvent
908 cudaErrorStreamCaptureWrongThread  909 cudaErrorTimeout
910 cudaErrorGraphExecUpdateFailure  911 cudaErrorExternalDevice
912 cudaErrorInvalidClusterSize  913 cudaErrorFunctionNotLoaded
914 cudaErrorInvalidResourceType  915 cudaErrorInvalidResourceConfiguration
999 cudaErrorUnknown
"""

# CUresult names that differ from the cudaError_t name's spelling, or that the catalogue once
# had wrong (cuda.h, same number).
CUDA_DRIVER_NAMES = {
    2: "CUDA_ERROR_OUT_OF_MEMORY",
    3: "CUDA_ERROR_NOT_INITIALIZED",
    4: "CUDA_ERROR_DEINITIALIZED",
    46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
    201: "CUDA_ERROR_INVALID_CONTEXT",
    209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
    218: "CUDA_ERROR_INVALID_PTX",
    400: "CUDA_ERROR_INVALID_HANDLE",
    500: "CUDA_ERROR_NOT_FOUND",
    708: "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
    717: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    718: "CUDA_ERROR_INVALID_PC",
    719: "CUDA_ERROR_LAUNCH_FAILED",
    720: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
}


# Runtime names the catalogue does not match on their own, with the text that finds the entry:
# TVM's CUDA_CALL (DGL, MXNet, decord) prints cudaErrorCudartUnloading in the condition of every
# CUDA error it reports ("e == cudaSuccess || e == cudaErrorCudartUnloading: CUDA: out of memory").
NAMES_NOT_MATCHED_ALONE = {"cudaErrorCudartUnloading": "driver shutting down"}


def firing(rules: list[Rule], specs: list[PatternSpec], text: str) -> set[str]:
    """The ids of the rules that fire on one log line (a scanner keeps its hits: one per text)."""
    scan = scan_logs([LogInput.from_text("example", text)], Scanner(specs))
    return {r.id for r in rules if evaluate_rule(r, scan.hits, {}) is not None}


def test_cuda_runtime_catalogue_covers_every_code() -> None:
    words = CUDA_RUNTIME_ERRORS.split()
    codes = list(zip(words[::2], words[1::2], strict=True))
    assert len(codes) == 132
    rules = load_file(bundled_rules_dir() / "catalogues" / "cuda-runtime-errors.yaml")[0]
    specs = list(RuleBook(tuple(rules)).pattern_specs())
    for number, name in codes:
        by_name = firing(rules, specs, f"status: {name}")
        if name in NAMES_NOT_MATCHED_ALONE:
            assert by_name == set(), name
            by_name = firing(rules, specs, f"CUDA error: {NAMES_NOT_MATCHED_ALONE[name]}")
        assert len(by_name) == 1, (name, by_name)
        assert firing(rules, specs, f"CUDA error {number} at step 7") == by_name, number
        if int(number) in CUDA_DRIVER_NAMES:
            driver = CUDA_DRIVER_NAMES[int(number)]
            assert firing(rules, specs, f"failed: {driver}") == by_name, driver


def test_a_tvm_check_names_the_error_after_cuda_colon_not_its_condition() -> None:
    rules = load_file(bundled_rules_dir() / "catalogues" / "cuda-runtime-errors.yaml")[0]
    specs = list(RuleBook(tuple(rules)).pattern_specs())
    line = (
        "[10:02:11] /src/runtime/cuda/cuda_device_api.cc:97: Check failed: e == cudaSuccess || "
        "e == cudaErrorCudartUnloading: CUDA: out of memory"
    )
    assert firing(rules, specs, line) == {"cuda-runtime-errors-memory-allocation"}
    assert firing(rules, specs, "Device CUDA: out of memory limits apply") == set()


@pytest.mark.parametrize(
    ("line", "entry"),
    [
        ("copy to constant memory failed invalid device symbol", "invalid-symbol"),
        ("p2p setup for ranks 2,3: peer access is not supported between these two devices",
         "peer-access-unsupported"),
        ("worker 1 on GPU 0: exclusive-thread device already in use by a different thread",
         "device-already-in-use"),
    ],
)  # fmt: skip
def test_a_distinctive_text_is_recognised_after_a_program_s_own_words(
    line: str, entry: str
) -> None:
    rules = load_file(bundled_rules_dir() / "catalogues" / "cuda-runtime-errors.yaml")[0]
    specs = list(RuleBook(tuple(rules)).pattern_specs())
    assert firing(rules, specs, line) == {f"cuda-runtime-errors-{entry}"}


def test_a_generic_text_still_needs_its_frame() -> None:
    rules = load_file(bundled_rules_dir() / "catalogues" / "cuda-runtime-errors.yaml")[0]
    specs = list(RuleBook(tuple(rules)).pattern_specs())
    assert firing(rules, specs, "upload failed: operation not permitted") == set()
