"""The commands' rich console, made on first use.

Importing rich's console, tables and progress bars costs a tenth of a second or more on a busy
machine; every command module used to pay it at import, so even ``billops --help`` and ``billops
ledger status`` (which print nothing through rich) did. A command module holds a
:class:`LazyConsole` instead and rich is imported when something is first printed through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


class LazyConsole:
    """Stands for ``rich.console.Console(**options)``; the real one is made on first use."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    @property
    def real(self) -> Console:
        """The rich console itself (for what needs one, e.g. a progress display)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def print(self, *objects: Any, **options: Any) -> None:
        """``Console.print``."""
        self.real.print(*objects, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def new_table(*headers: str, **options: Any) -> Table:
    """``rich.table.Table(*headers, **options)``, importing rich's tables only now."""
    from rich.table import Table

    return Table(*headers, **options)
