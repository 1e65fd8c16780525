"""The deployment as the app's pages see it (pages import `ui` only): `analytics.deployment`,
which the command line (`transcript-lens app`) reads too.

>>> from ui import access
>>> access.from_environment({}).read_only
False
"""

from analytics.deployment import (  # noqa: F401  (the names the app uses)
    CONFIG_ENV,
    OBSERVED_UPLOAD_MB,
    READ_ONLY_ENV,
    SOURCE_ROOTS_ENV,
    Deployment,
    from_environment,
    load_config,
    server_environment,
)
