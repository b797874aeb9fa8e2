"""A recorder of emitted lines: pass it where the code takes `emit`, then read `lines` or `text()`."""


class Rec:
    def __init__(self):
        self.lines = []

    def __call__(self, line):
        self.lines.append(line)

    def text(self):
        return "\n".join(self.lines)
