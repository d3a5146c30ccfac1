"""segmentio/kafka-go (Go): a client through its driver (conformance/targets/routes/driver/go/kafkago/), built with
the Go toolchain from the Go module proxy on first use."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, Library

KAFKA_GO = Library(
    "kafka-go", "go", "github.com/segmentio/kafka-go", "the Go module proxy", "v0.4.51", frozenset({CLIENT_ROLE}),
    "conformance.targets.routes.driver.go_build:build_go_driver", "go/kafkago",
)  # fmt: skip
