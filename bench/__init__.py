"""The lab: gold sets, evaluation harnesses and benchmarks. It imports the library; nothing imports it."""
