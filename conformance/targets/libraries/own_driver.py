"""`driver`: the user's own driver, an executable speaking the driver protocol (client:driver=PATH,
codec:driver=PATH; docs/driver-protocol.md), run as it is."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE, Library

OWN_DRIVER = Library(
    "driver", "any", "your driver", "a local executable (client:driver=PATH)", None,
    frozenset({CLIENT_ROLE, CODEC_ROLE}), None,
)  # fmt: skip
