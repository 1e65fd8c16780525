"""What a shared app deployment lets its users reach (analytics.deployment), tried the way a visitor would."""

from __future__ import annotations

import os

import pytest

from analytics.policy import TENANTS_ENV, Policy, deployment_policy
from transcript_lens.cli import main as cli_main
from analytics import deployment as access
from analytics.deployment import ConfigError, Deployment


def test_paths_only_inside_the_roots_after_resolving(tmp_path):
    root = tmp_path / "stores"
    (root / "team").mkdir(parents=True)
    (root / "team" / "a.sqlite").write_bytes(b"")
    outside = tmp_path / "secret.sqlite"
    outside.write_bytes(b"")
    (root / "link.sqlite").symlink_to(outside)
    d = access.from_environment({access.SOURCE_ROOTS_ENV: str(root)})
    assert d.path_refusal(root / "team" / "a.sqlite") is None
    assert d.path_refusal(root / "new-upload-folder" / "x.zip") is None  # inside, need not exist yet
    for sneaky in (outside, root / "link.sqlite", root / ".." / "secret.sqlite", "/etc/passwd", tmp_path / "stores2"):
        assert "outside the folders" in d.path_refusal(sneaky), sneaky
    assert d.dsn_refusal("postgresql://u@h/db") == "this app loads databases by name only (configured: none)"


def test_unrestricted_by_default_and_nothing_when_read_only(tmp_path):
    free = access.from_environment({})
    assert not free.restricted
    assert free.path_refusal("/anything") is None and free.dsn_refusal("postgresql://u@h/db") is None
    locked = access.from_environment({access.READ_ONLY_ENV: "1", access.SOURCE_ROOTS_ENV: str(tmp_path)})
    assert locked.restricted
    assert "read-only" in locked.path_refusal(tmp_path / "a.sqlite")
    assert "read-only" in locked.dsn_refusal("postgresql://u@h/db")


def test_config_file_named_sources_and_users(tmp_path):
    config = tmp_path / "lens.toml"
    config.write_text(
        '[app]\nsource_roots = ["%s"]\nidentity_header = "X-Forwarded-Email"\n'
        '[app.sources]\nprod = "postgresql://reader@db/agents"\n'
        '[app.users]\n"ops@example.com" = ["acme", "globex"]\n"*@acme.com" = ["acme"]\n' % tmp_path
    )
    d = access.from_environment({access.CONFIG_ENV: str(config)})
    assert d.sources == {"prod": "postgresql://reader@db/agents"} and d.identity_header == "X-Forwarded-Email"
    assert "configured: prod" in d.dsn_refusal("postgresql://reader@db/agents")
    assert d.user_tenants("ops@example.com") == {"acme", "globex"}
    assert d.user_tenants("Ana@ACME.com") == {"acme"}
    assert d.user_tenants("eve@evil.example") == frozenset()  # not listed: nothing
    assert d.user_tenants(None) == frozenset()  # nobody signed in: nothing


def test_a_user_never_reaches_past_the_deployment_scope(monkeypatch, tmp_path):
    monkeypatch.setenv(TENANTS_ENV, "acme")
    monkeypatch.delenv("TRANSCRIPT_LENS_REDACT", raising=False)
    d = Deployment(users=(("ops@example.com", frozenset({"acme", "globex"})),))
    assert d.policy_for("ops@example.com") == Policy(tenants=frozenset({"acme"}))
    assert d.policy_for("ops@example.com", redact=True).redact
    # An empty scope allows nothing (never "everything").
    monkeypatch.setenv(TENANTS_ENV, "")
    assert deployment_policy().tenants == frozenset()


@pytest.mark.parametrize("text,message", [
    ("[app]\nreadonly = true\n", "unknown [app] key(s) readonly"),
    ("[app]\nread_only = 'yes'\n", "read_only must be bool"),
    ("[app]\ntenants = 'acme'\n", "tenants must be a list of strings"),
    ("[app.users]\n'a@b.c' = 'acme'\n", "'a@b.c' must be a list of tenant ids"),
    ("[app\n", "not a TOML file"),
])
def test_config_errors_name_file_and_key(tmp_path, text, message):
    config = tmp_path / "lens.toml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        access.load_config(config)


def test_server_environment_flags_only_narrow():
    env = access.server_environment({"tenants": ["acme", "globex"], "redact": False}, tenants="globex,initech",
                                    read_only=True, source_roots=("/srv/x",))
    assert env[TENANTS_ENV] == "globex" and env[access.READ_ONLY_ENV] == "1"
    assert env[access.SOURCE_ROOTS_ENV] == os.path.realpath("/srv/x")
    assert access.server_environment({"redact": True})["TRANSCRIPT_LENS_REDACT"] == "1"
    assert access.server_environment({}, tenants="a,b") == {TENANTS_ENV: "a,b"}


def test_app_command_refuses_a_bad_config(tmp_path, capsys):
    config = tmp_path / "lens.toml"
    config.write_text("[app]\nsources = 3\n")
    assert cli_main(["app", "--config", str(config), "--db", str(tmp_path / "none.duckdb")]) == 2
    assert "lens.toml" in capsys.readouterr().err
