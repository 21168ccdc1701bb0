"""The macOS Seatbelt profile, checked as text: sandbox-exec cannot run on the Linux CI."""

from __future__ import annotations

import re

from tcg.policy.load import load_policy
from tcg.sandbox.seatbelt import build_profile, glob_to_regex, profile_for, wrap_argv


def test_the_exact_profile_for_a_small_policy():
    text = build_profile([".env", ".env.*", "id_rsa*"], [".ssh"], ["~/.config/gh/hosts.yml", "~/.config/gcloud/*"],
                         [".env.example", "*.pub"], ["/Users/u/Library/Application Support/tcg/key"], "/Users/u")
    assert text == (
        '(version 1)\n'
        ';; tcg: the agent\'s view. Everything is allowed except the contents of secret stores.\n'
        '(allow default)\n'
        '(deny file-read-data file-write*\n'
        '  (regex #"(^|/)\\.[eE][nN][vV]$")\n'
        '  (regex #"(^|/)\\.[eE][nN][vV]\\.[^/]*$")\n'
        '  (regex #"(^|/)[iI][dD]_[rR][sS][aA][^/]*$")\n'
        '  (regex #"(^|/)\\.[sS][sS][hH]/")\n'
        '  (literal "/Users/u/.config/gh/hosts.yml")\n'
        '  (regex #"^/[uU][sS][eE][rR][sS]/[uU]/\\.[cC][oO][nN][fF][iI][gG]/[gG][cC][lL][oO][uU][dD]/.*$")\n'
        '  (literal "/Users/u/Library/Application Support/tcg/key"))\n'
        ';; exceptions (templates, public keys): the last matching rule wins\n'
        '(allow file-read-data file-write*\n'
        '  (regex #"(^|/)\\.[eE][nN][vV]\\.[eE][xX][aA][mM][pP][lL][eE]$")\n'
        '  (regex #"(^|/)[^/]*\\.[pP][uU][bB]$"))\n'
    )


def test_glob_translation_matches_like_fnmatch_case_insensitively():
    rx = re.compile("(^|/)" + glob_to_regex("id_ed25519*", crosses_slash=False) + "$")
    assert rx.search("/Users/u/.ssh/ID_ED25519")
    assert rx.search("/Users/u/.ssh/id_ed25519.old")
    assert not rx.search("/Users/u/.ssh/id_ed25519/x")
    cls = re.compile("^" + glob_to_regex("key[0-9]", crosses_slash=False) + "$")
    assert cls.match("key7") and not cls.match("keyx")
    quoted = build_profile([], [], ['/tmp/we"ird'], [], [], None)
    assert '(literal "/tmp/we\\"ird")' in quoted


def test_the_default_policy_profile_covers_every_store_pattern_and_wraps_argv():
    policy = load_policy(include_repo=False)
    text = profile_for(policy, "/Users/u", "/Users/u/.local/state/tcg/key")
    for pattern in policy.model.secret_stores.basenames:
        assert f'(regex #"(^|/){glob_to_regex(pattern, crosses_slash=False)}$")' in text
    assert text.count("(deny ") == 1 and text.index("(deny ") < text.index("(allow file-read-data")
    assert '(literal "/Users/u/.local/state/tcg/key")' in text
    assert text.count("(") == text.count(")")
    argv = wrap_argv(text)(["/bin/zsh", "-c", "make test"])
    assert argv == ["/usr/bin/sandbox-exec", "-p", text, "/bin/zsh", "-c", "make test"]
