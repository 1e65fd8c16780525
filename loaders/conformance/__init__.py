"""The source conformance kit: the checks every source kind passes, for a source author's own pytest suite.

The same real LangGraph graphs are written through a real saver and read
through the kind (a `Case`); each of `CHECKS` holds the kind to the source
contract and its load to the reference (the graphs' SqliteSaver store, loaded:
`write_reference`). docs/sources.md shows the few lines a suite needs:

    graphs = conformance.write_reference(folder)               # once a session
    case = conformance.Case("mine", "my-kind", str(spec))      # your kind's spec holding the graphs
    for check in conformance.CHECKS:
        check(case, graphs.context(case, tmp_path, monkeypatch))

`write_graphs(saver)` writes the graphs through any LangGraph saver (the same
rows as the reference's). Needs `pip install 'transcript-lens[conformance]'`
(pytest, LangGraph and its SQLite saver).
"""

from loaders.conformance.checks import (
    CHECKS,
    Case,
    Context,
    check_declarations,
    check_describe,
    check_detect,
    check_load,
    check_name,
    check_options,
    check_reader,
    check_split,
    check_split_load,
    force_split,
    key_digest,
)
from loaders.conformance.graphs import (
    AWKWARD_TEXT,
    AWKWARD_THREADS,
    Graphs,
    echo_graph,
    sqlite_graphs,
    write_awkward_threads,
    write_graphs,
    write_reference,
    write_scenarios,
)
from loaders.conformance.tables import assert_same_tables, rows

__all__ = [
    "AWKWARD_TEXT", "AWKWARD_THREADS", "CHECKS", "Case", "Context", "Graphs", "assert_same_tables",
    "check_declarations", "check_describe", "check_detect", "check_load", "check_name", "check_options",
    "check_reader", "check_split", "check_split_load", "echo_graph", "force_split", "key_digest", "rows",
    "sqlite_graphs", "write_awkward_threads", "write_graphs", "write_reference", "write_scenarios",
]
