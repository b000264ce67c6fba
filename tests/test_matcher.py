import json
import random
from collections import Counter, defaultdict

import numpy as np
import pytest
from datasketch import MinHash
from datasketch.lsh import _optimal_param
from rapidfuzz.distance import LCSseq

from mapping.in_memory import InMemoryMatcher
from mapping.matcher import (
    MatchConfig,
    TitleIndex,
    _stable_argsort,
    checked_title,
    choose_candidate,
    could_match,
    lcs_similarity,
    rank_candidates,
    shingles,
    signatures_and_keys,
)
from mapping.minhash import SYMBOL_GROUPS, Banding, band_keys, minhash_signatures, symbol_counts
from mapping.raw_strings import normalize_pieces
from mapping.records import BibEntry, Paper, Resolution
from tests.support.counters import counter_dict

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
    assert counts == {
        "resolved_by:arxiv_id": 1,
        "resolved_by:doi": 1,
        "bib_entries_with:arxiv_id": 1,
        "bib_entries_with:doi": 1,
    }


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


GLOVE = Paper("glove", "GloVe: Global Vectors for Word Representation", year=2014, authors=("Jeffrey Pennington",))


def test_a_title_with_soft_hyphens_and_zero_width_characters_resolves_to_its_paper():
    """PDF text keeps a soft hyphen at every hyphenation point; read as word breaks they would push the title
    under the LCS threshold (44 of 51 characters)."""
    m = InMemoryMatcher([*PAPERS, GLOVE])
    hyphenated = "Glo\u00adVe: Glo\u00adbal Vec\u00adtors for Word Re\u00adpre\u00adsen\u00adta\u00adtion"
    r = m.resolve(BibEntry("b0", title=hyphenated, year=2014))
    assert (r.paper_id, r.method, r.score) == ("glove", "title", 1.0)
    r = m.resolve(BibEntry("b1", title="\ufeffGlo\u200bVe: Global Vec\u200ctors for Word Rep\u2060resentation"))
    assert (r.paper_id, r.score) == ("glove", 1.0)
    # the raw-string path (no parsed title) folds them the same way
    raw = f"Jeffrey Pennington, Richard Socher, and Christopher Manning. 2014. {hyphenated}. In EMNLP."
    r = m.resolve(BibEntry("b2", raw=raw))
    assert (r.paper_id, r.method) == ("glove", "raw_title")
    assert normalize_pieces([hyphenated, "Trans\u00adformer\u202a"]) == [
        "glove global vectors for word representation",
        "transformer",
    ]


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


def _random_titles(rng: random.Random, n: int) -> list[str]:
    words = ["graph", "neural", "attention", "of", "a", "for", "learning", "x", "citation", "deep", "2021", "z3"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(0, 9))) for _ in range(n)]


@pytest.mark.parametrize(("num_perm", "seed", "size"), [(128, 1, 3), (64, 7, 5), (16, 42, 2)])
def test_signatures_equal_datasketch_minhash_for_the_same_shingles_and_seed(num_perm, seed, size):
    titles = _random_titles(random.Random(seed), 400) + ["", "ab", "abc", "local citation recommendation"]
    ours = minhash_signatures(titles, num_perm=num_perm, seed=seed, shingle_size=size, batch_rows=97)
    for title, row in zip(titles, ours, strict=True):
        reference = MinHash(num_perm=num_perm, seed=seed)
        reference.update_batch(sorted(shingles(title, size)))
        assert np.array_equal(reference.hashvalues, row), title


def test_signatures_refuse_titles_that_are_not_normalised():
    with pytest.raises(ValueError, match="normalise"):
        minhash_signatures(["Not Normalised!"])


def test_band_keys_collide_exactly_when_a_band_is_equal():
    rng = np.random.default_rng(0)
    signatures = rng.integers(0, 2**32, size=(200, 20), dtype=np.uint64).astype(np.uint32)
    signatures[1, :5] = signatures[0, :5]  # rows 0 and 1 share band 0 only
    keys = band_keys(signatures, Banding(bands=4, rows=5))
    assert keys[0, 0] == keys[1, 0] and (keys[0, 1:] != keys[1, 1:]).all()
    # equal values in different bands give different keys
    same = np.tile(signatures[:1, :5], (1, 4))
    k = band_keys(same, Banding(4, 5))
    assert len(set(k[0].tolist())) == 4
    assert len({tuple(r) for r in keys.tolist()}) == 200
    with pytest.raises(ValueError):
        band_keys(signatures, Banding(bands=5, rows=5))


def test_default_banding_is_what_datasketch_would_choose_at_threshold_one_half():
    config = MatchConfig()
    assert (config.bands, config.rows) == _optimal_param(0.5, config.num_perm, 0.5, 0.5)


