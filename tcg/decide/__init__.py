"""Deciding a command line: the policy's checks and the guard's rules, combined.

This package sits above tcg.policy (the model, the parser, the path checks) and
tcg.guard (reversible deletes, snapshots, outbound channels), which both sit
below it and never import it: the policy knows nothing of the guard, and the
guard reads the parsed line and the policy it is handed.
"""
