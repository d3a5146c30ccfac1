"""Any broker over the Kafka protocol: the wire implementation (kafka_wire.py), the tap a client library talks to a
broker through (tap.py), the fault hook that moves leaders on a user's cluster (fault_hook.py) and target health
(health.py)."""
