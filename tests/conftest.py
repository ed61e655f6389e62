"""Test-wide settings: the rule cache goes to a temporary folder, never the user's."""

from __future__ import annotations

import os
import tempfile

_CACHE = tempfile.mkdtemp(prefix="gpudoctor-test-cache-")
os.environ["GPUDOCTOR_CACHE_DIR"] = _CACHE
os.environ.pop("GPUDOCTOR_NO_CACHE", None)
os.environ.pop("GPUDOCTOR_FAKE_NVML", None)
