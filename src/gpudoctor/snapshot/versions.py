"""Installed CUDA user space, read from package metadata and files — never by importing.

Importing torch, TensorFlow or JAX can itself crash, hang or create a CUDA context, so this
module only reads: ``importlib.metadata`` for names and versions, ``torch/version.py`` and
TensorFlow's ``build_info.py`` parsed as text with :mod:`ast`. It also reports the NVIDIA
runtime wheels (``nvidia-cuda-runtime-cu12``, the suffix-less CUDA 13 ``nvidia-cuda-runtime``,
cuDNN, NCCL, cuBLAS ...), JAX CUDA plugins and CuPy wheels, and the environment variables
that steer CUDA, the allocators and NCCL.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gpudoctor.snapshot.model import CudaPackage, FrameworkInfo, VersionsInfo

#: Environment variables copied into the snapshot (plus every ``NCCL_*``/``TORCH_NCCL_*``).
ENV_VARS = (
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_MODULE_LOADING",
    "LD_LIBRARY_PATH",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "TORCH_DISTRIBUTED_DEBUG",
    "TORCH_SHOW_CPP_STACKTRACES",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    "TF_GPU_ALLOCATOR",
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "XLA_PYTHON_CLIENT_ALLOCATOR",
    "OMP_NUM_THREADS",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
)
ENV_PREFIXES = ("NCCL_", "TORCH_NCCL_")

_TF_DISTS = ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tf-nightly", "tensorflow-intel")
_CUDA_SUFFIX_RE = re.compile(r"^nvidia-(?P<component>.+?)-cu(?P<major>\d+)$")
_NVIDIA_RE = re.compile(r"^nvidia-(?P<component>.+)$")
_JAX_PLUGIN_RE = re.compile(r"^jax-cuda(?P<major>\d+)-(?:plugin|pjrt)$")
_JAXLIB_CUDA_RE = re.compile(r"\+cuda(?P<major>\d+)")
_CUPY_RE = re.compile(r"^cupy-cuda(?P<ver>\d+)(?P<x>x?)$")
# Suffix-less NVIDIA wheels that are not CUDA-toolkit components.
_NOT_CUDA = {"ml-py", "ml-py3", "dali", "pyindex", "modelopt", "tensorrt"}
# CUDA toolkit components whose version major is the CUDA major (unlike cuDNN or NCCL).
_TOOLKIT_COMPONENTS = {
    "cublas",
    "cufft",
    "curand",
    "cusolver",
    "cusparse",
    "cufile",
    "nvjitlink",
    "npp",
    "nvjpeg",
    "nvtx",
    "nvvm",
    "nvfatbin",
}


def normalize_name(name: str) -> str:
    """PEP 503 normalised distribution name (``Nvidia_CuDNN_cu12`` → ``nvidia-cudnn-cu12``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def collect_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The CUDA / allocator / NCCL related environment variables that are set."""
    found = {name: env[name] for name in ENV_VARS if name in env}
    for name, value in env.items():
        if name.startswith(ENV_PREFIXES):
            found[name] = value
    return dict(sorted(found.items()))


def collect_versions(*, paths: list[str] | None = None) -> VersionsInfo:
    """Read installed frameworks and NVIDIA wheels from package metadata.

    Args:
        paths: directories to search (like ``sys.path``); ``None`` searches ``sys.path``.
    """
    dists = _distributions(paths)
    frameworks: list[FrameworkInfo] = []
    unavailable: dict[str, str] = {}
    if "torch" in dists:
        frameworks.append(_torch(dists["torch"]))
    for name in _TF_DISTS:
        if name in dists:
            frameworks.append(_tensorflow(dists[name], name))
            break
    jax = _jax(dists)
    if jax is not None:
        frameworks.append(jax)
    frameworks.extend(_cupy(dists))
    packages = _cuda_packages(dists)
    return VersionsInfo(
        python_version="{}.{}.{}".format(*sys.version_info[:3]),
        frameworks=tuple(frameworks),
        cuda_packages=packages,
        unavailable=unavailable,
    )


_INTERESTING_PREFIXES = ("torch", "tensorflow", "tf-nightly", "jax", "cupy", "nvidia-")


@dataclass(frozen=True)
class InstalledDist:
    """An installed distribution, located by its ``.dist-info`` / ``.egg-info`` folder."""

    name: str
    """PEP 503 normalised name."""
    version: str | None
    root: Path
    """The folder the distribution is installed in (``site-packages``)."""

    def read(self, relative: str) -> str | None:
        """A file of the installed package as text, or ``None`` when it cannot be read."""
        try:
            return (self.root / relative).read_text(encoding="utf-8", errors="replace")
        except (OSError, ValueError):
            return None


def _distributions(paths: list[str] | None) -> dict[str, InstalledDist]:
    """The installed distributions gpudoctor cares about, keyed by normalised name.

    Name and version come from the folder name (``torch-2.4.1+cu121.dist-info``, as the wheel
    spec writes it), so no metadata file is parsed for the hundreds of distributions an ML
    environment holds. Only an ``.egg-info`` without a version in its name has its
    ``PKG-INFO`` read.
    """
    found: dict[str, InstalledDist] = {}
    for folder in paths if paths is not None else sys.path:
        try:
            entries = sorted(os.scandir(folder or "."), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if not entry.name.endswith((".dist-info", ".egg-info")):
                continue
            stem = entry.name.rsplit(".", 1)[0]
            raw_name, _, rest = stem.partition("-")
            name = normalize_name(raw_name)
            if not name.startswith(_INTERESTING_PREFIXES) or name[7:] in _NOT_CUDA:
                continue  # name[7:] drops "nvidia-": nvidia-ml-py is NVML, not CUDA
            version = rest.split("-", 1)[0] or _egg_info_version(Path(entry.path))
            # The first one on the path wins, as for imports.
            found.setdefault(name, InstalledDist(name, version, Path(folder or ".")))
    return found


def _egg_info_version(info: Path) -> str | None:
    from importlib.metadata import PathDistribution

    try:
        version = PathDistribution(info).version
    except Exception:  # a broken egg-info must not stop the collection
        return None
    return version if isinstance(version, str) else None


def module_constants(source: str) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` assignments of a Python file, without running it."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    values: dict[str, object] = {}
    for node in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and value is not None:
            try:
                values[target.id] = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                continue
    return values


def _torch(dist: InstalledDist) -> FrameworkInfo:
    text = dist.read("torch/version.py")
    version = dist.version
    if text is not None:
        consts = module_constants(text)
        file_version = consts.get("__version__")
        cuda = consts.get("cuda")
        hip = consts.get("hip")
        return FrameworkInfo(
            name="torch",
            version=file_version if isinstance(file_version, str) else version,
            cuda_version=cuda if isinstance(cuda, str) else None,
            is_cuda_build=isinstance(cuda, str),
            distribution=dist.name,
            source="torch/version.py" if not isinstance(hip, str) else "torch/version.py (ROCm)",
        )
    # Without the file, a local version label (+cu121) still tells the CUDA flavour.
    cuda_label = re.search(r"\+cu(\d+)(\d)$", version or "")
    return FrameworkInfo(
        name="torch",
        version=version,
        cuda_version=f"{cuda_label.group(1)}.{cuda_label.group(2)}" if cuda_label else None,
        is_cuda_build=True if cuda_label else None,
        distribution="torch",
        source="metadata",
    )


def tensorflow_build_info(source: str) -> dict[str, object]:
    """Parse TensorFlow's ``build_info.py`` (``build_info = collections.OrderedDict([...])``)."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    info: dict[str, object] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            continue
        if target.id == "build_info" and isinstance(node.value, ast.Call) and node.value.args:
            try:
                pairs = ast.literal_eval(node.value.args[0])
            except (ValueError, TypeError, SyntaxError, RecursionError):
                continue
            if isinstance(pairs, list | tuple):
                for pair in pairs:
                    if isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str):
                        info[pair[0]] = pair[1]
            elif isinstance(pairs, dict):
                info.update({str(k): v for k, v in pairs.items()})
        else:
            # Very old TensorFlow: cuda_version_number = '10.0' at module level.
            try:
                info[target.id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                continue
    return info


def _tensorflow(dist: InstalledDist, name: str) -> FrameworkInfo:
    text = dist.read("tensorflow/python/platform/build_info.py")
    info = tensorflow_build_info(text) if text is not None else {}
    cuda = info.get("cuda_version", info.get("cuda_version_number"))
    cudnn = info.get("cudnn_version", info.get("cudnn_version_number"))
    caps = info.get("cuda_compute_capabilities")
    is_cuda = info.get("is_cuda_build")
    return FrameworkInfo(
        name="tensorflow",
        version=dist.version,
        cuda_version=str(cuda) if isinstance(cuda, str | int | float) and cuda else None,
        cudnn_version=str(cudnn) if isinstance(cudnn, str | int | float) and cudnn else None,
        is_cuda_build=is_cuda if isinstance(is_cuda, bool) else (True if cuda else None),
        compute_capabilities=tuple(str(c) for c in caps)
        if isinstance(caps, list | tuple)
        else None,
        distribution=name,
        source="tensorflow/python/platform/build_info.py" if text is not None else "metadata",
    )


def _jax(dists: Mapping[str, InstalledDist]) -> FrameworkInfo | None:
    if "jax" not in dists and "jaxlib" not in dists:
        return None
    majors = sorted({int(m.group("major")) for name in dists if (m := _JAX_PLUGIN_RE.match(name))})
    plugins = sorted(name for name in dists if _JAX_PLUGIN_RE.match(name))
    jaxlib_version = dists["jaxlib"].version if "jaxlib" in dists else None
    legacy = _JAXLIB_CUDA_RE.search(jaxlib_version or "")
    if legacy is not None:
        majors.append(int(legacy.group("major")))
    version = dists["jax"].version if "jax" in dists else jaxlib_version
    return FrameworkInfo(
        name="jax",
        version=version,
        cuda_version=str(max(majors)) if majors else None,
        is_cuda_build=bool(majors),
        distribution=",".join(["jax", *plugins]) if "jax" in dists else "jaxlib",
        source="metadata",
    )


def _cupy(dists: Mapping[str, InstalledDist]) -> list[FrameworkInfo]:
    found: list[FrameworkInfo] = []
    for name in sorted(dists):
        match = _CUPY_RE.match(name)
        if match is None:
            continue
        digits = match.group("ver")
        # cupy-cuda12x: any CUDA 12; cupy-cuda117: exactly 11.7.
        cuda = digits if match.group("x") else f"{digits[:-1]}.{digits[-1]}"
        found.append(
            FrameworkInfo(
                name="cupy",
                version=dists[name].version,
                cuda_version=cuda,
                is_cuda_build=True,
                distribution=name,
                source="metadata",
            )
        )
    return found


def _cuda_packages(dists: Mapping[str, InstalledDist]) -> tuple[CudaPackage, ...]:
    packages: list[CudaPackage] = []
    for name in sorted(dists):
        version = dists[name].version
        if version is None:
            continue
        suffixed = _CUDA_SUFFIX_RE.match(name)
        if suffixed is not None:
            packages.append(
                CudaPackage(
                    name, version, suffixed.group("component"), int(suffixed.group("major"))
                )
            )
            continue
        plain = _NVIDIA_RE.match(name)
        if plain is not None and plain.group("component") not in _NOT_CUDA:
            component = plain.group("component")
            # CUDA 13 toolkit wheels dropped the suffix; their version major is the CUDA major.
            toolkit = component.startswith("cuda-") or component in _TOOLKIT_COMPONENTS
            major = _leading_int(version) if toolkit else None
            packages.append(CudaPackage(name, version, component, major))
        elif name == "cuda-toolkit":
            packages.append(CudaPackage(name, version, "cuda-toolkit", _leading_int(version)))
    return tuple(packages)


def _leading_int(version: str) -> int | None:
    match = re.match(r"\d+", version)
    return int(match.group()) if match else None
