"""The Spark suite (see conftest.py)."""
