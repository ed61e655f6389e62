"""Facts: the flat, named values that rules test, and where each comes from.

- the structure readers in :mod:`gpudoctor.logs.structure` read facts from the logs
  (pasted ``nvidia-smi`` tables and ``collect_env`` output, tracebacks, process endings);
- :mod:`.machine` turns a snapshot of the machine into facts;
- :mod:`.compat` computes compatibility verdicts from the versions the others found;
- :mod:`.assemble` merges them into the one namespace the engine sees.
"""
