"""The counter callback the pure functions take (`count(name, n=1)`), with the dict it fills; and a count of the
characters context cutting squeezes."""

from __future__ import annotations

from collections.abc import Callable


def counter_dict() -> tuple[Callable[..., None], dict[str, int]]:
    """A counter callback and the dict it fills, for asserting on drop reasons."""
    counts: dict[str, int] = {}

    def count(name: str, n: int = 1) -> None:
        counts[name] = counts.get(name, 0) + n

    return count, counts


def count_squeezed(monkeypatch) -> Callable[[], int]:
    """`extractors.contexts.squeeze_whitespace` counting the characters it is given (for the rest of the test);
    returns what reads the count so far."""
    import extractors.contexts

    squeezed = 0
    squeeze = extractors.contexts.squeeze_whitespace

    def counted(text: str) -> str:
        nonlocal squeezed
        squeezed += len(text)
        return squeeze(text)

    monkeypatch.setattr(extractors.contexts, "squeeze_whitespace", counted)
    return lambda: squeezed
