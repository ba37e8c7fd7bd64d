"""Whether a server folder's modules compile: a SyntaxError stops the server before it reads a line, so a check says
which file and which line, instead of judging the replies of a server that never started."""

from pathlib import Path


def syntax_problem(folder):
    """'file, line N: SyntaxError: ...' for the first module of `folder` (by name) that does not compile, else None."""
    for path in sorted(Path(folder).glob("*.py")):
        try:
            compile(path.read_bytes(), path.name, "exec")
        except SyntaxError as error:  # IndentationError and TabError are SyntaxErrors too
            return f"{path.name}, line {error.lineno}: {type(error).__name__}: {error.msg}"
        except (OSError, ValueError):  # unreadable, or a NUL byte: the server's own start will say so
            continue
    return None
