"""Seeded faults: mutants of the reference model, client and codec faults, and the kill table that proves the
suites fail on each.

Each mutant is the reference model with ONE small, realistic deviation of the kind Kafka-compatible
implementations (or Kafka itself, in some release) have shipped. It declares the clause IDs
(models/clauses.py) whose checks must catch it; the kill table (conformance/commands/kill_table.py) runs the suites
tagged with those clauses against it and fails if it survives.

A mutant overrides one seam: a small method of the model named for the spec step it replaces (each cites
its rule in docs/rules.md), in a subclass the mutant's cluster uses:
- `Cluster` (`MutantCluster`): the leader's produce path (`validation_inputs`, `pre_validate`,
  `append_time`, `post_validate`), `fetch_view` (down-conversion) and `log_class`;
- `PartitionLog`: `_retention_reference`, `_shields_later_segments` (IDX-10), `segments_searched_for`,
  `timestamp_search_start` (LO-2), `append_as_follower` (REP-1);
- `Segment` / `TimeIndex`: `_raise_max`, `_time_index_entry_offset`, `_roll_ms`, `_age_without_roll_base`,
  `time_waited_for_roll` (IDX-2, IDX-5, IDX-9), `_supersedes_last_entry`, `is_full`, `lookup` (IDX-1/3/7);
- `DefaultBatch.record_timestamp` / `LegacyBatch.inner_timestamp`: the read rule (FMT-7, FMT-12);
- a tweaked `Profile` for the cluster (a fault that is exactly "this field has another value"), while
  the implementation still reports the true profile and the model's capabilities;
- `MutantImplementation`: a response-level fault post-processing one answer (produce, ListOffsets).

A fault that is a small function of what one seam handles is a module-level function its row names instead of a
subclass: `sent`, `inputs` and `stored` (what the leader validates, with which configuration and profile, and what
it stores, on the topics of one timestamp type where `topics` says so), `produced` and `offsets` (the Produce and
ListOffsets answers).

A mutant runs by default under `Mutant.profile`: the first of kafka-4.0, 3.9, 2.8, 0.10 in which all its
declared clauses apply (models.clauses); `profiles` is stated only where the fault cannot be seeded into
some of those profiles, with the reason next to it (`mutant.V2_PROFILES`, the profiles of a fault in v2 batches,
states it once for all such faults).

One module per area, each registering its mutants in `MUTANTS` on import: `validation` (VAL-*),
`compression` (CMP-*), `format_view` (FMT-*, CON-*), `time_index` (IDX-*), `list_offsets` (LO-*),
`conversion` (CNV-*), `replication` (REP-*), `client_faults` (the reference client's faults, kind CLIENT),
`codec_faults` (the reference codec's faults, kind CODEC);
`mutant` holds the registry, the seams and shared helpers.

The faults register themselves into the targets on import (conformance.targets.kinds.seeding): the target
registry, the openers of the model and the codecs and the client targets find a mutant there, so the targets never
import the faults; whoever names a mutant imports this package first.

Everything is picklable by reference: `MutantFactory` holds names only, and `Mutant.build` is a frozen value (a
broker mutant's `ModelBuild`, a codec mutant's `CodecBuild`) or a module-level function.
"""

from conformance.faults import (
    client_faults,
    codec_faults,
    compression,
    conversion,
    format_view,
    list_offsets,
    replication,
    time_index,
    validation,
)
from conformance.faults.client_faults import client_fault
from conformance.faults.mutant import MUTANTS, Mutant, MutantCluster, MutantFactory, MutantImplementation
from conformance.targets.kinds.seeding import SeededFaults, register_seeded_faults

AREAS = (
    validation, compression, format_view, time_index, list_offsets, conversion, replication, client_faults,
    codec_faults,
)

register_seeded_faults(SeededFaults(mutants=MUTANTS, factory=MutantFactory, client=client_fault))

__all__ = ["AREAS", "MUTANTS", "Mutant", "MutantCluster", "MutantFactory", "MutantImplementation"]
