"""The options of a suites run, declared once.

Each field of `SuitesRun` (conformance.plugin.launcher) that a user sets carries an `Option` in its metadata: its
flag, its environment variable, its default, its help. From that one declaration come `kafka-conformance run`'s
options (argparse, `add_command_options`), the pytest plugin's (`add_pytest_options`), the options other commands
share with `run` where they mean the same thing (target, profile, bootstrap servers, control plane, timeouts,
expectations, ...), and the one JSON document that carries a run's settings to its pytest process
(`settings_document`, read back by `read_settings`) instead of an option per setting on its command line.

A setting's value is the option given on the command line, else its environment variable, else its default: every
option is declared with the default None, so that "given" is told apart from "not given" (and the pytest process
of `kafka-conformance run` takes its document's value where its own command line gives none). What another plugin
owns (Hypothesis' profile and seed, Allure's folder, pytest's own options) stays on the command line. The TLS and
SASL options are declared in conformance.wire.client_config with the client properties keys they read; the
document carries them without their two secrets, which travel by environment (`secret_environment`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from conformance.wire.client_config import add_security_arguments, security_given, security_options

# The one option of the pytest plugin that is no setting of its own: the document of all of them.
DOCUMENT_FLAG = "--run-settings"
DOCUMENT_DEST = "run_settings"
SECURITY_FIELD = "security"  # the SuitesRun field of the TLS and SASL settings (conformance.wire.client_config)


class SettingsError(ValueError):
    """A setting that cannot be read (an environment variable that is not a number, a document that is not one):
    one line naming it and the fix."""


class Surface(Enum):
    """Where an option is offered."""

    COMMAND = "command"  # `kafka-conformance run` (and the commands that share it)
    PYTEST = "pytest"  # the pytest plugin (`pytest suites`, and the pytest process `run` starts)


BOTH = frozenset(Surface)


@dataclass(frozen=True)
class Option:
    """How a user sets one setting: `flag` (its dest is the field's name), `env` (read when the option is not
    given), `default` (neither given), `help` (without the variable and the default, which `help_text` adds from
    `env` and `default_help`). `kind`: int or float for a number; `switch`: a flag without a value, whose variable
    is on unless "", "0" or "false". `exclusive`: options naming the same word are mutually exclusive in argparse.
    `carried`: in the settings document (else the launcher puts it on the command line itself)."""

    flag: str
    help: str | Callable[[], str]  # a callable for words read from the target table, which may grow at run time
    env: str | None = None
    default: Any = None
    default_help: str | None = None
    kind: type | None = None
    switch: bool = False
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    on: frozenset[Surface] = BOTH
    exclusive: str | None = None
    carried: bool = True

    def help_text(self, help: str | None = None) -> str:
        notes = [f"env {self.env}" + ("=1" if self.switch else "")] if self.env else []
        if self.default_help:
            notes.append(self.default_help)
        own = self.help if isinstance(self.help, str) else self.help()
        text = help if help is not None else own
        return f"{text} ({'; '.join(notes)})" if notes else text

    def keywords(self, help: str | None = None) -> dict[str, Any]:
        """The keyword arguments of argparse's add_argument and pytest's addoption for this option."""
        kw: dict[str, Any] = {"default": None, "help": self.help_text(help)}
        if self.switch:
            kw["action"] = "store_true"
            return kw
        if self.kind is not None:
            kw["type"] = self.kind
        if self.metavar is not None:
            kw["metavar"] = self.metavar
        if self.choices is not None:
            kw["choices"] = list(self.choices)
        return kw

    def from_environment(self, environ: Mapping[str, str]) -> Any:
        """The value of the environment variable (None when it is not set, or set to "" for a text option)."""
        if self.env is None or self.env not in environ:
            return None
        raw = environ[self.env]
        if self.switch:
            return raw not in ("", "0", "false")
        if self.kind is not None:
            try:
                return self.kind(raw)
            except ValueError:
                what = "a whole number" if self.kind is int else "a number"
                example = f", e.g. {self.default:g}" if isinstance(self.default, float) else ""
                raise SettingsError(
                    f"{self.env}={raw!r} is not {what}: set it as {self.flag} takes it ({self.metavar}{example})"
                ) from None
        return raw or None


def option_of(field_: dataclasses.Field[Any]) -> Option | None:
    """The option a dataclass field declares (`setting`), or None for a field no user sets."""
    found = field_.metadata.get("option")
    return found if isinstance(found, Option) else None


def setting(option: Option, default: Any = dataclasses.MISSING) -> Any:
    """A dataclass field of `SuitesRun` with its option (the one declaration of that setting); no default: a field
    every SuitesRun names."""
    return field(default=default, metadata={"option": option})


def declared(cls: type, surface: Surface | None = None) -> list[tuple[str, Option]]:
    """(field name, option) of every field of `cls` that has an option (on `surface`, when given), in field order."""
    out = []
    for f in dataclasses.fields(cls):
        option = option_of(f)
        if option is not None and (surface is None or surface in option.on):
            out.append((f.name, option))
    return out


def _option(cls: type, name: str) -> Option:
    """The option of `cls`'s field `name`."""
    for found, option in declared(cls):
        if found == name:
            return option
    raise KeyError(f"{cls.__name__} declares no option {name!r}")


# --- the options, on a command line ---------------------------------------------------------------------------------


