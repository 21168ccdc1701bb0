"""Threads and locks from ``_thread`` (see tcg._lean): the hot paths start one
helper thread and hand work over with two locks."""

from __future__ import annotations

from _thread import allocate_lock, start_new_thread

__all__ = ["allocate_lock", "start_new_thread"]
