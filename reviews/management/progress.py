"""A progress bar for long commands (eval_extraction, eval_recall, embed), on stderr.

Redrawn in place on a terminal; printed in tenths otherwise, so a log stays short.
"""
from __future__ import annotations

BAR_WIDTH = 30


class ProgressBar:
    def __init__(self, stream, total: int, *, tty: bool | None = None):
        # Django's OutputWrapper answers isatty() for the stream it wraps.
        self.stream, self.total = stream, max(total, 1)
        self.tty = stream.isatty() if tty is None else tty
        self.done = 0
        self.last_tenth = -1

    def advance(self, count: int = 1) -> None:
        self.update(self.done + count)

    def update(self, done: int) -> None:
        self.done = done
        tenth = done * 10 // self.total
        if not self.tty and tenth == self.last_tenth:
            return
        self.last_tenth = tenth
        filled = min(done, self.total) * BAR_WIDTH // self.total
        line = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{self.total}"
        if self.tty:
            self.stream.write("\r" + line, ending="")
            self.stream.flush()
        else:
            self.stream.write(line)

    def finish(self) -> None:
        if self.tty:
            self.stream.write("")
