"""A transcript's history (contract §3.7, §3.8, §3.10; docs/history.md), one question a module.

- `edits`: the edit log, how a transcript came to be what it is (`edit_log`);
- `branches`: a thread's branch tree (`branches`, `checkpoint_tree`);
- `diff`: two transcripts compared message by message (`diff`);
- `backlog`: the threads waiting on an `interrupt()` (`backlog`);
- `reports`, `cli`: their CSV reports and the `transcript-lens` subcommands.

The functions are `analytics`' own names (`analytics.diff(...)`).

>>> import analytics
>>> analytics.diff.__module__
'analytics.history.diff'
"""
