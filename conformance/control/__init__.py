"""The suite's side of a control plane (issue 12): the HTTP client that drives an implementation's clocks,
leaders and retention (`client`), and `kafka-conformance check-control`, which checks a control plane
against the OpenAPI document with schemathesis (`check`). The reference broker's own control plane
is conformance.reference.control."""
