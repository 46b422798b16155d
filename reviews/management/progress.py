"""A progress bar for long commands (eval_recall, embed), on stderr.

Redrawn in place on a terminal; printed in tenths otherwise, so a log stays short.
"""
from __future__ import annotations

BAR_WIDTH = 30


class ProgressBar:
    def __init__(self, stream, total: int, *, tty: bool):
        self.stream, self.total, self.tty = stream, max(total, 1), tty
        self.done = 0
        self.last_tenth = -1

    def advance(self, count: int = 1) -> None:
        self.done += count
        tenth = self.done * 10 // self.total
        if not self.tty and tenth == self.last_tenth:
            return
        self.last_tenth = tenth
        filled = min(self.done, self.total) * BAR_WIDTH // self.total
        line = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self.done}/{self.total}"
        if self.tty:
            self.stream.write("\r" + line, ending="")
            self.stream.flush()
        else:
            self.stream.write(line)

    def finish(self) -> None:
        if self.tty:
            self.stream.write("")
