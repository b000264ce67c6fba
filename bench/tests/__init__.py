"""Checks of the lab itself: the gold-set builders and the evaluations, on the real documents."""
