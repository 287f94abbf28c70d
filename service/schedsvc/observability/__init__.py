"""Metrics and traces: the engine's Observer hooks made visible."""
