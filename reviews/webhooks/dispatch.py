"""Sending webhook deliveries soon after the commit that owed them, never in the request.

Without a broker the task would run eagerly in the committing request and keep it waiting
on receivers (up to the timeout each); the background lane runs it beside the request
instead. With a broker it is published; a lost publish is picked up by the beat's sweep.
"""
import logging

from ..background import TaskName, publish_tasks, publisher, runs_in_process, task

logger = logging.getLogger(__name__)


def send_soon() -> None:
    """``on_commit`` callback of every transaction that wrote deliveries; never raises."""
    publisher.submit(_run_here if runs_in_process() else _publish)


def _run_here() -> None:
    task(TaskName.DELIVER_DUE_WEBHOOKS).delay()


def _publish() -> None:
    if not publish_tasks(TaskName.DELIVER_DUE_WEBHOOKS, [()]):
        logger.warning("webhook sweep not queued; the beat's sweep sends the deliveries")
