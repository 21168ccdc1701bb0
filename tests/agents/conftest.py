"""Fixtures shared with the launcher's tests: fake agents on a temp PATH, compiled detectors."""

from tests.launcher.conftest import _compiled_detectors, _seed_detector_cache, agent_bin, launch_env  # noqa: F401
