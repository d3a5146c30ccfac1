"""The in-process route: a library's adapter, named "module:Class" in its library row
(conformance.targets.kinds.library.Library.adapters), imported only when a target is opened or checked, so that a
library that is not installed costs nothing until it is asked for. An adapter that cannot work here (its library not
installed, no JVM) raises its kind's unavailable error with the one line naming the fix; here that becomes a
TargetError with the same line."""

from __future__ import annotations

import importlib
from typing import Any

from conformance.errors import TargetError


def adapter_class(where: str, unavailable: type[Exception]) -> Any:
    """The adapter class named `where` ("module:Class"); a TargetError with its one line when importing it says
    `unavailable`."""
    module, _, cls = where.partition(":")
    try:
        return getattr(importlib.import_module(module), cls)
    except unavailable as exc:
        raise TargetError(str(exc)) from None


def require_adapter(where: str, unavailable: type[Exception]) -> None:
    """Whether the adapter named `where` can work here, by its own `require()` where it has one (a library not
    installed: the extra to install); a TargetError with its one line otherwise."""
    require = getattr(adapter_class(where, unavailable), "require", None)
    if require is not None:
        try:
            require()
        except unavailable as exc:
            raise TargetError(str(exc)) from None
