"""CSV reports (contract §9): one registry of report kinds, one writer, one command.

- `spec`: a kind of report (`ReportSpec`: its documented columns and the function that builds
  its rows) and the registry every kind is added to (`register_report`, `registry`).
- `writer`: the one writer and the one format (`write_report`, `report_frame`, `frame_csv`):
  CSV or JSON, masked as the deployment says, each written report in the export log.
- `kinds`: the built-in kinds (`conversations`, `daily`, `transcript`, `trends`); the other
  kinds live with the rows they report (`analytics/history/reports.py`, …).
- `filter_options`: the filter options every report and listing takes (`--tenant`, `--since`, …).
- `cli`: the `report` subcommand.

A module that registers a kind is named in `analytics.REGISTRARS`, which `registry()` imports.

>>> from analytics.reporting.spec import registry
>>> {"conversations", "daily", "transcript", "trends"} <= set(registry())
True
"""
