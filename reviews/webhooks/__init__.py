"""Webhooks for host apps (SPEC §7b).

- ``addresses``: which URLs may receive events (the SSRF guard), checked at registration
  and again at every delivery, after DNS resolution;
- ``signing``: the Standard Webhooks signature, through the ``standardwebhooks`` package;
- ``outbox``: the events a change owes, written in the change's own transaction;
- ``delivery``: sending them after the commit, retrying with backoff, recording attempts;
- ``endpoints``: the audited services that register, remove and re-send.
"""
