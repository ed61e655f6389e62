"""Redaction of personal and secret details before a report is pasted in public.

:data:`KINDS` is the promise, in one place: every kind of detail that is replaced, with its
description, its pattern and the placeholder that takes its place. Kinds apply in table order
(secrets first, then identifiers, then addresses and host names), so a more specific kind
claims its text before a general one sees it.

What is kept on purpose, because it is what a diagnosis rests on and identifies no person:
versions (``525.60.13``, ``8.9.2.26`` after a library name), sizes, hexadecimal addresses in
CUDA errors, PCI bus ids (``00000000:3B:00.0``), Xid numbers, ranks, process ids, timestamps,
the package part of library paths, and the host names of well-known public sites
(``pytorch.org``, ``github.com``, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

Replacement = str | Callable[[re.Match[str]], str]


@dataclass(frozen=True)
class Kind:
    """One kind of detail that redaction replaces."""

    id: str
    description: str
    pattern: re.Pattern[str]
    replacement: Replacement
    placeholder: str
    """What the reader sees instead (for the documentation; ``replacement`` does the work)."""


_PUBLIC_DOMAINS = (
    "pytorch.org", "github.com", "githubusercontent.com", "github.io", "nvidia.com",
    "python.org", "pypi.org", "pythonhosted.org", "huggingface.co", "hf.co", "docker.io",
    "docker.com", "nvcr.io", "anaconda.org", "anaconda.com", "conda-forge.org",
    "tensorflow.org", "readthedocs.io", "wandb.ai", "slack.com", "microsoft.com", "google.com",
    "ubuntu.com", "kernel.org", "onnxruntime.ai",
)  # fmt: skip
_PYTHON_MODULES = ("torchvision.io", "tensorflow.io", "tf.io", "scipy.io", "skimage.io")
_VERSION_CONTEXT = re.compile(
    r"(?i)(?:version|cudnn|cublas|cufft|curand|cusparse|cusolver|nvrtc|nvjitlink|tensorrt|trt|nccl"
    r"|driver|cuda|runtime|==|>=|<=|~=|\bv)\s*[:=_-]?\s*$"
)
_NOT_PERSONAL_IP = re.compile(r"0\.0\.0\.0|127\.\d+\.\d+\.\d+|255\.255\.\d+\.\d+")


def _ipv4(match: re.Match[str]) -> str:
    """An IPv4 address, unless the four numbers are a library version (cuDNN 8.9.2.26) or an
    address that names no machine (0.0.0.0, loopback, netmasks)."""
    before = match.string[max(0, match.start() - 24) : match.start()]
    if _VERSION_CONTEXT.search(before) or _NOT_PERSONAL_IP.fullmatch(match.group()):
        return match.group()
    return "<ip>"


def _domain(match: re.Match[str]) -> str:
    """A fully qualified host name, unless it belongs to a well-known public site."""
    name = match.group().lower()
    public = any(name == d or name.endswith("." + d) for d in _PUBLIC_DOMAINS)
    return match.group() if public or name in _PYTHON_MODULES else "<host>"


def _unc(match: re.Match[str]) -> str:
    """A UNC path's server and share, and the user folder when the share holds homes."""
    share, rest = match.group(1), match.group(2) or ""
    if rest and share.lower() in ("home", "homes", "users", "profiles"):
        return f"\\\\<host>\\{share}\\<user>"
    return f"\\\\<host>\\<share>{rest}"


def _k(
    id: str, description: str, pattern: str, replacement: Replacement, placeholder: str = ""
) -> Kind:
    shown = placeholder or (replacement if isinstance(replacement, str) else "")
    return Kind(
        id, description, re.compile(pattern), replacement, re.sub(r"\\\d", "", shown).strip(" =:-")
    )


