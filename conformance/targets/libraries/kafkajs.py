"""KafkaJS (Node.js): a client through its driver (conformance/targets/routes/driver/node/kafkajs/), installed with
npm on first use."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, Library

KAFKAJS = Library(
    "kafkajs", "node", "kafkajs", "npm", "2.2.4", frozenset({CLIENT_ROLE}),
    "conformance.targets.routes.driver.node_build:install_node_driver", "node/kafkajs",
)  # fmt: skip
