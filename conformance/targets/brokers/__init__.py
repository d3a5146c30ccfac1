"""The brokers a target names: those the suite starts on free loopback ports, waits for and always stops (`process`
holds the generic machinery, `ManagedBroker`; `tansu`, `noida`, `kafka` and `kfake` know how to launch one each;
`rdkafka_mock` drives librdkafka's mock cluster in this process; `reference_broker` serves the model or a broker
mutant as a process), what their openers share and the user's own cluster at --bootstrap-servers (`opening`)."""
