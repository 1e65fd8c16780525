"""Page models: one call per page view, answering in the exact shape the page draws.

Each page model composes analytics calls (data) and shapes them for display:
the columns a table shows, picker labels, hover text, chart-ready frames and
problems instead of tracebacks. A page then reads widgets → one call (through
`ui.cache`) → render, and every shape is testable without Streamlit: nothing in
this package imports streamlit or plotly.

- `overview` / `conversations` / `transcript` / `resume_qa`: one module per page;
- `frames`: reshaping helpers they share.
"""
