"""Wire-level fault injection: a loopback Kafka proxy between the suite and a real broker that passes the broker's
answers through, or puts one realistic timestamp bug into them.

    with KafkaProxy(broker.bootstrap, fault_named("latest-hw-minus-one")) as proxy:
        ... pytest suites --target broker --bootstrap-servers {proxy.bootstrap} ...

proxy.py relays (through conformance/wire/relay.py) and rewrites, faults.py holds the bugs (`FAULTS`, a registry of
the mutants' shape, conformance/faults/seeded.py), batches.py rewrites v2 batch headers with their CRC, topics.py
is what the proxy learns of topics from the traffic.
"""

from .faults import FAULTS, Fault, WireFault, fault_named
from .proxy import KafkaProxy, ProxyError

__all__ = ["FAULTS", "Fault", "KafkaProxy", "ProxyError", "WireFault", "fault_named"]
