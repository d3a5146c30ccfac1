"""The control-plane contract both sides share: what a control plane drives and how it refuses (`controlled`), the
HTTP server of that contract (`control_plane`, described by `openapi.json` beside it) and the suite's client of any
control plane (`control_client`).

It sits below targets/ and reference/ so that the managed brokers, the wire adapter and the reference broker all
reach a control plane without importing one another."""
