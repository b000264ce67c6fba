"""Gold sets built from the real documents, to score the matchers against."""
