"""Shim for Beam's --setup_file staging; all metadata lives in pyproject.toml."""

from setuptools import setup

setup()
