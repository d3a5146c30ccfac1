"""The Kafka protocol on a socket, for the suite's own client and the relays in front of brokers:

- framing.py: reading and writing ``size int32 | frame`` on a blocking socket, with timeouts (standard library
  only, so the managed brokers' readiness probe imports nothing else);
- connection.py: `KafkaConnection`, one connection to one broker, requests framed with kafka-python's protocol
  layer; `WireError`;
- client.py: `WireClient`, the `kafka-wire` adapter's client: negotiates versions, routes partition requests to
  leaders and offers the requests the suites send, each at an explicit version;
- relay.py: a loopback relay between a client and a broker, frame by frame (the client tap, the wire-fault proxy);
- security.py: `SecuritySettings` (security protocol, SASL mechanism and credentials, TLS files) and the socket they
  give, TLS through Python's ssl module;
- sasl.py: SaslHandshake and SaslAuthenticate on a new connection, over kafka-python's PLAIN and SCRAM mechanisms;
- client_config.py: the settings from options, KTS_ variables and a Kafka client properties file, and how a run
  hands them to its pytest process (secrets by environment, never on the command line).

Import from the modules themselves; this package imports none of them, so that framing.py stays free of
kafka-python.
"""
