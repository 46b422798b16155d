"""Reads that page or filter, one module per subject; callers import the submodule."""
