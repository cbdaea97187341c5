"""Test settings: hypothesis runs deterministically; CI's profile runs a share of each property's examples
(`tests.strategies.examples`), `thorough` all of them, `fuzz` many more with random seeds."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fuzz",
    deadline=None,
    max_examples=int(os.environ.get("CHATMEND_FUZZ_EXAMPLES", "20000")),
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("CHATMEND_HYPOTHESIS_PROFILE", "default"))
