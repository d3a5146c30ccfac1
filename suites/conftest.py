"""The suites' own fixture: `suite`, the preamble every suite test shares (suites.helpers.Suite)."""

from __future__ import annotations

import pytest

from conformance.targets.kinds.implementation import Implementation, ImplementationFactory
from models.profiles import Profile

from .helpers import Suite


@pytest.fixture
def suite(impl: Implementation, reference_factory: ImplementationFactory, profile: Profile) -> Suite:
    return Suite(impl, reference_factory, profile)
