"""The conformance suites get their implementation from the conformance plugin."""

pytest_plugins = ["conformance.plugin"]