_HEX = "[0-9a-fA-F]"
_K8S = "[bcdfghjklmnpqrstvwxz2456789]"  # the alphabet Kubernetes uses for generated names
_SECRET_WORD = (
    r"(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|secret[_-]?key|private[_-]?key|private[_-]?key[_-]?id|client[_-]?secret|auth"
    r"|credentials?|connection[_-]?string|sas)"
)
_HOST = r"[A-Za-z][\w.-]*[A-Za-z0-9]"
# tokenizer special tokens (pad_token = "[PAD]") are words, not secrets
_NOT_SECRET = r"(?<!(?:pad|eos|bos|unk|sep|cls)_token)(?<!mask_token)"

KINDS: tuple[Kind, ...] = (
    # ── secrets ────────────────────────────────────────────────────────────────────────────
    _k("private-key", "PEM private key blocks (RSA, EC, OpenSSH, PKCS#8), whole or cut off",
       r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----|[\s\S]*)",
       "<private-key>"),
    _k("url-credentials", "user name and password inside a URL (https://user:pass@host)",
       r"(?<![\w+.-])([a-zA-Z][\w+.-]{0,31}://)[^\s/:@<>]{0,256}:[^\s/@<>]{1,256}@",
       r"\1<user>:<password>@"),
    _k("jwt", "JSON Web Tokens (three base64url parts, the first two starting eyJ)",
       r"\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}", "<token>"),
    _k("huggingface-token", "Hugging Face user and organisation tokens (hf_..., api_org_...)",
       r"\b(?:hf_|api_org_)(?=[a-z]*[A-Z0-9])[A-Za-z0-9]{16,}\b", "<token>"),
    _k("github-token", "GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
       r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})\b", "<token>"),
    _k("gitlab-token", "GitLab personal access tokens (glpat-...)",
       r"\bglpat-[\w-]{20,}", "<token>"),
    _k("openai-key", "OpenAI- and Anthropic-style API keys (sk-..., sk-proj-..., sk-ant-...)",
       r"\bsk-[A-Za-z0-9_-]{20,}", "<token>"),
    _k("slack-token", "Slack tokens (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxo-)",
       r"\bxox[abposr]-[A-Za-z0-9-]{10,}", "<token>"),
    _k("slack-webhook", "Slack incoming-webhook URLs",
       r"(hooks\.slack\.com/services/)[\w/]+", r"\1<token>"),
    _k("aws-access-key-id", "AWS access key ids (AKIA..., ASIA..., and the other prefixes)",
       r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[0-9A-Z]{16}\b", "<token>"),
    _k("gcp-api-key", "Google API keys (AIza...)", r"\bAIza[\w-]{35}", "<token>"),
    _k("gcp-oauth-token", "Google OAuth access tokens (ya29....)", r"\bya29\.[\w-]{20,}",
       "<token>"),
    _k("ngc-api-key", "NVIDIA NGC API keys (nvapi-...)", r"\bnvapi-[\w-]{20,}", "<token>"),
    _k("pypi-token", "PyPI upload tokens (pypi-AgEI...)", r"\bpypi-[\w-]{40,}", "<token>"),
    _k("bearer-token", "Authorization: Bearer and Basic credentials",
       r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{12,}", r"\1 <token>"),
    _k("json-secret", "secret fields in JSON or YAML with quoted keys (\"password\": \"...\"; "
       "GCP service-account private_key and private_key_id; Docker config \"auth\")",
       rf"(?i)([\"'][\w-]{{0,40}}{_SECRET_WORD}{_NOT_SECRET}[\"']\s*:\s*)([\"'])(?:\\.|(?!\2).)*\2",
       r"\1\2<redacted>\2", "<redacted>"),
    _k("cli-secret", "secrets given as command-line options (--token X, --password=X, -p X "
       "after docker login)",
       rf"(?i)((?:(?<![\w-])--[\w-]{{0,40}}{_SECRET_WORD}|\blogin\b.{{0,80}}?\s-p)(?:=|\s+))(?!<)[^\s'\"]+",
       r"\1<redacted>", "<redacted>"),
    _k("password-assignment", "password=, passwd:, PGPASSWORD=... assignments (any length)",
       r"(?i)(?<![\w-])([\w-]{0,60}?(?:password|passwd|pwd|passphrase))(\s*[=:]\s*)(['\"]?)(?!<)"
       r"[^\s'\",;&]+\3", r"\1\2\3<redacted>\3", "<redacted>"),
    _k("secret-assignment", "NAME=value where the name ends in token, secret, key, api_key, "
       "auth, credentials (HF_TOKEN=, WANDB_API_KEY=, AWS_SECRET_ACCESS_KEY=, ?token=); "
       "names such as max_tokens or pad_token_id are not secrets and stay",
       rf"(?i)(?<![\w-])([\w-]{{0,60}}?{_SECRET_WORD}{_NOT_SECRET})(\s*[=:]\s*)(['\"]?)(?!<)(?![\d.]+\b)[^\s'\",;&]{{6,}}\3",
       r"\1\2\3<redacted>\3", "<redacted>"),
    _k("azure-account-key", "Azure storage account keys in connection strings",
       r"(?i)\b(AccountKey|SharedAccessKey)=[^;\s]+", r"\1=<redacted>"),
    _k("azure-sas-signature", "Azure shared-access signatures in URLs (sig=...)",
       r"([?&]sig=)[^&\s]+", r"\1<redacted>"),
    _k("aws-secret-key", "AWS secret access keys standing alone (40 base64 characters mixing "
       "upper case, lower case and digits)",
       r"(?<![\w/+=.-])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])"
       r"(?=[A-Za-z0-9/+]{0,39}\d)[A-Za-z0-9][A-Za-z0-9/+]{38}[A-Za-z0-9](?![\w/+=])",
       "<token>"),
    _k("wandb-login", "W&B API keys given to wandb login, and .netrc passwords",
       r"(?i)\b(wandb login(?:\s+--\S+)*\s+|machine\s+\S+\s+login\s+\S+\s+password\s+)"
       r"(?!<)\S+", r"\1<token>", "<token>"),
    # ── machine and account identifiers ────────────────────────────────────────────────────
    _k("gpu-uuid", "GPU and MIG UUIDs (GPU-..., MIG-..., MIG-GPU-.../1/0)",
       rf"(?<![\w-])(GPU|MIG|MIG-GPU)-{_HEX}{{8}}(?:-{_HEX}{{4}}){{3}}-{_HEX}{{12}}",
       r"\1-<uuid>"),
    _k("gpu-serial", "GPU and board serial numbers (nvidia-smi -q, its XML and JSON forms)",
       r"(?i)((?:\bserial(?:[ _]?number)?[\"']?\s*[:=]\s*[\"']?)|<serial>\s*)(?=[A-Za-z-]{0,40}\d)"
       r"[0-9A-Za-z-]{6,}",
       r"\1<serial>"),
    _k("infiniband-guid", "InfiniBand node, port and system-image GUIDs (0x506b4b0300a1b2c3, "
       "506b:4b03:00a1:b2c3 after 'guid')",
       rf"(?i)(?:(guid\s*[:=]?\s*)(?:0x)?{_HEX}{{16}}|(guid\s*[:=]?\s*){_HEX}{{4}}"
       rf"(?::{_HEX}{{4}}){{3}}|\b0x{_HEX}{{6}}(?:0300|fffe){_HEX}{{6}})\b",
       lambda m: (m.group(1) or m.group(2) or "") + "<guid>", "<guid>"),
    _k("mac-address", "MAC addresses and InfiniBand hardware addresses (20 bytes)",
       r"(?i)(?<![\w:.-])[0-9a-f]{2}(?:[:-][0-9a-f]{2}){5}(?:(?::[0-9a-f]{2}){14})?(?![\w:-])",
       "<mac>"),
    _k("container-id", "Docker, containerd and CRI-O container ids (12 or 64 hex digits)",
       r"(?i)\b(docker[/:-]|docker://|containerd://|cri-o://|crio-|cri-containerd-|libpod-"
       r"|container[ =:]+)([0-9a-f]{64}|[0-9a-f]{12})\b", r"\1<container>"),
    _k("kubernetes-pod", "Kubernetes pod names: generated ReplicaSet names "
       "(trainer-7f9c8d6b5-x2k4q), job pods (job-worker-3, job-master-0, mpi-launcher-0), "
       "pod/NAME and POD_NAME=",
       rf"(?i)\b(?:(pods?/|pods?\s+\"|POD_NAME=)[a-z0-9][a-z0-9.-]*"
       rf"|(?<![\w.-])[a-z][a-z0-9-]{{0,50}}-{_K8S}{{8,10}}-{_K8S}{{5}}"
       rf"|(?<![\w.-])(?!dataloader)[a-z][a-z0-9-]{{0,50}}-(?:master|worker|launcher|chief|evaluator|ps)-\d+)\b",
       lambda m: (m.group(1) or "") + "<pod>", "<pod>"),
    _k("slurm-nodes", "Slurm node lists and node names (SLURM_NODELIST, SLURM_JOB_NODELIST, "
       "SLURMD_NODENAME, SLURM_SUBMIT_HOST, SLURM_TOPOLOGY_ADDR)",
       r"\b(SLURM[D]?_(?:\w*NODELIST|NODENAME|SUBMIT_HOST|TOPOLOGY_ADDR|LAUNCH_NODE_IPADDR)"
       r"[\"']?\s*[=:]\s*[\"']?)(?!<)[^\s\"',]+(?:,[^\s\"',]+)*", r"\1<host>"),
    _k("slurm-user", "Slurm user and account names (SLURM_JOB_USER, SLURM_JOB_ACCOUNT, "
       "SLURM_JOB_UID, SLURM_SUBMIT_DIR, SLURM_JOB_NAME, SLURM_CLUSTER_NAME)",
       r"\b(SLURM_(?:JOB_USER|JOB_ACCOUNT|JOB_UID|JOB_GID|SUBMIT_DIR|JOB_NAME|CLUSTER_NAME"
       r"|WORKING_DIR|JOB_QOS|JOB_RESERVATION)[\"']?\s*[=:]\s*[\"']?)(?!<)[^\s\"',]+",
       r"\1<user>"),
    _k("slurm-job-id", "Slurm job and step ids (SLURM_JOB_ID=, SLURM_JOBID=, "
       "SLURM_ARRAY_JOB_ID=, StepId=, JobId=, '*** JOB 123 ON node CANCELLED')",
       r"\b((?:SLURM_(?:JOB_?ID|ARRAY_JOB_ID|STEP_ID)[\"']?\s*[=:]\s*[\"']?)|StepId=|JobId="
       r"|\bJOB |\bSTEP )\d+(?:\.\w+)?", r"\1<id>"),
    _k("slurm-host", "node names in Slurm's own messages (srun: error: NODE: task 3, "
       "JOB 1 ON NODE CANCELLED, slurmstepd on NODE)",
       rf"(srun: error: |\*\*\* (?:JOB|STEP) \S+ ON )(?!<){_HOST}(?=[: ])",
       r"\1<host>"),
    _k("env-user", "user names in USER=, LOGNAME=, USERNAME=, SUDO_USER= and id's uid=1000(name)",
       r"\b((?:USER|LOGNAME|USERNAME|SUDO_USER)=|[ug]id=\d+\()(?!<)[\w.-]+", r"\1<user>"),
    # ── paths ──────────────────────────────────────────────────────────────────────────────
    _k("home-path", "user names in Linux and macOS home paths (/home/NAME, /Users/NAME, also "
       "/mnt/c/Users/NAME in WSL, /u/, /mnt/home/, /data/home/, /nfs/home/, /export/home/)",
       r"((?:/home|/Users|/u|/usr/home|/mnt/home|/data/home|/nfs/home|/net/home|/export/home"
       r"|/gpfs/home|/global/homes/[a-z]|/pscratch/sd/[a-z]|/scratch\d*)/)(?!<)[^/\s:'\"<>]+",
       r"\1<user>"),
    _k("windows-user-path", "user names in Windows profile paths (C:\\Users\\NAME, "
       "C:/Users/NAME, JSON-escaped C:\\\\Users\\\\NAME)",
       r"(?i)\b([A-Z]:(?:\\+|/)(?:Users|Documents and Settings)(?:\\+|/))(?!<)[^\\/\s:'\"<>]+",
       r"\1<user>"),
    _k("unc-path", "server and share of Windows network paths (\\\\server\\share\\...)",
       r"(?<![\w\\])\\\\(?!<)[\w.$-]+\\(?!<)([\w.$-]+)(\\(?!<)[\w.$-]+)?", _unc,
       "\\\\<host>\\<share>"),
    _k("tilde-user", "other users' home directories written ~NAME/",
       r"(?<![\w~])~(?!<)[a-z_][\w.-]*(?=/)", "~<user>"),
    _k("git-remote", "SSH git remotes (git@host:org/repo.git, ssh://git@host/org/repo)",
       r"\b(git@)(?!<)[\w.-]+(?::|/)(?!<)[\w.~-]+/[\w.-]+", r"\1<host>:<repo>"),
    _k("wandb-url", "W&B entity and project in run URLs (wandb.ai/ENTITY/PROJECT)",
       r"\b(wandb\.ai/)(?!<)[\w.-]+/[\w.-]+", r"\1<user>/<project>"),
    _k("cloud-bucket", "bucket names in s3://, gs://, az:// and abfss:// URLs",
       r"\b((?:s3a?|gs|az|abfss?|wasbs?)://)(?!<)[\w.@-]+", r"\1<bucket>"),
    _k("aws-arn", "AWS account ids in ARNs (arn:aws:iam::123456789012:...)",
       r"\b(arn:aws[\w-]*:[\w-]*:[\w-]*:)\d{12}(:)", r"\1<account>\2"),
    _k("aws-instance-id", "EC2 instance ids (i-0abc...)", r"\bi-[0-9a-f]{8}(?:[0-9a-f]{9})?\b",
       "<instance>"),
    _k("azure-subscription", "Azure subscription ids in resource paths",
       rf"(?i)(/subscriptions/){_HEX}{{8}}(?:-{_HEX}{{4}}){{3}}-{_HEX}{{12}}", r"\1<id>"),
    # ── people and hosts ──────────────────────────────────────────────────────────────────
    _k("email", "e-mail addresses (also Kerberos principals and service-account e-mails)",
       r"(?<![\w.+-])[\w.+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b", "<email>"),
    _k("user-at-host", "user@host (shell prompts, ssh targets, scp sources)",
       r"(?<![\w.+-])(?!<)[A-Za-z0-9._-]{1,64}@(?!<)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\b",
       "<user>@<host>"),
    _k("ipv4", "IPv4 addresses (four numbers after a library name or 'version' are a version "
       "and stay)",
       r"(?<![\w.])(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}"
       r"(?!\.?\d|\w)", _ipv4, "<ip>"),
    _k("ipv6", "IPv6 addresses (full, compressed, link-local fe80::..., with %interface)",
       r"(?i)(?<![\w:.])(?:(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}"
       r"|(?:[0-9a-f]{1,4}:){1,6}(?::[0-9a-f]{1,4}){1,6}|(?:[0-9a-f]{1,4}:){1,7}:"
       r"|::(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})(?:%[\w.-]+)?(?![\w:])", "<ip>"),
    _k("aws-private-dns", "AWS private DNS host names (ip-10-0-1-23, ip-10-0-1-23.ec2.internal)",
       r"\bip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}(?:\.[\w-]+)*\b", "<host>"),
    _k("windows-computer-name", "generated Windows computer names (DESKTOP-ABC1234)",
       r"\b(?:DESKTOP|LAPTOP|WIN)-[A-Z0-9]{7}\b", "<host>"),
    _k("host-field", "host names in host:, hostname=, Node: fields (torchrun's failure table)",
       r"(?i)\b((?:host(?:name)?|node(?:name)?)\s*[:=]\s*)(?!<)[A-Za-z][\w.-]*", r"\1<host>"),
    _k("env-host", "host names in MASTER_ADDR=, --master_addr, --rdzv_endpoint, HOSTNAME= "
       "and the like (the port stays)",
       r"(?i)(\b(?:MASTER_ADDR|MASTER_HOST|NCCL_COMM_ID|PMIX_HOSTNAME|HOSTNAME|HOST|NODE_NAME"
       r"|RDZV_ENDPOINT)=|--(?:master[_-]addr|rdzv[_-]endpoint|hostname)(?:=|\s+))"
       r"(?!<)[A-Za-z][\w.-]*", r"\1<host>"),
    _k("nccl-host", "host names in NCCL's line prefix HOST:PID:TID [dev] NCCL, wherever the "
       "line starts ([rank3]:, a file:line prefix, a timestamp)",
       r"(?<![\w.-])(?!<)[A-Za-z][\w.-]*(:\d+:\d+ \[\d+\] NCCL)", r"<host>\1"),
    _k("bracket-host", "host names in [HOST]:PORT and [HOST:RANK] (c10d sockets, launchers)",
       r"(?<![\w)\]])\[(?!<)"
       r"(?!(?i:rank|gpu|cpu|cuda|device|node|step|epoch|line|lineno|pid|tid|iter)\d*[:\]])"
       r"(?![\w.-]*\.(?:cpp|cc|cu|cuh|c|h|hpp|py)\b)[A-Za-z][\w.-]*"
       r"(?:\]:(\d+)|:(\d+)\])",
       lambda m: f"[<host>]:{m.group(1)}" if m.group(1) else f"[<host>:{m.group(2)}]",
       "<host>"),
    _k("syslog-host", "the host name in syslog and journal lines (Jan 12 10:00:01 HOST kernel:)",
       r"(?m)^(\w{3} [ \d]\d \d\d:\d\d:\d\d |\d{4}-\d\d-\d\dT[\d:.]+(?:[+-]\d\d:?\d\d|Z)? )"
       r"(?!<)[\w.-]+(?= (?:kernel|[\w.-]+(?:\[\d+\])?):)", r"\1<host>"),
    _k("pdsh-host", "the HOST: prefix pdsh and DeepSpeed's launcher put before each line",
       r"(?m)^(?!<)(?=[\w.-]{0,63}\d)[A-Za-z][\w.-]{0,62}: (?=\[)", "<host>: "),
    _k("fqdn", "fully qualified host names in private and common domains (.internal, .local, "
       ".lan, .corp, .cluster, .com, .net, .org, .edu, .io, .ai, .cloud); well-known public "
       "sites (pytorch.org, github.com, huggingface.co, nvidia.com, ...) stay",
       r"(?i)(?<![\w.-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:internal|local|lan|corp"
       r"|cluster|com|net|org|edu|io|ai|cloud)\b(?!\.?\w)", _domain, "<host>"),
)  # fmt: skip
"""Every kind of detail redaction replaces, in the order they apply."""


def redact(text: str, known_hosts: Iterable[str] = ()) -> str:
    """Return ``text`` with personal and secret details replaced by placeholders.

    Args:
        text: text from a report (evidence lines, summaries, input names).
        known_hosts: host names gpudoctor learnt from the facts; replaced wherever they occur.
    """
    for host in sorted({h for h in known_hosts if h and len(h) >= 3}, key=len, reverse=True):
        text = re.sub(rf"(?<![\w-]){re.escape(host)}(?![\w-])", "<host>", text)
    for kind in KINDS:
        text = kind.pattern.sub(kind.replacement, text)
    return text
