"""Benchmarks behind `schemarag bench`: commands that print numbers (and charts), never unit tests."""
