"""A masked app whose redaction config cannot be read (`terms = "Nightingale"`, a string where a
list is meant; more patterns than a config may have) shows the refusal, naming the file and the key, on
every page: it masked nothing of the configured terms, silently, and then failed with an unexplained error."""

from __future__ import annotations

import pytest

from tests.pages.test_privacy import _app, pii_db, serve  # noqa: F401 (the fixture: the pii database)


CONFIGS = {  # a config: what its refusal says
    '[redact]\nterms = "Nightingale"\n': "terms must be a list of strings",
    "[redact.patterns]\n" + "".join(f"K{i} = 'x{i}'\n" for i in range(1_001)): "more than the 1,000 a config may have",
}


@pytest.mark.parametrize("text", CONFIGS, ids=["wrong type", "too many patterns"])
def test_a_bad_redact_config_is_shown_refused(pii_db, tmp_path, monkeypatch, text):  # noqa: F811
    serve(pii_db, tmp_path, monkeypatch)
    monkeypatch.setenv("TRANSCRIPT_LENS_REDACT", "1")
    config = tmp_path / "redact.toml"
    config.write_text(text, encoding="utf-8")
    monkeypatch.setenv("TRANSCRIPT_LENS_REDACT_CONFIG", str(config))
    for page in ("conversations", "transcript", "search"):
        at = _app()
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, at.exception
        [error] = [e.value for e in at.error]
        assert "redact.toml" in error and CONFIGS[text] in error and "Nightingale" not in error, error
