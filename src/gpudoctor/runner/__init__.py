"""``gpudoctor run``: run a job, pass its output through, sample the machine, keep the evidence.

- :mod:`~gpudoctor.runner.child` starts the command in its own process group, copies its
  output through unchanged and keeps the last lines;
- :mod:`~gpudoctor.runner.terminal` lets that group lead gpudoctor's terminal while it runs
  (so that the job can read what is typed) and follows its stops;
- :mod:`~gpudoctor.runner.signals` forwards Ctrl-C, SIGTERM and SIGHUP to that group;
- :mod:`~gpudoctor.runner.sampler` records GPU telemetry and host memory while it runs,
  :mod:`~gpudoctor.runner.proctree` the memory of the job's process tree;
- :mod:`~gpudoctor.runner.timeline` turns the samples into facts for rules;
- :mod:`~gpudoctor.runner.exit_status` turns an exit status into facts (also for ``explain``).

Nothing here prints a report or exits: :mod:`gpudoctor.cli.run` does.
"""
