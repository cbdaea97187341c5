"""Test settings: hypothesis runs deterministically, with a profile for long fuzzing."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fuzz",
    deadline=None,
    max_examples=int(os.environ.get("CHATMEND_FUZZ_EXAMPLES", "20000")),
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("CHATMEND_HYPOTHESIS_PROFILE", "default"))
