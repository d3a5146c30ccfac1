"""The `kafka-conformance` subcommands, one module each; conformance.cli builds the parser."""
