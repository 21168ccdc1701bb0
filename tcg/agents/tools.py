"""What each agent tool touches, by tool name (Claude Code and Qwen Code names).

Measured with Claude Code 2.1.328 and Qwen Code 0.24.4 (tests/agents): the
input fields below are what the CLIs send in a hook's ``tool_input``. A tool
not listed here still goes through every step that does not need to know it
(its output is masked; its text arguments are checked when it is an MCP tool).
"""

from __future__ import annotations

READ = "read"
WRITE = "write"
READ_WRITE = "read-write"
LIST = "list"

# tool → ((input field holding a path, access), …)
FILE_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    # Claude Code
    "Read": (("file_path", READ),),
    "NotebookRead": (("notebook_path", READ),),
    "Write": (("file_path", WRITE),),
    "Edit": (("file_path", READ_WRITE),),  # its response echoes the original file
    "MultiEdit": (("file_path", READ_WRITE),),
    "NotebookEdit": (("notebook_path", READ_WRITE),),
    "Grep": (("path", READ),),
    "Glob": (("path", LIST),),
    "LS": (("path", LIST),),
    # Qwen Code
    "read_file": (("file_path", READ), ("absolute_path", READ)),
    "write_file": (("file_path", WRITE),),
    "edit": (("file_path", READ_WRITE),),
    "grep_search": (("path", READ),),
    "glob": (("path", LIST),),
    "list_directory": (("path", LIST),),
}

# tool → ((input field holding a file-name pattern, access), …): judged by what the
# pattern could match, at any depth (a search filter), relative to the tool's path.
PATTERN_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "Grep": (("glob", READ),),
    "Glob": (("pattern", LIST),),
    "grep_search": (("glob", READ), ("include", READ)),
    "glob": (("pattern", LIST),),
}

# tool → ((input field holding a list of paths or patterns, access), …)
LIST_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "read_many_files": (("paths", READ), ("include", READ)),
}

# tool → the input field holding a shell command line
SHELL_FIELDS: dict[str, str] = {"Bash": "command", "run_shell_command": "command"}

# Outbound channels: where a tool's arguments go (decided by OUTBOUND_CHANNELS steps).
CHANNELS: dict[str, str] = {
    "WebFetch": "web", "WebSearch": "web", "web_fetch": "web", "web_search": "web",
    "Task": "subagent", "Agent": "subagent", "task": "subagent",
    "Write": "file-write", "Edit": "file-write", "MultiEdit": "file-write", "NotebookEdit": "file-write",
    "write_file": "file-write", "edit": "file-write",
}
MCP_PREFIX = "mcp__"

# Tools whose arguments are checked like an MCP request (protected resource names).
REQUEST_CHECKED = frozenset({"Task", "Agent", "task"})


def channel_of(tool: str) -> str | None:
    """The outbound channel a tool's arguments leave through, if any."""
    if tool.startswith(MCP_PREFIX):
        return "mcp"
    return CHANNELS.get(tool)


def is_request_checked(tool: str) -> bool:
    return tool.startswith(MCP_PREFIX) or tool in REQUEST_CHECKED


def is_trivial_pattern(pattern: str) -> bool:
    """A file-name pattern that matches every name (``*``, ``**``, ``*?``)."""
    return not pattern.replace("*", "").replace("?", "").strip()
