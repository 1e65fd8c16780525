"""`python -m transcript_lens …`: the `transcript-lens` command."""

import sys

from transcript_lens.cli import main

sys.exit(main())
