"""CitationR's lab: the labelled review samples (`samples`, from `bench/labels/samples.csv`), their sampler
(`sampler`), the scoring of the mention rules against hand labels (`labels`), the fitting of the learned name
decision (`name_model`) and the title tagger experiment (`tagger`). It imports the library; neither the library nor
tests/ import it."""
