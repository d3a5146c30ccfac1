"""What the proxy learns about topics from the traffic it relays: each topic's timestamp type (from the
CreateTopics, AlterConfigs and IncrementalAlterConfigs requests the suite sends) and each topic id's name
(from CreateTopics v7+ and Metadata v10+ answers, since Fetch v13+ and Produce v13 name topics by id).
A fault that applies to one kind of topic asks here; a topic it never saw created is the broker default,
CreateTime (`log.message.timestamp.type`)."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from models.constants import TimestampType

__all__ = ["TopicBook"]

_TIMESTAMP_TYPE = "message.timestamp.type"
_TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
_SET, _DELETE = 0, 1  # IncrementalAlterConfigs operations
_NO_ID = uuid.UUID(int=0)


class TopicBook:
    """Topic name -> timestamp type, topic id -> name; shared by every connection of one proxy."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._types: dict[str, TimestampType] = {}
        self._names: dict[uuid.UUID, str] = {}

    def timestamp_type(self, topic: str) -> TimestampType:
        with self._lock:
            return self._types.get(topic, TimestampType.CREATE_TIME)

    def name(self, topic: str | None, topic_id: uuid.UUID | None) -> str:
        """A topic's name from an answer that carries its name (older versions) or only its id."""
        if topic:
            return topic
        with self._lock:
            return self._names.get(topic_id or _NO_ID, "")

    # -- learning from requests (the suite's intent; a refused change is harmless: the suite then skips)

    def created(self, request: Any) -> None:
        with self._lock:
            for topic in request.topics:
                configs = {c.name: c.value for c in topic.configs or ()}
                self._types[topic.name] = _type_of(configs.get(_TIMESTAMP_TYPE))

    def altered(self, request: Any, *, incremental: bool) -> None:
        with self._lock:
            for resource in request.resources:
                if resource.resource_type != _TOPIC_RESOURCE:
                    continue
                if not incremental:
                    # AlterConfigs replaces the topic's whole set: an absent type is the default again.
                    configs = {c.name: c.value for c in resource.configs or ()}
                    self._types[resource.resource_name] = _type_of(configs.get(_TIMESTAMP_TYPE))
                    continue
                for config in resource.configs or ():
                    if config.name == _TIMESTAMP_TYPE and config.config_operation in (_SET, _DELETE):
                        value = config.value if config.config_operation == _SET else None
                        self._types[resource.resource_name] = _type_of(value)

    # -- learning from answers

    def named(self, topics: Any, *, id_field: str = "topic_id") -> None:
        """Topic ids from the `topics` of a CreateTopics or Metadata answer (those that carry them)."""
        with self._lock:
            for topic in topics:
                topic_id = getattr(topic, id_field, None)
                if topic.name and topic_id is not None and topic_id != _NO_ID:
                    self._names[topic_id] = topic.name


def _type_of(value: str | None) -> TimestampType:
    return TimestampType.LOG_APPEND_TIME if value == "LogAppendTime" else TimestampType.CREATE_TIME
