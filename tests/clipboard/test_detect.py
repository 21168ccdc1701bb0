"""Backend detection: the right tool per platform, clear errors with install hints."""

from __future__ import annotations

import pytest

from tcg.clipboard.backends import (
    MacBackend,
    PowerShellBackend,
    WaylandBackend,
    XclipBackend,
    XselBackend,
)
from tcg.clipboard.detect import ClipboardUnavailable, detect_backend


def which_of(*tools):
    return lambda name: f"/usr/bin/{name}" if name in tools else None


def test_x11_prefers_xclip_then_xsel():
    env = {"DISPLAY": ":0"}
    assert isinstance(detect_backend(env=env, platform="linux", which=which_of("xclip", "xsel")),
                      XclipBackend)
    assert isinstance(detect_backend(env=env, platform="linux", which=which_of("xsel")), XselBackend)


def test_wayland_uses_wl_clipboard_and_falls_back_to_xwayland():
    env = {"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}
    assert isinstance(detect_backend(env=env, platform="linux",
                                     which=which_of("wl-paste", "wl-copy", "xclip")), WaylandBackend)
    assert isinstance(detect_backend(env=env, platform="linux", which=which_of("xclip")), XclipBackend)


def test_macos_and_windows():
    assert isinstance(detect_backend(env={}, platform="darwin", which=which_of("pbpaste", "pbcopy")),
                      MacBackend)
    assert isinstance(detect_backend(env={}, platform="win32", which=which_of("powershell.exe")),
                      PowerShellBackend)


@pytest.mark.parametrize(
    ("env", "tools", "message", "hint"),
    [
        ({}, ("xclip",), "no graphical display", "DISPLAY"),
        ({"DISPLAY": ":0"}, (), "no X11 clipboard tool", "apt install xclip"),
        ({"WAYLAND_DISPLAY": "wayland-0"}, ("xclip",), "wl-paste", "apt install wl-clipboard"),
    ],
)
def test_missing_tool_or_display_is_a_clear_error(env, tools, message, hint):
    with pytest.raises(ClipboardUnavailable) as exc:
        detect_backend(env=env, platform="linux", which=which_of(*tools))
    assert message in exc.value.message
    assert hint in exc.value.hint


def test_explicit_backend_is_checked():
    with pytest.raises(ClipboardUnavailable) as exc:
        detect_backend("pbcopy", env={}, platform="linux", which=which_of("xclip"))
    assert "macOS" in exc.value.hint
    with pytest.raises(ClipboardUnavailable) as exc:
        detect_backend("xsel", env={"DISPLAY": ":0"}, platform="linux", which=which_of("xclip"))
    assert "apt install xsel" in exc.value.hint
    with pytest.raises(ClipboardUnavailable) as exc:
        detect_backend("nope", env={}, platform="linux", which=which_of())
    assert exc.value.exit_code == 2
    assert isinstance(detect_backend("xclip", env={"DISPLAY": ":0"}, platform="linux",
                                     which=which_of("xclip")), XclipBackend)
