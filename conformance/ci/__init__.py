"""Continuous integration: the GitHub Action's step (github.py), run by action.yml at the repository's root."""