def add_command_options(
    parser: argparse.ArgumentParser,
    cls: type,
    names: Iterable[str] | None = None,
    *,
    help: Mapping[str, str] | None = None,
    aliases: Mapping[str, tuple[str, ...]] | None = None,
) -> None:
    """The argparse options of `cls`'s settings: every one offered to a command (`names` None: `run`), or those
    named, in declaration order. `help` replaces an option's own words for a command where they say more (its
    variable and default are still added); `aliases` gives an option older flags too. The security field adds the
    TLS and SASL group (conformance.wire.client_config)."""
    wanted = set(names) if names is not None else None
    groups: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for f in dataclasses.fields(cls):
        if f.name == SECURITY_FIELD and (wanted is None or SECURITY_FIELD in wanted):
            add_security_arguments(parser)
            continue
        option = option_of(f)
        if option is None or (wanted is None and Surface.COMMAND not in option.on):
            continue
        if wanted is not None and f.name not in wanted:
            continue
        target: Any = parser
        if option.exclusive is not None:
            if option.exclusive not in groups:
                groups[option.exclusive] = parser.add_mutually_exclusive_group()
            target = groups[option.exclusive]
        flags = (option.flag, *(aliases or {}).get(f.name, ()))
        target.add_argument(*flags, dest=f.name, **option.keywords((help or {}).get(f.name)))


def add_pytest_options(group: Any, cls: type) -> None:
    """The pytest plugin's options of `cls`'s settings (a pytest OptionGroup), the TLS and SASL ones and the
    settings document's."""
    for f in dataclasses.fields(cls):
        option = option_of(f)
        if f.name == SECURITY_FIELD:
            for flag, keywords in security_options():
                group.addoption(flag, **keywords)
        elif option is not None and Surface.PYTEST in option.on:
            group.addoption(option.flag, dest=f.name, **option.keywords())
    group.addoption(
        DOCUMENT_FLAG,
        default=None,
        metavar="JSON",
        help="every setting above as one JSON document (`kafka-conformance run` passes its settings so); an option "
        "also given on the command line wins over it",
    )


def resolved(cls: type, name: str, given: Any, environ: Mapping[str, str] | None = None) -> Any:
    """The value of setting `name`: `given` (the option's value, None when not given), else its environment
    variable, else its default (SettingsError for a variable that does not read)."""
    option = _option(cls, name)
    if given is not None:
        return given
    from_env = option.from_environment(os.environ if environ is None else environ)
    return from_env if from_env is not None else option.default


def resolve_namespace(args: argparse.Namespace, cls: type, names: Iterable[str] | None = None) -> None:
    """`cls`'s settings in a command's `args` made the values the command uses: the option, else its environment
    variable, else its default (SettingsError). `names`: the settings the command took from the declaration
    (`add_command_options`); None: every one offered to a command (`run`)."""
    wanted = [name for name, _ in declared(cls, Surface.COMMAND)] if names is None else list(names)
    for name in wanted:
        if name != SECURITY_FIELD:
            setattr(args, name, resolved(cls, name, getattr(args, name, None)))


def resolve_all(
    cls: type, given: Callable[[str], Any], surface: Surface, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Every setting of `cls` offered on `surface`, by field name (`resolved`)."""
    return {name: resolved(cls, name, given(name), environ) for name, _ in declared(cls, surface)}


# --- the settings document ------------------------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def settings_document(run: Any) -> str:
    """The settings of `run` (a SuitesRun) that its pytest process reads, as one JSON document: every carried
    setting that is not its default, and the TLS and SASL options without their secrets."""
    doc: dict[str, Any] = {}
    for f in dataclasses.fields(run):
        option = option_of(f)
        value = getattr(run, f.name)
        if option is not None and option.carried and value != f.default:
            doc[f.name] = _jsonable(value)
    security = security_given(getattr(run, SECURITY_FIELD))
    if security:
        doc[SECURITY_FIELD] = security
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Document:
    """A settings document read back: the settings by field name, and the TLS and SASL options by option name."""

    settings: dict[str, Any]
    security: dict[str, str]


def read_document(text: str | None, cls: type) -> Document:
    """`text` (the --run-settings option; None: no document) read, each setting checked to be one of `cls`'s."""
    if not text:
        return Document({}, {})
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{DOCUMENT_FLAG}: not a JSON document ({exc.msg}): drop it, or pass what "
                            "`kafka-conformance run` prints") from None  # fmt: skip
    if not isinstance(doc, dict):
        raise SettingsError(f"{DOCUMENT_FLAG}: give a JSON object of settings")
    carried = {name for name, option in declared(cls) if option.carried}
    unknown = sorted(set(doc) - carried - {SECURITY_FIELD})
    if unknown:
        raise SettingsError(f"{DOCUMENT_FLAG}: unknown setting(s) {', '.join(unknown)}: choose from "
                            f"{', '.join(sorted(carried))}")  # fmt: skip
    security = doc.pop(SECURITY_FIELD, {})
    kinds = {name: option.kind for name, option in declared(cls)}
    settings = {name: _from_json(value, kinds[name]) for name, value in doc.items()}
    return Document(settings, {str(k): str(v) for k, v in security.items()})


def _from_json(value: Any, kind: type | None) -> Any:
    """A setting as JSON gives it made the field's value: a list a tuple, a path a Path."""
    if isinstance(value, list):
        return tuple(value)
    return Path(value) if kind is Path and value is not None else value


def command_line_of(run: Any, names: Iterable[str]) -> list[str]:
    """The options that say the settings `names` of `run` on a pytest command line (a replay command): each one
    not at its default, a switch by its flag alone."""
    args: list[str] = []
    fields = {f.name: f for f in dataclasses.fields(run)}
    for name in names:
        option = option_of(fields[name])
        value = getattr(run, name)
        if option is None or value in (None, False, "", ()) or value == fields[name].default:
            continue
        if option.switch:
            args.append(option.flag)
        else:
            args += [option.flag, ",".join(value) if isinstance(value, tuple) else str(value)]
    return args
