#!/bin/bash
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/gpudoctor-snapshot.sh): after a job
# ends, record this node's state with `gpudoctor snapshot` — GPUs through NVML, host memory,
# CUDA runtimes, and the kernel log's Xid / NVRM / oom-kill lines of the last hours — next to
# the job's logs, one file per node:
#
#   $GPUDOCTOR_JOBS_DIR/<job id>/snapshots/<node>.json
#
# and then, from any machine (no GPU needed), one command reads the whole job:
#
#   gpudoctor explain /shared/gpudoctor/<job id>/logs --snapshot /shared/gpudoctor/<job id>/snapshots
#
# Slurm runs the Epilog as root on every node of the allocation and drains a node whose Epilog
# fails, so this script never fails: every problem is logged and it exits 0.

GPUDOCTOR=${GPUDOCTOR:-/opt/gpudoctor/bin/gpudoctor}
JOBS_DIR=${GPUDOCTOR_JOBS_DIR:-/shared/gpudoctor}
# Kernel-log window: the job's length is a good bound (the default here covers most jobs).
SINCE=${GPUDOCTOR_SINCE:-12h}

job=${SLURM_JOB_ID:-}
[ -n "$job" ] && [ -x "$GPUDOCTOR" ] || exit 0

# Where Slurm passes the job's wait() status to the Epilog, skip jobs that succeeded; where it
# does not, snapshot every job (a snapshot costs well under a second).
if [ "${SLURM_JOB_EXIT_CODE:-}" = "0" ] && [ "${GPUDOCTOR_ALWAYS:-0}" != "1" ]; then
    exit 0
fi

dir="$JOBS_DIR/$job/snapshots"
node=$(hostname -s)
if ! mkdir -p "$dir"; then
    logger -t gpudoctor-epilog "job $job: cannot create $dir"
    exit 0
fi
# The job's owner reads the snapshots; nobody else does (they hold host names and PIDs).
chmod 0700 "$dir" 2>/dev/null
[ -n "${SLURM_JOB_USER:-}" ] && chown "$SLURM_JOB_USER" "$dir" 2>/dev/null

if ! timeout 60 "$GPUDOCTOR" snapshot --since "$SINCE" -o "$dir/$node.json" 2>/dev/null; then
    logger -t gpudoctor-epilog "job $job: gpudoctor snapshot failed on $node"
fi
[ -n "${SLURM_JOB_USER:-}" ] && chown "$SLURM_JOB_USER" "$dir/$node.json" 2>/dev/null
exit 0
