"""Running code that starts its own asyncio loop from a test.

In the whole suite the browser tests' Playwright (sync API) keeps an event loop running in
the main thread, and ``asyncio.run`` refuses to start a second one there. A thread of its
own has no loop, whichever tests ran before.
"""
import threading


def call_in_thread(function):
    """Call ``function()`` in a new thread, wait for it, and return its result or raise its error."""
    outcome = {}

    def target():
        try:
            outcome["value"] = function()
        except BaseException as error:  # handed back to the test's thread below
            outcome["error"] = error

    thread = threading.Thread(target=target, name="own-event-loop")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
