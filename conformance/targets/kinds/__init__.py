"""The kinds of implementation a target is (broker, client, codec; implementation.Kind): the implementation protocol
(implementation.py), the client capability and its rules (client_library.py, client_rules.py), the codec capability
(codec_library.py), the implementations a client or a codec library is seen through (client_target.py,
codec_target.py), what a library row says (library.py), and where seeded faults plug in (seeding.py). The capability
vocabulary itself is conformance.judging.capabilities."""
