"""Sarama (Go): a client through its driver (conformance/targets/routes/driver/go/sarama/), built with the Go
toolchain from the Go module proxy on first use. Client only: Sarama's RecordBatch and MessageSet encode and decode
through unexported methods."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, Library

SARAMA = Library(
    "sarama", "go", "github.com/IBM/sarama", "the Go module proxy", "v1.61.1", frozenset({CLIENT_ROLE}),
    "conformance.targets.routes.driver.go_build:build_go_driver", "go/sarama",
)  # fmt: skip
