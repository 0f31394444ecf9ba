"""Sphinx configuration: the documentation site (`make docs`; CI builds it with -W).

Pages are MyST Markdown. `_ext/openapi_page.py` writes the API reference from the app's own
OpenAPI schema at every build, so the reference can never drift from the code;
`_ext/config_reference.py` writes the configuration reference from courseops/settings/env.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]

project = "courseops"
author = "the courseops engineers"
copyright = "2026, " + author

extensions = ["myst_parser", "openapi_page", "config_reference"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "screens/README.md"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = "courseops"
html_static_path: list[str] = []
html_show_sourcelink = False
# No CDN: furo ships its fonts and scripts with the build.
