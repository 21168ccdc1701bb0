"""tcg — a guard station for workstations where AI coding agents run."""

__version__ = "0.1.0"

# Whether site.main() has run in this process (or a process it was forked from):
# it has at start unless the interpreter ran with -S. "site" in sys.modules does
# not say so: under -S something may import site without running main().
_site_added = not __import__("sys").flags.no_site
_site_lock = __import__("_thread").allocate_lock()  # a session station adds them from a thread too


def add_site_packages() -> None:
    """Add site-packages (``site.main()``) once, for a process started with ``-S``
    (the hook's lean start): before loading anything that may live there."""
    global _site_added
    with _site_lock:
        if _site_added:
            return
        import site

        site.main()
        _site_added = True