def test_in_memory_candidates_equal_a_brute_force_band_comparison():
    rng = random.Random(3)
    config = MatchConfig(num_perm=32, bands=8, rows=4, max_bucket=10_000)
    db = sorted(set(t for t in _random_titles(rng, 600) if len(t) >= 8))
    index = TitleIndex([f"p{i:04d}" for i in range(len(db))], db, [None] * len(db), config)
    queries = [t for t in _random_titles(rng, 80) if len(t) >= 8]
    q_sig, q_keys = signatures_and_keys(queries, config)
    got = set(zip(*(a.tolist() for a in index.candidate_pairs(q_keys)), strict=True))
    d_sig = index.signatures
    expected = {
        (i, j)
        for i in range(len(queries))
        for j in range(len(db))
        if any((q_sig[i, b * 4 : b * 4 + 4] == d_sig[j, b * 4 : b * 4 + 4]).all() for b in range(8))
    }
    assert got == expected and expected


def test_oversized_buckets_are_capped_in_id_order_and_counted():
    config = MatchConfig(max_bucket=3)
    papers = [Paper(f"p{i}", "Graph neural networks for citation recommendation", year=2000 + i) for i in range(5)]
    count, counts = counter_dict()
    m = InMemoryMatcher(papers, config)
    r = m.resolve(BibEntry("b0", title="Graph neural networks for citation recommendation", year=2001), count)
    assert r.paper_id == "p1"  # the year decides among the three kept
    r = m.resolve(BibEntry("b1", title="Graph neural networks for citation recommendation", year=2004), count)
    assert r.paper_id is None  # p4 was beyond the cap in every band
    assert counts["title_bucket_hits_capped"] == 2 * config.bands
    assert counts["title_candidate_pairs_skipped_by_cap"] == 2 * 2 * config.bands


def test_venue_names_and_short_titles_are_not_matched():
    papers = [Paper("p1", "Physical Review Letters", year=2020), Paper("p2", "Journal of Computational Physics")]
    count, counts = counter_dict()
    m = InMemoryMatcher(papers)
    assert len(m) == 0
    assert m.resolve(BibEntry("b0", title="Physical review letters"), count).paper_id is None
    assert m.resolve(BibEntry("b1", title="Short"), count).paper_id is None
    assert counts == {"unresolved:venue_as_title": 1, "unresolved:no_usable_title": 1}


def test_batch_resolution_equals_one_at_a_time():
    m = matcher()
    entries = [
        BibEntry("a", title="Local citation recommendation with hierarchical attention"),
        BibEntry("b", title="bert pretraining of deep bidirectional transformers for language understanding"),
        BibEntry("c", title=None),
        BibEntry("d", title="x", arxiv_id="1810.04805"),
        BibEntry("e", title="Duplicate Title Study of Things"),
    ]
    assert m.resolve_many(entries) == [m.resolve(e) for e in entries]


def test_stable_argsort_equals_numpy_stable_sort_with_runs_of_equal_keys():
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 2**64, size=5000, dtype=np.uint64)
    keys[rng.integers(0, 5000, size=2000)] = keys[rng.integers(0, 50, size=2000)]  # runs of up to ~80
    order, ranked = _stable_argsort(keys)
    assert np.array_equal(order, np.argsort(keys, kind="stable"))
    assert np.array_equal(ranked, np.sort(keys))


def test_symbol_counts_bound_the_lcs_of_every_pair():
    titles = [t for t in _random_titles(random.Random(11), 300) if t] + ["aaa " * 70, "a" * 300]  # stop at 255
    counts = symbol_counts(titles).astype(np.int64)
    assert counts[-1, 11] == 255 and counts[0].sum() == min(len(titles[0]), 255)
    below = 0
    for i in range(len(titles) - 2):
        for j in range(i, len(titles) - 2):
            common = np.minimum(counts[i], counts[j]).sum()
            lcs = round(lcs_similarity(titles[i], titles[j]) * max(len(titles[i]), len(titles[j]), 1))
            assert lcs <= common
            below += lcs < common
    assert below  # the bound is not the LCS itself


def _real_titles(shared) -> list[str]:
    titles = set()
    for path in ("arxiv/arxiv-browse_abs_derived.jsonl", "s2orc/allenai-s2orc/metadata_sample_v20200705.jsonl"):
        for line in (shared / path).read_text().splitlines():
            title = json.loads(line).get("title")
            if title:
                titles.add(" ".join(title.split()))
    return sorted(titles)


def _cited_as(title: str, rng: random.Random) -> str:
    """How a citation might spell a title."""
    words = title.split()
    kind = rng.randrange(6)
    if kind == 0:
        return title.upper() + "."
    if kind == 1 and len(words) > 3:
        del words[rng.randrange(1, len(words))]
    if kind == 2:
        i = rng.randrange(len(words))
        words[i] = words[i][:-1] if len(words[i]) > 3 else words[i]
    if kind == 3:
        return "{" + title + "}. arXiv preprint arXiv:2101.00001"
    if kind == 4:
        return title[: int(len(title) * 0.93)]
    return " ".join(words)


