"""Redaction, one row per kind: the secret goes, the diagnostic parts stay.

Every value here is invented. When a leak is found, add a row: the table grows with each one.
The rows are kept one per line, whatever their length, so that the table reads as a table.
"""

# ruff: noqa: E501

from __future__ import annotations

import time
from typing import NamedTuple

import pytest

from gpudoctor.render.redact import KINDS, redact


class Row(NamedTuple):
    kind: str
    text: str
    gone: tuple[str, ...]
    """Substrings that must not survive."""
    kept: tuple[str, ...]
    """Substrings (diagnostic parts, placeholders) that must be in the output."""


ROWS = [
    # ── secrets ──
    Row("private-key", "key: -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7Zx\n-----END RSA PRIVATE KEY----- loaded",
        ("MIIEowIBAAKCAQEAq7Zx", "BEGIN RSA"), ("key: <private-key> loaded",)),
    Row("private-key", "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAA",
        ("b3BlbnNzaC1rZXktdjEAAAA",), ("<private-key>",)),
    Row("url-credentials", "fetching https://alice:Tr0ub4dor@pkgs.example.net/simple/torch/",
        ("alice", "Tr0ub4dor"), ("https://<user>:<password>@", "/simple/torch/")),
    Row("url-credentials", "redis://:s3cretpw@10.4.0.9:6379/0 refused",
        ("s3cretpw", "10.4.0.9"), (":6379/0 refused",)),
    Row("jwt", "Authorization token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.Zm9vYmFyYmF6cXV4 rejected",
        ("eyJhbGciOiJIUzI1NiJ9", "Zm9vYmFyYmF6cXV4"), ("<token> rejected",)),
    Row("huggingface-token", "401 Client Error for hf_QwErTy12345AsDfGh67890ZxCvBn1234 on model.safetensors",
        ("hf_QwErTy12345AsDfGh67890ZxCvBn1234",), ("<token>", "401 Client Error", "model.safetensors")),
    Row("huggingface-token", "login with hf_Ab3dEf6hIj9kLm2nOp5qRs8tUv1w (short)",
        ("hf_Ab3dEf6hIj9kLm2nOp5qRs8tUv1w",), ("<token> (short)",)),
    Row("huggingface-token", "org token api_org_Zx81bQpLm07YtRe4WnUu3Kk",
        ("api_org_Zx81bQpLm07YtRe4WnUu3Kk",), ("<token>",)),
    Row("github-token", "git clone https://ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8@github.com/acme/x",
        ("ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",), ("<token>", "github.com")),
    Row("github-token", "GH=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        ("github_pat_11ABCDEFG0123456789",), ("<token>",)),
    Row("gitlab-token", "remote: glpat-x9Y8w7V6u5T4s3R2q1P0 invalid",
        ("glpat-x9Y8w7V6u5T4s3R2q1P0",), ("remote: <token> invalid",)),
    Row("openai-key", "openai.AuthenticationError: Incorrect API key provided: sk-proj-Ab12Cd34Ef56Gh78Ij90KlMn",
        ("sk-proj-Ab12Cd34Ef56Gh78Ij90KlMn",), ("AuthenticationError", "<token>")),
    Row("slack-token", "notify failed with xoxb-123456789012-9876543210-AbCdEfGhIjKl",
        ("xoxb-123456789012",), ("notify failed with <token>",)),
    Row("slack-webhook", "POST https://hooks.slack.com/services/T0AB12CD3/B0EF45GH6/q1w2e3r4t5y6 timed out",
        ("T0AB12CD3", "q1w2e3r4t5y6"), ("hooks.slack.com/services/<token>", "timed out")),
    Row("aws-access-key-id", "botocore: using access key AKIAZ7Q3EXAMPLE4KEYX for s3",
        ("AKIAZ7Q3EXAMPLE4KEYX",), ("<token> for s3",)),
    Row("gcp-api-key", "key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q rejected",
        ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",), ("rejected",)),
    Row("gcp-oauth-token", "token ya29.a0AfB_byC1D2e3F4g5H6i7J8k9 expired",
        ("ya29.a0AfB_byC1D2e3F4g5H6i7J8k9",), ("<token> expired",)),
    Row("ngc-api-key", "docker login nvcr.io with nvapi-Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8",
        ("nvapi-Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8",), ("nvcr.io", "<token>")),
    Row("pypi-token", "twine: pypi-AgEIcHlwaS5vcmcCJGQ1ZjE0YjU2LWE3ZjgtNDk1ZC1iNjQ2 refused",
        ("pypi-AgEIcHlwaS5vcmcCJGQ1ZjE0YjU2",), ("<token> refused",)),
    Row("bearer-token", "Authorization: Bearer 7fk2LmQp9xZ0vW3yR8tB then 403",
        ("7fk2LmQp9xZ0vW3yR8tB",), ("Bearer <token> then 403",)),
    Row("bearer-token", "Authorization: Basic YWxpY2U6aHVudGVyMg==",
        ("YWxpY2U6aHVudGVyMg",), ("Basic <token>",)),
    Row("json-secret", '{"user": "x", "password": "correct horse", "port": 5432}',
        ("correct horse",), ('"password": "<redacted>"', '"port": 5432')),
    Row("json-secret", '"private_key_id": "3f9a1c0b7e", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQ\\n-----END PRIVATE KEY-----\\n"',
        ("3f9a1c0b7e", "MIIEvQ"), ('"private_key_id": "<redacted>"',)),
    Row("json-secret", '{"auths": {"registry.acme.example": {"auth": "YWxpY2U6cGFzc3dvcmQ="}}}',
        ("YWxpY2U6cGFzc3dvcmQ=",), ('"auth": "<redacted>"',)),
    Row("json-secret", "{'SecretAccessKey': 'kq9/Zx81bQpLm07YtRe+WnUu', 'Expiration': '2031'}",
        ("kq9/Zx81bQpLm07YtRe+WnUu",), ("'SecretAccessKey': '<redacted>'", "'Expiration': '2031'")),
    Row("cli-secret", "cmd: huggingface-cli login --token qwerty123456 --add-to-git-credential",
        ("qwerty123456",), ("--token <redacted> --add-to-git-credential",)),
    Row("cli-secret", "docker login -u bob -p Pa55word123 nvcr.io",
        ("Pa55word123",), ("-p <redacted> nvcr.io",)),
    Row("password-assignment", "psql: PGPASSWORD=pw42 connection failed",
        ("pw42",), ("PGPASSWORD=<redacted> connection failed",)),
    Row("password-assignment", "db_password: 'hunter2'",
        ("hunter2",), ("db_password: '<redacted>'",)),
    Row("secret-assignment", "export WANDB_API_KEY=0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
        ("0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",), ("WANDB_API_KEY=<redacted>",)),
    Row("secret-assignment", "AWS_SECRET_ACCESS_KEY=kq9/Zx81bQpLm07YtRe+WnUu3KkHh2Jj5Ff8Dd0Ss",
        ("kq9/Zx81bQpLm07YtRe",), ("AWS_SECRET_ACCESS_KEY=<redacted>",)),
    Row("secret-assignment", "GET /tree?token=9c1f0e2d3b4a5968&path=/ 403",
        ("9c1f0e2d3b4a5968",), ("token=<redacted>&path=/ 403",)),
    Row("secret-assignment", "HF_TOKEN: abcdefgh12345",
        ("abcdefgh12345",), ("HF_TOKEN: <redacted>",)),
    Row("azure-account-key", "DefaultEndpointsProtocol=https;AccountName=acmeml;AccountKey=Zm9vYmFyYmF6==;EndpointSuffix=core",
        ("Zm9vYmFyYmF6",), ("AccountKey=<redacted>;EndpointSuffix",)),
    Row("azure-sas-signature", "GET https://acmeml.blob.core.windows.net/ckpt/model.pt?sv=2022-11-02&sr=b&sig=Q1w2E3r4T5%2By6 403",
        ("Q1w2E3r4T5",), ("sig=<redacted> 403", "/ckpt/model.pt")),
    Row("aws-secret-key", "credentials AKIAZ7Q3EXAMPLE4KEYX kq9/Zx81bQpLm07YtRe+WnUu3KkHh2Jj5Ff8Dd0S",
        ("kq9/Zx81bQpLm07YtRe+WnUu3KkHh2Jj5Ff8Dd0S",), ("credentials <token> <token>",)),
    Row("wandb-login", "$ wandb login 0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
        ("0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",), ("wandb login <token>",)),
    Row("wandb-login", "machine api.wandb.ai login user password 0a1b2c3d4e5f6071829",
        ("0a1b2c3d4e5f6071829",), ("password <token>",)),
    # ── machine and account identifiers ──
    Row("gpu-uuid", "UUID: GPU-5ad4f1f3-2b1c-8d3e-9f00-123456789abc)",
        ("5ad4f1f3",), ("GPU-<uuid>)",)),
    Row("gpu-uuid", "CUDA_VISIBLE_DEVICES=MIG-GPU-5ad4f1f3-2b1c-8d3e-9f00-123456789abc/1/0",
        ("5ad4f1f3",), ("MIG-GPU-<uuid>/1/0",)),
    Row("gpu-serial", "    Serial Number                         : 1320219012345",
        ("1320219012345",), ("Serial Number", "<serial>")),
    Row("gpu-serial", '<serial>1320219012345</serial> and "serial": "1651022003456"',
        ("1320219012345", "1651022003456"), ("<serial>",)),
    Row("infiniband-guid", "Port GUID: 0x506b4b0300a1b2c3  Node GUID: 0x506b4b0300a1b2c2",
        ("506b4b0300a1b2c3", "506b4b0300a1b2c2"), ("Port GUID: <guid>", "Node GUID: <guid>")),
    Row("infiniband-guid", "mlx5_0 port 1 gid 0x0cc47a0300b4d5e6 state ACTIVE",
        ("0cc47a0300b4d5e6",), ("mlx5_0 port 1", "<guid>", "ACTIVE")),
    Row("infiniband-guid", "node_guid: 506b:4b03:00a1:b2c3",
        ("506b:4b03:00a1:b2c3",), ("node_guid: <guid>",)),
    Row("mac-address", "eth0: link/ether 0c:42:a1:3e:5f:7b brd ff:ff:ff:ff:ff:ff",
        ("0c:42:a1:3e:5f:7b",), ("eth0: link/ether <mac>",)),
    Row("mac-address", "ib0: link/infiniband 80:00:00:48:fe:80:00:00:00:00:00:00:50:6b:4b:03:00:a1:b2:c3 mtu",
        ("50:6b:4b:03", "a1:b2:c3"), ("ib0: link/infiniband <mac> mtu",)),
    Row("container-id", "12:memory:/docker/3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708",
        ("3f2a1b4c5d6e7f8091a2",), ("12:memory:/docker/<container>",)),
    Row("container-id", "Error response from daemon: container 3f2a1b4c5d6e is not running",
        ("3f2a1b4c5d6e",), ("container <container> is not running",)),
    Row("kubernetes-pod", "Back-off restarting failed container in pod trainer-7f9c8d6b5-x2k4q",
        ("7f9c8d6b5", "x2k4q"), ("Back-off restarting", "<pod>")),
    Row("kubernetes-pod", "job-worker-3 exited with code 137 (OOMKilled)",
        ("job-worker-3",), ("<pod> exited with code 137 (OOMKilled)",)),
    Row("kubernetes-pod", 'Error from server (NotFound): pods "acme-finetune-a" not found; pod/llm-sft-b deleted',
        ("acme-finetune-a", "llm-sft-b"), ('pods "<pod>', "pod/<pod> deleted")),
    Row("slurm-nodes", "SLURM_JOB_NODELIST=gpu-[01-04,07] SLURM_NTASKS=16",
        ("gpu-[01-04,07]",), ("SLURM_JOB_NODELIST=<host>", "SLURM_NTASKS=16")),
    Row("slurm-nodes", "SLURMD_NODENAME=dgx-b12 SLURM_SUBMIT_HOST=login03",
        ("dgx-b12", "login03"), ("SLURMD_NODENAME=<host>", "SLURM_SUBMIT_HOST=<host>")),
    Row("slurm-user", "SLURM_JOB_USER=jdoe42 SLURM_JOB_ACCOUNT=proj-vision SLURM_GPUS_ON_NODE=8",
        ("jdoe42", "proj-vision"), ("SLURM_JOB_USER=<user>", "SLURM_GPUS_ON_NODE=8")),
    Row("slurm-job-id", "SLURM_JOB_ID=4817263 SLURM_LOCALID=3",
        ("4817263",), ("SLURM_JOB_ID=<id>", "SLURM_LOCALID=3")),
    Row("slurm-job-id", "slurmstepd: error: Detected 1 oom_kill event in StepId=4817263.0. Some of the step tasks have been OOM Killed.",
        ("4817263",), ("StepId=<id>", "Detected 1 oom_kill event")),
    Row("slurm-host", "srun: error: node-12: task 3: Exited with exit code 1",
        ("node-12",), ("srun: error: <host>: task 3: Exited with exit code 1",)),
    Row("slurm-host", "slurmstepd: error: *** JOB 4817263 ON gpu-a07 CANCELLED AT 2031-02-03T04:05:06 ***",
        ("4817263", "gpu-a07"), ("*** JOB <id> ON <host> CANCELLED AT 2031-02-03T04:05:06",)),
    Row("env-user", "USER=jdoe LOGNAME=jdoe uid=1042(jdoe) gid=1042(jdoe)",
        ("jdoe",), ("USER=<user>", "uid=1042(<user>)", "gid=1042(<user>)")),
    # ── paths ──
    Row("home-path", 'File "/home/alice/proj/train.py", line 3, in <module>',
        ("alice",), ('/home/<user>/proj/train.py", line 3',)),
    Row("home-path", "/home/bob/.local/lib/python3.10/site-packages/torch/nn/modules/module.py:1501",
        ("bob",), ("/home/<user>/.local/lib/python3.10/site-packages/torch/nn/modules/module.py:1501",)),
    Row("home-path", "/Users/carol/miniforge3/envs/ml/lib/python3.11/site-packages/mps.py",
        ("carol",), ("/Users/<user>/miniforge3/envs/ml/lib/python3.11/site-packages/mps.py",)),
    Row("home-path", "/mnt/c/Users/Dave/wsl-runs/train.py", ("Dave",), ("/mnt/c/Users/<user>/wsl-runs/train.py",)),
    Row("home-path", "cd /scratch/ejones42/run7 && /global/homes/f/frank/bin/x",
        ("ejones42", "frank"), ("/scratch/<user>/run7", "/global/homes/f/<user>/bin/x")),
    Row("windows-user-path", "C:\\Users\\Bob\\train.py and C:/Users/Bob/x and C:\\\\Users\\\\Bob\\\\y",
        ("Bob",), ("C:\\Users\\<user>\\train.py", "C:/Users/<user>/x", "C:\\\\Users\\\\<user>\\\\y")),
    Row("unc-path", "open \\\\fs-eng01\\homes\\gwen\\data\\shard-0.bin failed",
        ("fs-eng01", "gwen"), ("\\\\<host>\\homes\\<user>\\data\\shard-0.bin failed",)),
    Row("unc-path", "\\\\nas7\\teamvision\\ckpt.pt", ("nas7", "teamvision"), ("\\\\<host>\\<share>\\ckpt.pt",)),
    Row("tilde-user", "loading ~hank/datasets/imagenet and ~/cache",
        ("hank",), ("~<user>/datasets/imagenet", "~/cache")),
    Row("git-remote", "fatal: could not read from git@git.acme.example:ml-team/secret-model.git",
        ("git.acme.example", "ml-team", "secret-model"), ("fatal: could not read from git@<host>:<repo>",)),
    Row("wandb-url", "View run at https://wandb.ai/ivy-lab/llm-pretrain/runs/3kq9z1",
        ("ivy-lab", "llm-pretrain"), ("https://wandb.ai/<user>/<project>/runs/3kq9z1",)),
    Row("cloud-bucket", "NoSuchKey: s3://acme-ml-ckpts/run7/step_1000.pt and gs://acme-eu-data/x",
        ("acme-ml-ckpts", "acme-eu-data"), ("s3://<bucket>/run7/step_1000.pt", "gs://<bucket>/x")),
    Row("aws-arn", "User: arn:aws:sts::123456789012:assumed-role/Trainer is not authorized",
        ("123456789012",), ("arn:aws:sts::<account>:assumed-role/Trainer",)),
    Row("aws-instance-id", "instance i-0a1b2c3d4e5f67890 is being terminated (spot)",
        ("i-0a1b2c3d4e5f67890",), ("instance <instance> is being terminated (spot)",)),
    Row("azure-subscription", "/subscriptions/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b/resourceGroups/rg",
        ("0f1e2d3c",), ("/subscriptions/<id>/resourceGroups/rg",)),
    # ── people and hosts ──
    Row("email", "Author: Jane Roe <jane.roe@acme-labs.example.com>", ("jane.roe", "acme-labs"), ("<email>",)),
    Row("email", "sa: trainer@acme-proj.iam.gserviceaccount.com", ("acme-proj",), ("<email>",)),
    Row("user-at-host", "ssh alice@login01: Permission denied (publickey)",
        ("alice", "login01"), ("ssh <user>@<host>: Permission denied",)),
    Row("user-at-host", "root@3f2a1b4c5d6e:/workspace# python train.py",
        ("3f2a1b4c5d6e",), ("<user>@<host>:/workspace# python train.py",)),
    Row("ipv4", "MASTER_ADDR=10.1.2.3 port 29500", ("10.1.2.3",), ("MASTER_ADDR=<ip> port 29500",)),
    Row("ipv4", "NCCL INFO Bootstrap : Using eth0:10.12.4.7<0>", ("10.12.4.7",), ("Using eth0:<ip><0>",)),
    Row("ipv4", "Connection reset by peer (tcp://192.168.30.4:29400)", ("192.168.30.4",), ("tcp://<ip>:29400",)),
    Row("ipv6", "connect to fe80::1ff:fe23:4567:890a%ib0 failed", ("fe80::1ff", "%ib0"), ("connect to <ip> failed",)),
    Row("ipv6", "GID fe80:0000:0000:0000:506b:4b03:00a1:b2c3 on mlx5_1", ("506b:4b03",), ("<ip> on mlx5_1",)),
    Row("aws-private-dns", "rendezvous on ip-10-0-17-23.ec2.internal:29400",
        ("10-0-17-23",), ("rendezvous on <host>:29400",)),
    Row("windows-computer-name", "Running on DESKTOP-7QK2M4X with 1 GPU", ("7QK2M4X",), ("Running on <host> with 1 GPU",)),
    Row("host-field", "  host      : node-a17\n  rank      : 3 (local_rank: 3)",
        ("node-a17",), ("host      : <host>", "rank      : 3 (local_rank: 3)")),
    Row("env-host", "torchrun --nnodes 2 --rdzv_endpoint trainer-head:29400 --master_addr=head-0",
        ("trainer-head", "head-0"), ("--rdzv_endpoint <host>:29400", "--master_addr=<host>")),
    Row("env-host", "MASTER_ADDR=gpuhost5 NCCL_DEBUG=INFO", ("gpuhost5",), ("MASTER_ADDR=<host> NCCL_DEBUG=INFO",)),
    Row("nccl-host", "node-a17:2203:2210 [3] NCCL INFO ok", ("node-a17",), ("<host>:2203:2210 [3] NCCL INFO ok",)),
    Row("nccl-host", "[rank3]:myhost-07:1234:1290 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB",
        ("myhost-07",), ("[rank3]:<host>:1234:1290 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB",)),
    Row("nccl-host", "rank3.log:88:myhost-07:1234:1290 [0] NCCL WARN Call to ibv_modify_qp failed",
        ("myhost-07",), ("rank3.log:88:<host>:1234:1290 [0] NCCL WARN",)),
    Row("bracket-host", "[W socket.cpp:663] [c10d] The client socket has failed to connect to [trainer-head]:29500 (errno: 110)",
        ("trainer-head",), ("[W socket.cpp:663] [c10d]", "[<host>]:29500 (errno: 110)")),
    Row("bracket-host", "[gpu-node-3:5] RuntimeError in worker", ("gpu-node-3",), ("[<host>:5] RuntimeError",)),
    Row("syslog-host", "Feb  3 04:05:06 dgx-b12 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
        ("dgx-b12",), ("Feb  3 04:05:06 <host> kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234",)),
    Row("syslog-host", "2031-02-03T04:05:06+0000 dgx-b12 kernel: Out of memory: Killed process 4242 (python)",
        ("dgx-b12",), ("<host> kernel: Out of memory: Killed process 4242 (python)",)),
    Row("pdsh-host", "worker-1: [2031-02-03 04:05:06,789] [INFO] [launch.py:315:main] exit 1",
        ("worker-1",), ("<host>: [2031-02-03 04:05:06,789] [INFO] [launch.py:315:main] exit 1",)),
    Row("fqdn", "node gpu-node-17.cluster.example.com down", ("gpu-node-17",), ("node <host> down",)),
    Row("fqdn", "POST http://mlflow.corp.internal:5000/api failed", ("mlflow.corp",), ("http://<host>:5000/api failed",)),
]  # fmt: skip

UNCHANGED = [
    "NVIDIA-SMI 525.60.13    Driver Version: 525.60.13    CUDA Version: 12.4",
    "cuDNN version 8.9.2.26, TensorRT 8.6.1.6, nccl 2.18.1.1",
    "torch==2.1.0+cu121, libcudnn.so.8.9.7.29",
    "Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity; 76.31 GiB already allocated)",
    "CUDA error: an illegal memory access was encountered at 0x7f3a2c001000 (0x00007f3a2c001000)",
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python",
    "GPU 00000000:3B:00.0: Detected Critical Xid Error 48",
    "[rank3]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1093, OpType=ALLREDUCE, NumelIn=1, Timeout(ms)=600000)",
    "[2031-02-03 04:05:06,789] torch.distributed.elastic: [ERROR] failed (exitcode: -9) local_rank: 3 (pid: 4242)",
    "12:34:56.789 step 1000 loss 2.3041 max_tokens=4096 pad_token_id=0 eos_token=</s>",
    "see https://pytorch.org/docs/stable/notes/cuda.html#memory-management and https://github.com/NVIDIA/nccl/issues/1",
    "from torchvision.io import read_image; HF_HUB_ENABLE_HF_TRANSFER=1 hf_transfer",
    "[W socket.cpp:663] [c10d] [GPU:0] [rank:3] [default0]:[rank0]: ok",
    "  File \"/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py\", line 308",
    "DataLoader worker (pid 4242) is killed by signal: Bus error. dataloader-worker-3",
    "c10::Error at::native::add_ aten::add std::runtime_error",
    "../aten/src/ATen/native/cuda/Loss.cu:242: nll_loss_forward: block: [0,0,0], thread: [5,0,0]",
    "git commit 3e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f, sha256:0f1e2d3c4b5a69788a9b0c1d2e3f4a5b0f1e2d3c4b5a69788a9b0c1d2e3f4a5b",
    "NCCL INFO Channel 00/02 :    0   1   2   3 comm 0x55d0c8a3b2c0 rank 3 nRanks 8 nNodes 2",
    "ulimit -n 1024, /dev/shm 64M, CUDA_VISIBLE_DEVICES=0,1,2,3 RANK=3 WORLD_SIZE=8",
    "uvicorn running on http://0.0.0.0:8000, client 127.0.0.1:51234, netmask 255.255.255.0",
    "fixed in cuBLAS 11.4.2.10064 and cuFFT 10.4.2.109",
    "2031-02-03 04:05:06,789 - loader.py[line:88] - ERROR: failed; model.py(12)[pid:42]",
    "tokenizer.pad_token = tokenizer.eos_token; add_special_tokens({'pad_token': '[PAD]'})",
    "Device name=GeForce RTX 4090, serial=unknown (no NVML), Serial Number : N/A",
]  # fmt: skip


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.kind}-{i}" for i, r in enumerate(ROWS)])
def test_each_kind_is_redacted(row: Row) -> None:
    out = redact(row.text)
    for secret in row.gone:
        assert secret not in out, out
    for part in row.kept:
        assert part in out, out


@pytest.mark.parametrize("text", UNCHANGED)
def test_diagnostic_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_every_kind_has_a_row_and_every_row_a_kind() -> None:
    ids = [k.id for k in KINDS]
    assert len(ids) == len(set(ids))
    assert {r.kind for r in ROWS} == set(ids)


def test_every_kind_is_documented() -> None:
    for kind in KINDS:
        assert kind.description and kind.placeholder.startswith(("<", "~", "\\")), kind.id


def test_redaction_is_idempotent() -> None:
    for row in ROWS:
        once = redact(row.text)
        assert redact(once) == once, row.kind


def test_known_host_names_go_everywhere() -> None:
    assert redact("[trainer-7:1234] NCCL WARN", ["trainer-7"]) == "[<host>:1234] NCCL WARN"
    assert redact("trainer-70 and trainer-7.", ["trainer-7"]) == "trainer-70 and <host>."


@pytest.mark.parametrize(
    "unit",
    ["a-", "a-b", "a.", "1.", "ip-1-", "x@", "login ", '"password": "', "\x1b]", "~a", "[a:1]"],
)
def test_long_hostile_lines_take_linear_time(unit: str) -> None:
    """A 1 MiB evidence line can reach the Markdown renderer: no pattern may backtrack
    quadratically (these took from 2 s to 110 s on 20,000 characters before)."""
    text = unit * (60_000 // len(unit))
    start = time.perf_counter()
    redact(text)
    assert time.perf_counter() - start < 1.0
