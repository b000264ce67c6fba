from datasketch import MinHash
from rapidfuzz.distance import LCSseq

from extractors.records import BibEntry, Paper
from mapping.matcher import InMemoryMatcher, MatchConfig, lcs_similarity, shingles
from tests.conftest import counter_dict

PAPERS = [
    Paper(
        "1810.04805",
        "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
        arxiv_id="1810.04805",
        year=2018,
    ),
    Paper("doi:10.1145/3292500", "Graph Neural Networks for Citation Recommendation", doi="10.1145/3292500", year=2019),
    Paper("2001.00001", "Local Citation Recommendation with Hierarchical Attention", year=2020),
    Paper("2001.00002", "Local Citation Recommendation with Hierarchical Attention Networks", year=2021),
    Paper("1999.00001", "Duplicate Title Study of Things", year=2019),
    Paper("1999.00002", "Duplicate Title Study of Things", year=2020),
]


def matcher():
    return InMemoryMatcher(PAPERS)


def test_identifiers_come_first():
    count, counts = counter_dict()
    r = matcher().resolve(BibEntry("b0", title="something else entirely", arxiv_id="1810.04805"), count)
    assert (r.paper_id, r.method) == ("1810.04805", "arxiv_id")
    r = matcher().resolve(BibEntry("b1", title=None, doi="10.1145/3292500"), count)
    assert (r.paper_id, r.method) == ("doi:10.1145/3292500", "doi")
    assert counts == {"resolved_by:arxiv_id": 1, "resolved_by:doi": 1}


def test_title_match_tolerates_citation_noise_but_not_a_different_paper():
    m = matcher()
    noisy = BibEntry("b0", title="Bert: pre-training of deep bidirectional transformers for language understandng.")
    assert m.resolve(noisy).paper_id == "1810.04805"
    # a near title of a *different* paper must pick the exact one, not the longer variant
    exact = m.resolve(BibEntry("b1", title="Local citation recommendation with hierarchical attention"))
    assert exact.paper_id == "2001.00001"
    longer = m.resolve(BibEntry("b2", title="Local Citation Recommendation with Hierarchical-Attention Networks"))
    assert longer.paper_id == "2001.00002"
    assert m.resolve(BibEntry("b3", title="A completely unrelated title about bees")).paper_id is None


def test_ties_between_papers_are_ambiguous_unless_the_year_decides():
    count, counts = counter_dict()
    m = matcher()
    r = m.resolve(BibEntry("b0", title="Duplicate title study of things"), count)
    assert (r.paper_id, r.method) == (None, "ambiguous")
    r = m.resolve(BibEntry("b1", title="Duplicate title study of things", year=2020), count)
    assert r.paper_id == "1999.00002"
    assert counts == {"unresolved:ambiguous_title": 1, "resolved_by:title": 1}


def test_lcs_is_rapidfuzz_subsequence_normalised_by_the_longer_title():
    assert lcs_similarity("abcd", "abxd") == LCSseq.normalized_similarity("abcd", "abxd") == 0.75
    assert lcs_similarity("abc", "abcdef") == 0.5


def test_signatures_are_datasketch_minhash_of_character_shingles():
    config = MatchConfig()
    m = matcher()
    title = "local citation recommendation with hierarchical attention"
    reference = MinHash(num_perm=config.num_perm, seed=config.seed)
    for s in shingles(title, config.shingle_size):
        reference.update(s)
    assert (m._minhash(title).hashvalues == reference.hashvalues).all()
    assert len(m.candidates(title)) <= config.max_candidates
