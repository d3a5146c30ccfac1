"""Judging: the verdict vocabulary, the observables, clause-tagged checks, the pure judge, expectations, pinned
draws, the state of a run and clause coverage."""
