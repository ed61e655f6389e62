"""A job of many ranks and nodes read as one: who took part, who failed first, what followed.

The scanner gives every event its rank, node and time (:mod:`gpudoctor.logs.origin`) and
counts the distinct ranks of each pattern; the engine ranks the diagnoses as for one log.
:func:`~gpudoctor.jobs.first_failure.place_job` is one step after that ranking: when the
inputs came from several ranks or nodes, it finds the first failure (the earliest fatal line,
the rank torchelastic names as the root cause, the ranks c10d's desync report names, or the
ranks missing from a collective every other rank timed out in), puts its diagnosis first and
marks the diagnoses that follow from it, which the text and Markdown reports collapse into one
line each. :mod:`gpudoctor.jobs.pointers` holds the lines that point at a rank;
:mod:`gpudoctor.jobs.snapshots` merges the snapshots of several nodes; the words for all
this are :mod:`gpudoctor.render.job_wording`.
"""
