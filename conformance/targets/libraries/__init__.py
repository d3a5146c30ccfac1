"""The libraries under test: one module or package per library, with every role it plays (its client adapter, its
codec adapter, its driver) and how it is obtained (PyPI, Maven Central, the Go module proxy, npm, a local checkout),
in one row each (conformance.targets.kinds.library.Library); pylibs.py and pyrecords.py hold what the Python
adapters share.

`LIBRARIES` is the one table of them. The targets table (conformance.targets.registry) has a `client:<name>` row for
every library playing the client role and a `codec:<name>` row for the codec role, and
`conformance.targets.registry.register_library` adds one at run time: a library through the driver protocol is one
row here and its driver program under conformance/targets/routes/driver/.
"""

from __future__ import annotations

from conformance.errors import TargetError
from conformance.targets.kinds.library import Library
from conformance.targets.libraries.aiokafka import AIOKAFKA, AIOKAFKA_PURE
from conformance.targets.libraries.confluent_kafka import CONFLUENT_KAFKA
from conformance.targets.libraries.franz_go import FRANZ_GO
from conformance.targets.libraries.java import JAVA
from conformance.targets.libraries.kafka_go import KAFKA_GO
from conformance.targets.libraries.kafka_python import KAFKA_PYTHON
from conformance.targets.libraries.kafkajs import KAFKAJS
from conformance.targets.libraries.model import MODEL_LIBRARY
from conformance.targets.libraries.own_driver import OWN_DRIVER
from conformance.targets.libraries.sarama import SARAMA

# In the order of the targets table's rows: the in-process libraries first, then those through a driver only.
LIBRARIES: dict[str, Library] = {
    library.name: library
    for library in (
        MODEL_LIBRARY, KAFKA_PYTHON, AIOKAFKA, AIOKAFKA_PURE, CONFLUENT_KAFKA, JAVA, FRANZ_GO, SARAMA, KAFKA_GO,
        KAFKAJS, OWN_DRIVER,
    )
}  # fmt: skip


def library_playing(role: str, name: str) -> Library:
    """The row of library `name` playing `role` (CLIENT_ROLE, CODEC_ROLE), or a TargetError naming the libraries
    that play it."""
    row = LIBRARIES.get(name)
    if row is None or not row.plays(role):
        names = ", ".join(f"{role}:{n}" for n, r in LIBRARIES.items() if r.plays(role))
        raise TargetError(f"unknown {role} library {name!r}: choose one of {names} (--target)")
    return row
