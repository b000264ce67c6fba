"""Trainers for the built datasets (the `[train]` extra): HAtten prefetcher, SciBERT reranker, BM25 baseline.

They read the Parquet shards or the HAtten JSON layout and never import Beam or the pipelines.
"""
