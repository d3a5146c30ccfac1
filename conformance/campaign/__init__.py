"""The campaign engine: a table of tasks (target x suite x profile x seed) executed in Spark tasks, rows written as
Parquet as tasks finish, and the conformance matrix aggregated with Spark SQL; with the one runner of Spark tasks
(`runner.py`), which the broker-level differential (conformance/oracles/broker_level/) runs its tasks on too."""