def _groups_allow(a: str, b: str, config: MatchConfig) -> bool:
    """The symbol-group bound written out: per group, the smaller of the two titles' counts; a group both hold
    15 or more of bounds nothing."""
    common = 0
    for group in SYMBOL_GROUPS:
        smaller = min(sum(a.count(s) for s in group), sum(b.count(s) for s in group))
        if smaller >= 15:
            return True
        common += smaller
    return common >= (config.min_similarity - 1e-9) * max(len(a), len(b))


def _plain_resolutions(papers: list[Paper], entries: list[BibEntry], config: MatchConfig, count) -> list[Resolution]:
    """The title-matching rules written out one reference at a time, with dicts and loops: buckets of
    equal band keys capped at the first `max_bucket` papers in id order, the length and symbol-group bounds,
    the best `max_candidates` by bands proposing them then paper id, the LCS, `choose_candidate`."""
    ids, titles, years = [], [], []
    for paper in sorted(papers, key=lambda p: p.paper_id):
        title = checked_title(paper.title, config)[0]
        if title is not None and paper.paper_id not in ids:
            ids.append(paper.paper_id)
            titles.append(title)
            years.append(paper.year)
    _, keys = signatures_and_keys(titles, config)
    buckets = defaultdict(list)
    for j, row in enumerate(keys.tolist()):
        for band, key in enumerate(row):
            buckets[band, key].append(j)
    resolutions = []
    for entry in entries:
        title, problem = checked_title(entry.title, config)
        if title is None:
            count(f"unresolved:{problem}", 1)
            resolutions.append(Resolution(entry.bib_id, None, "unresolved"))
            continue
        _, (row,) = signatures_and_keys([title], config)
        proposing = Counter()
        for band, key in enumerate(row.tolist()):
            bucket = buckets.get((band, key), [])
            if len(bucket) > config.max_bucket:
                count("title_bucket_hits_capped", 1)
                count("title_candidate_pairs_skipped_by_cap", len(bucket) - config.max_bucket)
            proposing.update(bucket[: config.max_bucket])
        candidates = sorted(
            j
            for j in proposing
            if could_match(len(title), len(titles[j]), config) and _groups_allow(title, titles[j], config)
        )
        bands = [proposing[j] for j in candidates]
        kept = [candidates[k] for k in rank_candidates([ids[j] for j in candidates], bands, config)]
        resolutions.append(
            choose_candidate(
                entry.bib_id,
                entry.year,
                [ids[j] for j in kept],
                [lcs_similarity(title, titles[j]) for j in kept],
                [years[j] for j in kept],
                config,
                count,
            )
        )
    return resolutions


@pytest.mark.parametrize(
    "config",
    [MatchConfig(), MatchConfig(num_perm=32, bands=8, rows=4, max_candidates=3, max_bucket=2)],
    ids=["default", "crowded"],
)
def test_resolutions_and_counts_equal_the_rules_written_out_on_real_titles(shared, config):
    """Real titles, near duplicates of them in the database (a word dropped, two swapped: crowded buckets,
    ties, years) and citation-style references, resolved by `InMemoryMatcher` (prefix tables, vectorised
    candidates, the symbol-count bound) and by the plain rules: the same resolutions and counts."""
    rng = random.Random(14)
    real = _real_titles(shared)
    papers = []
    for i, title in enumerate(real):
        papers.append(Paper(f"p{i:05d}a", title, year=2000 + i % 20))
        words = title.split()
        if len(words) > 4:
            j = rng.randrange(len(words) - 1)
            papers.append(Paper(f"p{i:05d}b", " ".join(words[:j] + words[j + 1 :]), year=2000 + i % 7))
            papers.append(Paper(f"p{i:05d}c", " ".join(words[:j] + [words[j + 1], words[j]] + words[j + 2 :])))
    cited = rng.sample(papers, 1500)
    entries = [BibEntry(f"b{k}", title=_cited_as(p.title, rng), year=p.year) for k, p in enumerate(cited)]
    entries += [BibEntry("venue", title="Physical Review Letters"), BibEntry("short", title="On it")]
    count, counts = counter_dict()
    ours = InMemoryMatcher(papers, config).resolve_many(entries, count)
    plain_count, plain_counts = counter_dict()
    assert ours == _plain_resolutions(papers, entries, config, plain_count)
    assert counts == plain_counts
    assert counts["resolved_by:title"] > 1000 and counts.get("unresolved:ambiguous_title")
    assert ("title_bucket_hits_capped" in counts) == (config.max_bucket == 2)
