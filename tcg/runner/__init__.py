"""The station agent's runner: run a child in a PTY or through pipes, stream its
output through an output filter (the masker), and return its exit status.

Submodules stay import-light: ``station`` is the `tcg_shell run-line` hot path.
"""
