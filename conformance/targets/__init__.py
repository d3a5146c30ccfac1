"""Targets, by concern: the kinds of implementation and their protocols (kinds/), the libraries under test with every
role they play and how each is obtained (libraries/, with the one library table), how an implementation is reached
(routes/: in process, a driver process, the Kafka protocol), the brokers a target names (brokers/), the target table
and parser (registry.py) and the name syntax (target.py)."""
