"""Benchmarks: ``./dev bench [NAME ...]`` (or ``python -m benchmarks``).

Each ``bench_<name>.py`` module defines ``main(quick: bool) -> None`` that
prints its figures, and ratios against a baseline measured in the same run.
"""
