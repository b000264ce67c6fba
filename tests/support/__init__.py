"""What the tests share, in one place: no test imports another test or `bench/`, and nothing outside `tests/`
imports this package.

- `grobid_replay`: a loopback server speaking GROBID's API that replays real TEI, with injected faults;
- `paths`: the repository, the bundled example corpus, the real documents (`../shared/data`);
- `counters`: a counter callback and the dict it fills, for asserting on drop reasons;
- `documents`: hand-made paragraphs and documents, and a small GROBID TEI;
- `tei_xpath`: readings of a real TEI straight from its XML, to compute what a run must write without the parser;
- `runs`: a paper database written by a test, an arsyta run on it, and the tables read back;
- `example_corpus`: what `examples/corpus/expected.json` says a run on the example corpus writes;
- `matching`: the in-memory matcher's answers, and the Beam join checked against them;
- `tiny_bert`: a tiny BERT and word-piece vocabulary trained on the spot, for the trainer tests;
- `contexts_reference`: the context cutter by its definition, one marker at a time, that the linear one must equal;
- `results`: a trainer's results file read as recall curves;
- `review_notes`: review files written by a test, and the S2ORC records they cite;
- `labelled_reviews`: the lab's label files read as plain data;
- `real_bibliography`: the real bib entries as references and as a paper database, for the join checks;
- `imports`: every import of the tree, read with ast, and the house rules they keep;
- `tei_markers`: real TEI given markers in their headings and inside their markers, their text unchanged.
"""
