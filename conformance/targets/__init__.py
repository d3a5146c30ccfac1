"""Targets: the implementation protocol, the target registry, the adapters (the model, any broker over the wire),
managed brokers, codec and client libraries."""
