"""conformance package."""
