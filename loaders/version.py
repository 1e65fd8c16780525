"""The package's one version: pyproject.toml reads it, `transcript_lens.__version__` is it,
and every load stores it (`loads.tool_version`, `meta`).

>>> __version__.count(".") >= 1
True
"""

__version__ = "0.1.0"
