"""Harnesses that drive the real agent CLIs offline, for the tests and the benchmarks (never
shipped in the wheel): each CLI is pointed at a scripted model API on 127.0.0.1 that records
every request it makes (``api``: the recording server; ``claude_code``: Claude Code and the
Anthropic Messages API). Benchmarks import them with the repository root on ``sys.path``."""
