"""Managed targets: brokers the suite starts on free loopback ports, waits for,
and always stops. `process` holds the generic machinery (`ManagedBroker`), `tansu` and `noida`
know how to launch one binary each; `rdkafka_mock` drives librdkafka's mock cluster in-process."""
