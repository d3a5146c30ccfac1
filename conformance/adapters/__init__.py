"""Adapters: each makes one kind of implementation speak the `Implementation` protocol."""
