"""Facts: the flat, named values that rules test, and where each comes from.

- :mod:`.pasted` reads facts from text pasted into logs (``nvidia-smi`` tables,
  ``collect_env`` output);
- :mod:`.machine` turns a snapshot of the machine into facts;
- :mod:`.compat` computes compatibility verdicts from the versions the others found;
- :mod:`.assemble` merges them into the one namespace the engine sees.
"""
