"""A vendor rule that stops claiming a name must not leave its values unmasked: when the IBM
rules narrowed their key names (a left boundary so `soundcloud_token` is not IBM's; a COS
secret only under a cos / hmac / access name), the values under the names they gave up still
have to be found, by the generic rules."""

from __future__ import annotations

import re

import pytest

from tcg.detect.engine import load_detector

# (text, the IBM rule that must not name it); the values are random, generated for this test.
GIVEN_UP = [
    ('soundcloud_token = "m9Lfn2Lb9_maUw6_EjXVIgoNBBDtYljukKMUHnqhWilq"', "ibm-cloud-api-key"),
    ("icloud_password: SWHwc9O_pGducQHMm-PFm5gMqGo0dWry5ZiuFziMUY8s", "ibm-cloud-api-key"),
    ('SECRET_KEY = "0be92d05637b2f9a96c15b2aac44c75471bf68da0bac5848"', "ibm-cos-hmac-secret"),
    ("SECRET_KEY=20f4dd544396186fef47ed5f1c209d2efb943e82c16fb2cd", "ibm-cos-hmac-secret"),
    ('app.config["secret_key"] = "cf9e59440dd7ccacc56e59f48f2c8d5ccbfc522acd7e9ff4"', "ibm-cos-hmac-secret"),
    ("  secretkey: 0be92d05637b2f9a96c15b2aac44c75471bf68da0bac5848", "ibm-cos-hmac-secret"),
]


@pytest.fixture(scope="module")
def det():
    return load_detector()


@pytest.mark.parametrize(("text", "vendor"), GIVEN_UP)
def test_value_under_a_given_up_name_is_still_masked(det, text: str, vendor: str) -> None:
    value = re.split(r"[ =]", text)[-1].strip("\"'")
    found = [f for f in det.find(text) if f.category == "secret"]
    assert any(text[f.start:f.end] == value for f in found), found
    assert vendor not in {f.rule_id for f in det.find(text, overlapping=True)}
