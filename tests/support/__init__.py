"""What the tests share, in one place: no test imports another test, and nothing here is imported by `bench/` or
by the product. What tests and benchmarks both need is library code: the gold sets and their scoring
(`mapping.gold`, `extractors.reviews.labels`), the GROBID replay server (`extractors.clients.grobid_replay`)
and `extractors.shared_data`.

- `paths`: the repository, the bundled example corpus, the real documents (`../shared/data`);
- `counters`: a counter callback and the dict it fills, for asserting on drop reasons;
- `documents`: hand-made paragraphs and documents, and a small GROBID TEI;
- `tei_xpath`: readings of a real TEI straight from its XML, to compute what a run must write without the parser;
- `runs`: a paper database written by a test, an arsyta run on it, and the tables read back;
- `example_corpus`: what `examples/corpus/expected.json` says a run on the example corpus writes;
- `matching`: the in-memory matcher's answers, and the Beam join checked against them;
- `tiny_bert`: a tiny BERT and word-piece vocabulary trained on the spot, for the trainer tests;
- `contexts_reference`: the context cutter as it was before it was made linear, the reference the new one must equal;
- `tei_markers`: real TEI given markers in their headings and inside their markers, their text unchanged.
"""
