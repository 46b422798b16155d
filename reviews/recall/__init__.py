"""Recall: the policy query, the service that records each recall, its records and the read path's helpers."""
