"""`python -m conformance` runs the `kafka-conformance` command line."""

from __future__ import annotations

from conformance.cli import main

raise SystemExit(main())
