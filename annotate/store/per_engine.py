"""State a process keeps per database engine (the keypress checkpoints waiting, the open batch
of group commit), made on first use and gone with the engine."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from sqlalchemy import Engine

T = TypeVar("T")


class PerEngine(Generic[T]):
    """`of(engine)`: this process's T for `engine` (made by `make` the first time, by one
    thread); `get(engine)`: it, or None before the first `of`."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._items: weakref.WeakKeyDictionary[Engine, T] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def of(self, engine: Engine) -> T:
        with self._lock:
            item = self._items.get(engine)
            if item is None:
                item = self._items[engine] = self._make()
            return item

    def get(self, engine: Engine) -> T | None:
        return self._items.get(engine)
