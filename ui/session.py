"""Who this browser session is and what it may see: the app as a shared service.

One server process serves every session. Each gets its own policy (`analytics.policy`):
the deployment's (`transcript-lens app --redact / --tenants / --config`), the tenants its
signed-in user is mapped to (`analytics.deployment.Deployment.users`), and the session's own
"Mask personal data" choice. It travels in the session's `DbRef` (`ui.state.current_db`),
so every cached answer is keyed by it and every connection a data call opens reads under
it (`ui.cache.reading`): no session is answered from another's cache entry.

The user is `st.user` when the app signs people in itself (`st.login`, an OIDC provider in
`.streamlit/secrets.toml`), else the header a trusted reverse proxy sets
(`identity_header` in the deployment config), else nobody (on your own machine).

>>> policy()  # doctest: +SKIP
Policy(redact=True, tenants=frozenset({'acme'}))
"""

from __future__ import annotations

import streamlit as st

from analytics.errors import BadRequest
from analytics.policy import Policy, deployment_policy, set_session_policy
from analytics.redact import RedactConfig
from ui import access, markup

#: The session's own masking choice (the sidebar's toggle).
MASK_KEY = "tl.mask"


def deployment() -> access.Deployment:
    """What the server was started to allow (`analytics.deployment.from_environment`)."""
    return access.from_environment()


def user(deployed: access.Deployment | None = None) -> str | None:
    """The signed-in user: `st.user`'s email (or name) when signed in through `st.login`,
    else the deployment's identity header, else None."""
    try:
        if st.user.is_logged_in:
            return st.user.get("email") or st.user.get("name") or None
    except Exception:  # noqa: BLE001 - no authentication configured: st.user knows nobody
        pass
    header = (deployed or deployment()).identity_header
    if header:
        value = st.context.headers.get(header)
        return value.strip() if value and value.strip() else None
    return None


def mask_forced() -> bool:
    """Whether the deployment masks personal data for everyone (no one can switch it off)."""
    return deployment_policy().redact


def policy() -> Policy:
    """What this session may see: the deployment's policy, the user's tenants, the session's masking."""
    deployed = deployment()
    return deployed.policy_for(user(deployed), redact=bool(st.session_state.get(MASK_KEY, False)))


def enter() -> Policy:
    """Put this run's thread under the session's policy (anything read outside `ui.cache`
    reads under it too); returns it. The router calls it first thing in every run. Under
    masking, a redaction config that cannot be read (`analytics.redact.RedactConfig.from_toml`:
    a string where a list is meant, a bad pattern) stops the run with its one line: no page
    is shown masked by less than the deployment asked for."""
    current = policy()
    set_session_policy(current)
    if current.redact:
        problem = redact_config_problem()
        if problem:
            st.error(f"The redaction config is refused: {markup.text(problem)}", icon=":material/error:")
            st.stop()
    return current


def redact_config_problem() -> str | None:
    """Why the deployment's redaction config (`TRANSCRIPT_LENS_REDACT_CONFIG`) is refused, or None.

    >>> import os; os.environ.pop("TRANSCRIPT_LENS_REDACT_CONFIG", None) and None; redact_config_problem()
    """
    try:
        RedactConfig.from_environment()
    except BadRequest as exc:
        return str(exc)
    return None
