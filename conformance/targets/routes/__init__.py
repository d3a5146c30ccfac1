"""How the suite reaches an implementation: in this process (in_process.py: an adapter imported by name), through a
driver process (driver/: the driver protocol, its process, the client and codec adapters over it, the self-test,
each language's build and the drivers' sources), over the Kafka protocol (wire_adapter/: any broker through the
suite's wire client, the client tap, the fault hook, target health). The JVM bridge a Java adapter drives is
conformance.jvm, below the targets."""
