"""Transcript Lens in Jupyter: the app's charts as plotly figures, a transcript as a notebook cell,
a table as the app's tables show it (`table`: empty cells, messages numbered from 1).

Built from the same page models the Streamlit pages draw (`ui.models`) and the same chart
builders (`ui.charts`); nothing here imports streamlit.

>>> import lens_notebook as lens  # doctest: +SKIP
>>> lens.overview("demo.duckdb", by="week")["messages_by_role"]  # doctest: +SKIP
>>> lens.transcript("demo.duckdb", "acme:mobile:sess-3003")  # doctest: +SKIP
>>> lens.table(analytics.read("demo.duckdb", "acme:mobile:sess-3003"))  # doctest: +SKIP
"""

from lens_notebook.figures import (
    branch_tree,
    compare,
    conversations,
    conversations_figures,
    figure,
    overview,
    outcomes,
    overview_figures,
    patterns,
    resume_timeline,
    topics,
)
from lens_notebook.tables import Table, table
from lens_notebook.transcript import Transcript, transcript

__all__ = [
    "Table",
    "Transcript",
    "branch_tree",
    "compare",
    "conversations",
    "conversations_figures",
    "figure",
    "overview",
    "outcomes",
    "overview_figures",
    "patterns",
    "resume_timeline",
    "table",
    "topics",
    "transcript",
]
