"""What the app keeps in the cache, and what happens when the cache is away.

The cache holds API rate-limit counts and the reviewers' cached figures. It may be Redis
(``MEMORY_CACHE_URL``), and a Redis outage must not become an outage of the app: a rate
limit that cannot be counted is not applied, a figure that cannot be cached is computed,
and each such miss is logged.
"""
from __future__ import annotations

import logging
from typing import Callable, TypeVar

import redis
from django.core.cache import cache

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Django's Redis backend lets the client's errors through (refused, reset, timed out).
CACHE_ERRORS = (redis.exceptions.RedisError, OSError)


def cached(key: str, compute: Callable[[], T], timeout: float) -> T:
    """``compute()``'s value, from the cache when it holds it; computed when the cache fails."""
    try:
        return cache.get_or_set(key, compute, timeout)
    except CACHE_ERRORS:
        logger.warning("cache unavailable: %s computed without it", key, exc_info=True)
        return compute()
