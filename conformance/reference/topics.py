"""The reference broker's topic administration: CreateTopics, DeleteTopics, DescribeConfigs, AlterConfigs
and IncrementalAlterConfigs, over the served implementation's topics (configs in Kafka's spelling:
`configs.py`).

Topics are created through `served.impl.create_topic` (replicated on every broker, the model's default,
for replication factor -1 or the number of brokers) or, for a smaller replication factor, through the
model cluster itself. There is no auto-creation. A config the model refuses is INVALID_CONFIG naming it,
never a crash.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kafka.protocol.admin import (
    AlterConfigsResponse,
    CreateTopicsResponse,
    DeleteTopicsResponse,
    DescribeConfigsResponse,
    IncrementalAlterConfigsResponse,
)

from conformance.reference.configs import TYPE_LIST, ConfigProblem, Refused, describe, overrides, topic_config
from conformance.reference.request_context import (
    INVALID_PARTITIONS,
    INVALID_REPLICATION_FACTOR,
    INVALID_TOPIC_EXCEPTION,
    NO_TOPIC_ID,
    UNKNOWN_TOPIC_ID,
    Request,
)
from models.cluster import ClusterError
from models.config import TopicConfig
from models.constants import ErrorCode
from models.errors import ConfigError
from models.profiles import Profile

TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3  # IncrementalAlterConfigs operations
DEFAULT_PARTITIONS = 1  # Kafka's num.partitions
# Kafka's Topic.validate: at most 249 characters of ASCII alphanumerics, '.', '_' and '-', not "." or "..".
_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


# ------------------------------------------------------------------------------------------------
# CreateTopics


def handle_create_topics(req: Request) -> Any:
    body, version = req.body, req.version
    names = [t.name for t in body.topics]
    results = []
    with req.state.lock:
        for wanted in body.topics:
            result = CreateTopicsResponse.CreatableTopicResult(name=wanted.name)
            try:
                if names.count(wanted.name) > 1:
                    raise Refused(ErrorCode.INVALID_REQUEST, f"topic {wanted.name!r} is named twice in the request")
                check_only = version >= 1 and body.validate_only
                partitions, replication, config = _create(req, wanted, validate_only=check_only)
            except Refused as refused:
                req.note(f"{wanted.name} {ErrorCode(refused.code).name}: {refused.message}")
                result.error_code, result.error_message = refused.code, refused.message
                if version >= 5:
                    result.num_partitions, result.replication_factor, result.configs = -1, -1, None
                results.append(result)
                continue
            req.note(f"{wanted.name} created: {partitions} partitions x {replication}")
            result.error_code, result.error_message = 0, None
            if version >= 5:
                result.num_partitions, result.replication_factor = partitions, replication
                result.configs = [
                    result.CreatableTopicConfigs(
                        name=c.name, value=c.value, read_only=False, config_source=c.source, is_sensitive=False
                    )
                    for c in describe(config, req.served.profile)
                ]
            if version >= 7:
                result.topic_id = req.state.topic_id(wanted.name)
            results.append(result)
    return CreateTopicsResponse(throttle_time_ms=0, topics=results, version=version)


def _create(req: Request, wanted: Any, *, validate_only: bool) -> tuple[int, int, TopicConfig]:
    """Create one topic (or only check it); (partitions, replication factor, config)."""
    state, served = req.state, req.served
    name = wanted.name
    if not _TOPIC_NAME.match(name or "") or name in (".", ".."):
        raise Refused(
            INVALID_TOPIC_EXCEPTION,
            f"topic name {name!r} is illegal: use 1 to 249 of the characters a-z, A-Z, 0-9, '.', '_', '-'",
        )
    if state.has_topic(name):
        raise Refused(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
    if wanted.assignments:
        raise Refused(
            ErrorCode.INVALID_REQUEST,
            "manual replica assignments are not served by the reference broker: pass a replication factor",
        )
    partitions = DEFAULT_PARTITIONS if wanted.num_partitions == -1 else wanted.num_partitions
    if partitions < 1:
        raise Refused(INVALID_PARTITIONS, f"Number of partitions must be larger than 0, got {partitions}.")
    brokers = len(served.cluster.brokers)
    replication = brokers if wanted.replication_factor == -1 else wanted.replication_factor
    if not 1 <= replication <= brokers:
        raise Refused(
            INVALID_REPLICATION_FACTOR,
            f"Replication factor: {replication} larger than available brokers: {brokers}."
            if replication > brokers
            else f"Replication factor must be larger than 0, got {replication}.",
        )
    # The configs the served cluster applies (a ConfigProblem is refused as INVALID_CONFIG): a mutant may run a
    # tweaked profile (one that still honours a removed config, say), and the broker must accept what it accepts.
    config = topic_config({c.name: c.value for c in wanted.configs}, served.cluster.profile)
    if validate_only:
        return partitions, replication, config
    try:
        if replication == brokers:
            served.impl.create_topic(name, config, partitions=partitions)
        else:
            served.cluster.create_topic(name, config, partitions=partitions, replication_factor=replication)
    except ConfigError as exc:
        raise Refused(ErrorCode.INVALID_CONFIG, str(exc)) from None
    except ClusterError as exc:
        raise Refused(ErrorCode.INVALID_REQUEST, str(exc)) from None
    state.forget(name)  # a topic created again gets a new id
    return partitions, replication, config


# ------------------------------------------------------------------------------------------------
# DeleteTopics


def handle_delete_topics(req: Request) -> Any:
    state, body, version = req.state, req.body, req.version
    if version >= 6:
        wanted = [(t.name, t.topic_id) for t in body.topics]
    else:
        wanted = [(name, None) for name in body.topic_names]
    results = []
    with state.lock:
        for name, topic_id in wanted:
            by_id = name is None and topic_id is not None and topic_id != NO_TOPIC_ID
            found = state.topic_by_id(topic_id) if by_id else name
            result = DeleteTopicsResponse.DeletableTopicResult(name=found, error_code=0, error_message=None)
            if version >= 6:
                result.topic_id = state.topic_id(found) if found is not None else topic_id
            if found is None or not state.has_topic(found):
                result.error_code = UNKNOWN_TOPIC_ID if by_id else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                result.error_message = (
                    f"no topic with id {topic_id}" if by_id else "This server does not host this topic-partition."
                )
                req.note(f"{found or topic_id} {ErrorCode(result.error_code).name}")
            else:
                for key in [k for k in req.served.cluster.partitions if k[0] == found]:
                    del req.served.cluster.partitions[key]
                state.forget(found)
                req.note(f"{found} deleted")
            if version < 5:
                result.error_message = None
            results.append(result)
    return DeleteTopicsResponse(throttle_time_ms=0, responses=results, version=version)


# ------------------------------------------------------------------------------------------------
# DescribeConfigs


def handle_describe_configs(req: Request) -> Any:
    state, body, version = req.state, req.body, req.version
    results = []
    with state.lock:
        for resource in body.resources:
            result = DescribeConfigsResponse.DescribeConfigsResult(
                resource_type=resource.resource_type, resource_name=resource.resource_name, configs=[]
            )
            try:
                config = _topic_config_of(req, resource.resource_type, resource.resource_name)
            except Refused as refused:
                result.error_code, result.error_message = refused.code, refused.message
                req.note(f"{resource.resource_name} {ErrorCode(refused.code).name}")
                results.append(result)
                continue
            result.error_code, result.error_message = 0, None
            # No keys (null or an empty list) means every config.
            described = describe(config, req.served.profile, resource.configuration_keys or None)
            result.configs = [_described(c, version, version >= 1 and body.include_synonyms) for c in described]
            req.note(f"{resource.resource_name}: {len(described)} configs")
            results.append(result)
    return DescribeConfigsResponse(throttle_time_ms=0, results=results, version=version)


def _described(config: Any, version: int, synonyms: bool) -> Any:
    entry = DescribeConfigsResponse.DescribeConfigsResult.DescribeConfigsResourceResult(
        name=config.name, value=config.value, read_only=False, is_sensitive=False
    )
    if version == 0:
        entry.is_default = config.is_default
    else:
        entry.config_source = config.source
        entry.synonyms = (
            [entry.DescribeConfigsSynonym(name=config.name, value=config.value, source=config.source)]
            if synonyms
            else []
        )
    if version >= 3:
        entry.config_type = config.config_type
        entry.documentation = None
    return entry


def _topic_config_of(req: Request, resource_type: int, name: str) -> TopicConfig:
    if resource_type != TOPIC_RESOURCE:
        raise Refused(
            ErrorCode.INVALID_REQUEST,
            f"resource type {resource_type} is not served: the reference broker has topic configs only (type 2)",
        )
    parts = req.state.partitions(name)
    if not parts:
        raise Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic '{name}' does not exist.")
    return parts[0].config


# ------------------------------------------------------------------------------------------------
# AlterConfigs and IncrementalAlterConfigs


def handle_alter_configs(req: Request) -> Any:
    """AlterConfigs replaces the topic's whole set of overrides with the request's."""
    return _alter(req, AlterConfigsResponse, lambda current, changes, profile: {c.name: c.value for c in changes})


def handle_incremental_alter_configs(req: Request) -> Any:
    """IncrementalAlterConfigs changes the named configs only: SET, DELETE (back to the default), and
    APPEND/SUBTRACT for list configs (cleanup.policy)."""
    return _alter(req, IncrementalAlterConfigsResponse, _apply_operations)


def _alter(
    req: Request,
    response_class: Any,
    merge: Callable[[dict[str, str], Any, Profile], dict[str, str | None]],
) -> Any:
    state, body, version, profile = req.state, req.body, req.version, req.served.profile
    results = []
    with state.lock:
        for resource in body.resources:
            name = resource.resource_name
            result = response_class.AlterConfigsResourceResponse(
                resource_type=resource.resource_type, resource_name=name, error_code=0, error_message=None
            )
            try:
                current = _topic_config_of(req, resource.resource_type, name)
                config = topic_config(
                    merge(overrides(current, profile), resource.configs, profile), req.served.cluster.profile
                )
                if not body.validate_only:
                    req.served.impl.alter_config(name, config)
            except Refused as refused:
                result.error_code, result.error_message = refused.code, refused.message
            except ConfigError as exc:
                result.error_code, result.error_message = ErrorCode.INVALID_CONFIG, str(exc)
            if result.error_code:
                req.note(f"{name} {ErrorCode(result.error_code).name}: {result.error_message}")
            else:
                req.note(f"{name}: {', '.join(f'{c.name}={c.value}' for c in resource.configs) or 'no overrides'}")
            results.append(result)
    return response_class(throttle_time_ms=0, responses=results, version=version)


def _apply_operations(current: dict[str, str], changes: Any, profile: Profile) -> dict[str, str | None]:
    out: dict[str, str | None] = dict(current)
    for change in changes:
        name, op, value = change.name, change.config_operation, change.value
        if op == SET:
            out[name] = value
        elif op == DELETE:
            out.pop(name, None)
        elif op in (APPEND, SUBTRACT):
            default = describe(TopicConfig(), profile, [name])
            if not default or default[0].config_type != TYPE_LIST:
                raise ConfigProblem(name, f"APPEND and SUBTRACT apply to list configs only, not {name}")
            items = [i for i in (out.get(name) or default[0].value).split(",") if i]
            given = [i.strip() for i in (value or "").split(",") if i.strip()]
            if op == APPEND:
                items += [i for i in given if i not in items]
            else:
                items = [i for i in items if i not in given]
            out[name] = ",".join(items)
        else:
            raise ConfigProblem(name, f"unknown operation {op} on {name}: expected 0 (SET), 1, 2 or 3 (SUBTRACT)")
    return out
