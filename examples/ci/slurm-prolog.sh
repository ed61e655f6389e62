#!/bin/bash
# Slurm prolog snippet (slurm.conf: Prolog=/etc/slurm/prolog.d/*): check the node before a
# job starts. Slurm drains a node whose prolog exits non-zero and requeues the job, so only a
# failed check (exit 1) stops it; a usage error (2) or nothing checked (3) is logged and the
# job runs.
#
# Exit codes of `gpudoctor check`: 0 ok (warnings allowed), 1 a check failed, 2 usage error,
# 3 nothing could be checked.

GPUDOCTOR=${GPUDOCTOR:-/opt/gpudoctor/bin/gpudoctor}
# The number of GPUs this node type has (NVML sees all of them, whatever the job asked for).
EXPECT_GPUS=${EXPECT_GPUS:-8}

[ -x "$GPUDOCTOR" ] || exit 0

out=$(timeout 20 "$GPUDOCTOR" check --require-gpu --expect-gpus "$EXPECT_GPUS" \
    --format text --no-color --width 120 2>&1)
rc=$?
if [ "$rc" -eq 1 ]; then
    echo "$out" | logger -t gpudoctor-prolog
    exit 1
fi
[ "$rc" -eq 0 ] || logger -t gpudoctor-prolog "gpudoctor check exited $rc; job allowed"
exit 0
