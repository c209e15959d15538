"""Test harnesses: scripted servers and helpers that drive real third-party clients offline."""
