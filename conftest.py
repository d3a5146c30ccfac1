"""Root conftest: the conformance plugin (options, fixtures, Hypothesis profiles, verdicts) for
suites/ and the project's own tests alike; pytester for the plugin's own tests."""

pytest_plugins = ["conformance.plugin", "pytester"]
