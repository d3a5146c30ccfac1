"""The project's own tests share the Hypothesis profiles registered by conformance.plugin
(`ci` when CI is set, `dev` otherwise, `thorough` on request: --hypothesis-profile thorough)."""
