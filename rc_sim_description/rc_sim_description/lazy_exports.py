"""A package's public names, imported from their modules on first use (PEP 562).

A subpackage ``__init__`` lists its public surface in ``__all__`` without importing every module
up front (several compile numba kernels or load matplotlib): ``from pkg import Name`` imports the
one module that defines ``Name`` when it is first asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import importlib
from typing import Any

__all__ = ['lazy_exports']


def lazy_exports(package: str, table: Mapping[str, tuple[str, ...]]
                 ) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for ``package`` from ``{module: (names, ...)}``.

    ``__getattr__(name)`` imports ``package.module`` and returns its ``name``; a submodule asked
    for by name is imported as usual; anything else is an ``AttributeError``.
    """
    owner = {name: module for module, names in table.items() for name in names}
    names = sorted(owner)

    def get_attribute(name: str) -> Any:
        module = owner.get(name)
        if module is None:
            try:
                return importlib.import_module(f'{package}.{name}')
            except ModuleNotFoundError as exc:
                if exc.name != f'{package}.{name}':
                    raise
                raise AttributeError(f'module {package!r} has no attribute {name!r}') from None
        return getattr(importlib.import_module(f'{package}.{module}'), name)

    def list_names() -> list[str]:
        return sorted({*names, *table})

    return names, get_attribute, list_names
