"""franz-go (Go): client and record layer through its driver (conformance/targets/routes/driver/go/franzgo/), built
with the Go toolchain from the Go module proxy on first use."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE, Library

FRANZ_GO = Library(
    "franz-go", "go", "github.com/twmb/franz-go", "the Go module proxy", "v1.22.3",
    frozenset({CLIENT_ROLE, CODEC_ROLE}), "conformance.targets.routes.driver.go_build:build_go_driver", "go/franzgo",
)  # fmt: skip
