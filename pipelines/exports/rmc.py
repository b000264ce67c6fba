"""RMC's layout (ChainsawM/RMC @ 89dc46ea), from a CitationR dataset. data/{train,val,test}.json queries,
data/base/papers.json whose bib_refs are ids into bibref2info.json, and data/extended/ with extension
candidates; title-only positives only when asked for. Beside them, RMC's run configurations with top-K values kept
within each version's papers. Details: docs/exports.md."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import itemgetter

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from mapping.titles import normalize_title
from pipelines.exports.configs import Config, ConfigFiles, answerable_k, k_list_within, within
from pipelines.exports.files import (
    DROPPED,
    PRESENT,
    SPLIT_PREFIXES,
    Entry,
    JsonFile,
    json_text,
    list_entry,
    table_rows,
)
from pipelines.joins import FanOutJoin

RMC_SPLIT_FILES = {"train": "data/train.json", "validation": "data/val.json", "test": "data/test.json"}


def rmc_bibref_id(submission_id: str, position: int) -> str:
    """A bibliography entry's id: the submission and the entry's place in its reference list."""
    return f"{submission_id}#ref{position}"


def rmc_bib_refs(
    submission_id: str, reference_titles: Sequence[str], recommended_titles: Iterable[str]
) -> list[tuple[str, dict[str, object]]]:
    """The submission's bibliography as RMC's bibref2info entries. `already_recommended` marks an entry whose
    title (normalised) is one the reviewers recommended to this submission: RMC's loaders
    (dataset.py::get_paper_ref_lst, rankers.py::get_bib_titles) leave those out of the query, so the answer
    does not leak into it."""
    recommended = {normalize_title(t) for t in recommended_titles} - {""}
    return [
        (
            rmc_bibref_id(submission_id, k),
            {"title": title, "already_recommended": normalize_title(title) in recommended},
        )
        for k, title in enumerate(t for t in reference_titles if t)
    ]


RMC_FILES = (
    *(JsonFile(name, "list") for name in RMC_SPLIT_FILES.values()),
    JsonFile("data/base/papers.json"),
    JsonFile("data/base/bibref2info.json"),
    JsonFile("data/extended/papers.json", optional=True),
    JsonFile("data/extended/bibref2info.json", optional=True),
)
"""RMC's files; `data/extended/` only with extension candidates (`--candidate_years`)."""


class _KeptPositiveFn(beam.DoFn):
    """A positive row to (paper id, (submission, its title)), or a dropped count when it is title-only (unresolved)
    and those are left out."""

    def __init__(self, include_unresolved: bool) -> None:
        self.include_unresolved = include_unresolved

    def process(self, row: dict) -> Iterator:
        if not (row["resolved"] or self.include_unresolved):
            yield TaggedOutput(DROPPED, ("dropped_positives:unresolved", 1))
        else:
            yield row["paper_id"], (row["submission_id"], row["title"] or "")


def _candidate(row: dict) -> tuple[str, tuple[str, str, str]]:
    return row["paper_id"], (row["title"] or "", row["abstract"] or "", row["role"] or "")


def _rmc_paper(title: str, abstract: str) -> dict[str, object]:
    return {"title": title, "abstract": abstract, "bib_refs": []}


class _PositivePapersFn(beam.DoFn):
    """A paper with the kept positives that name it and its candidate rows: its record (the main output; the first
    row in order, where the rows disagree), each submission's `recorded` (submission, paper) and the candidate titles as
    titles the submission's reviewers recommended (`titles`); a paper no kept positive names is an `extension`
    paper when a row says so."""

    def process(self, element) -> Iterator:
        paper_id, grouped = element
        rows = sorted(set(grouped["candidates"]))
        positives = grouped["positives"]
        if positives and rows:
            title, abstract, _ = rows[0]
            yield paper_id, _rmc_paper(title, abstract)
            for submission, _ in positives:
                yield TaggedOutput("recorded", (submission, paper_id))
                for candidate_title, _, _ in rows:
                    yield TaggedOutput("titles", (submission, candidate_title))
        elif not positives:
            extension = [row for row in rows if row[2] == "extension"]
            if extension:
                yield TaggedOutput("extension", (paper_id, _rmc_paper(*extension[0][:2])))


def _query(split: str):
    def keyed(row: dict) -> tuple[str, tuple]:
        fields = (row["title"], row["abstract"], tuple(row["reference_titles"] or ()), tuple(row["positive_ids"] or ()))
        return row["submission_id"], (split, *fields)

    return keyed


class _QueryFilesFn(beam.DoFn):
    """One submission: its query in its split file with the positives that were kept and have a paper record,
    its bibliography entries (`bibrefs`) and its own paper record (`submissions`); dropped counts for the rest."""

    def process(self, element) -> Iterator:
        submission, grouped = element
        kept, recorded = set(grouped["kept"]), set(grouped["recorded"])
        titles = set(grouped["titles"])
        for split, title, abstract, references, positive_ids in sorted(grouped["queries"]):
            ids = []
            for paper_id in positive_ids:
                if paper_id not in kept:
                    continue
                if paper_id not in recorded:
                    yield TaggedOutput(DROPPED, ("dropped_positives:no_paper_record", 1))
                    continue
                ids.append(paper_id)
            if not ids:
                yield TaggedOutput(DROPPED, ("dropped_queries:no_exported_positive", 1))
                continue
            yield list_entry(RMC_SPLIT_FILES[split], submission, {"id": submission, "positive_ids": ids})
            refs = rmc_bib_refs(submission, references, titles)
            for ref_id, info in refs:
                yield TaggedOutput("bibrefs", (ref_id, (0, json_text(info))))
            paper = {"title": title or "", "abstract": abstract or "", "bib_refs": [ref_id for ref_id, _ in refs]}
            yield TaggedOutput("submissions", (submission, paper))


def _ranked(rank: int):
    return lambda element: (element[0], (rank, json_text(element[1])))


def _record_entries(element, name: str, wanted: int = 1) -> Iterator[Entry]:
    """A record (id, (rank, JSON text)) as an entry of `name`; none when `wanted` is 0 (no extension papers, so no
    `data/extended/`)."""
    key, (_, text) = element
    if wanted:
        yield name, key, f"{json_text(key)}: {text}"


class ExportRmc(beam.PTransform):
    """A CitationR dataset's tables (`positives/positives`, `candidates/candidates`, `queries/SPLIT`: rows) to
    `{"entries", "dropped", "present"}` in RMC's layout (`export_rmc`'s docstring). Joins by paper (a `FanOutJoin`:
    a paper recommended to many submissions is no one group) and by submission; where two records share an id, the
    submission's wins over the recommended paper's, which wins over an extension paper's."""

    def __init__(self, include_unresolved: bool = False) -> None:
        super().__init__()
        self.include_unresolved = include_unresolved

    def expand(self, tables):
        pbegin = tables["positives/positives"].pipeline
        positives = tables["positives/positives"] | "KeptPositives" >> beam.ParDo(
            _KeptPositiveFn(self.include_unresolved)
        ).with_outputs(DROPPED, main="kept")
        papers = (
            {
                "positives": positives.kept,
                "candidates": tables["candidates/candidates"] | "Candidates" >> beam.Map(_candidate),
            }
            | "JoinPapers" >> FanOutJoin("positives", itemgetter(0), "export_recommended_paper")
            | "PositivePapers"
            >> beam.ParDo(_PositivePapersFn()).with_outputs("recorded", "titles", "extension", main="papers")
        )
        by_submission = positives.kept | "BySubmission" >> beam.MapTuple(lambda paper, sub_title: (sub_title[0], paper))
        titles = (
            positives.kept | "PositiveTitles" >> beam.MapTuple(lambda _, sub_title: sub_title),
            papers.titles,
        ) | "AllTitles" >> beam.Flatten()
        queries = [
            table_rows(tables, f"queries/{split}", pbegin, f"{split.title()}Queries")
            | f"{split.title()}QueriesBySubmission" >> beam.Map(_query(split))
            for split in SPLIT_PREFIXES
        ]
        files = (
            {
                "queries": queries | "AllQueries" >> beam.Flatten(),
                "kept": by_submission,
                "recorded": papers.recorded,
                "titles": titles,
            }
            | "JoinSubmissions" >> beam.CoGroupByKey()
            | "QueryFiles" >> beam.ParDo(_QueryFilesFn()).with_outputs(DROPPED, "bibrefs", "submissions", main="splits")
        )
        extension = beam.pvalue.AsSingleton(papers.extension | "CountExtension" >> beam.combiners.Count.Globally())
        records = (
            papers.extension | "RankExtension" >> beam.Map(_ranked(0)),
            papers.papers | "RankRecommended" >> beam.Map(_ranked(1)),
            files.submissions | "RankSubmissions" >> beam.Map(_ranked(2)),
        ) | "AllRecords" >> beam.Flatten()
        base = (
            records
            | "NotExtension" >> beam.Filter(lambda element: element[1][0] > 0)
            | "OnePerId" >> beam.CombinePerKey(max)
        )
        everything = records | "OnePerIdWithExtension" >> beam.CombinePerKey(max)
        bibrefs = files.bibrefs | "OneBibrefPerId" >> beam.CombinePerKey(max)
        paper_files = ("data/base/papers.json", "data/extended/papers.json")
        bibref_files = ("data/base/bibref2info.json", "data/extended/bibref2info.json")
        entries = (
            files.splits,
            base | "BasePapers" >> beam.FlatMap(_record_entries, paper_files[0]),
            everything | "ExtendedPapers" >> beam.FlatMap(_record_entries, paper_files[1], extension),
            bibrefs | "BaseBibrefs" >> beam.FlatMap(_record_entries, bibref_files[0]),
            bibrefs | "ExtendedBibrefs" >> beam.FlatMap(_record_entries, bibref_files[1], extension),
        ) | "Entries" >> beam.Flatten()
        present = (
            pbegin
            | "Extended" >> beam.Create([name for name in (paper_files[1], bibref_files[1])])
            | "IfExtension" >> beam.FlatMap(lambda name, n: [(name, PRESENT)] if n else [], extension)
        )
        dropped = (positives[DROPPED], files[DROPPED]) | "Dropped" >> beam.Flatten()
        return {"entries": entries, DROPPED: dropped, PRESENT: present}


RMC_EXAMPLE_CONFIG: Config = {
    "n_device": 1,
    "num_workers": 8,
    "gpu_list": None,
    "model_para": {"max_seq_len": 512, "max_num_ref": 20, "embed_dim": 300, "num_kept_layers": 3, "with_linear": False},
    "train_para": {
        "restore_old_checkpoint": True,
        "max_n_sample": 12,
        "max_n_positive": 1,
        "max_n_hard_negative": 1,
        "max_n_easy_negative": 1,
        "n_query_per_batch": 1,
        "similarity": "cos",
        "positive_irrelevance_levels": [1],
        "initial_learning_rate": 2e-5,
        "l2_weight": 0.01,
        "base_margin": 0.05,
        "dropout_rate": 0.1,
        "moving_average_decay": 0.999,
        "num_training_loop": 5,
        "max_num_iterations": 5000,
        "print_every": 5,
        "save_every": 9999999,
        "max_num_checkpoints": 2,
        "validate_every": 2500,
        "num_validation_iterations": 100,
    },
    "paper_batch_size": 8,
    "K_list": [1, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000],
    "num_knn": 100,
}
"""Their `src/configs/{base,extended}/example.config` @ 89dc46ea (the two are the same)."""

RMC_BM25_CONFIG: Config = RMC_EXAMPLE_CONFIG | {
    "model_para": RMC_EXAMPLE_CONFIG["model_para"] | {"with_linear": True},
    "train_para": RMC_EXAMPLE_CONFIG["train_para"]
    | {"num_training_loop": 2, "max_num_iterations": 200, "validate_every": 100},
}
"""Their `src/configs/{base,extended}/bm25.config` @ 89dc46ea (the file src/bm25.py reads)."""

RMC_VERSIONS = {"base": "data/base/papers.json", "extended": "data/extended/papers.json"}


def rmc_config_within(defaults: Config, papers: int) -> Config:
    """RMC's configuration for a dataset version of `papers` papers: get_prefetched_ids.py asks faiss for
    `num_knn` neighbours of a submission among every paper (num_knn at most papers); a query ranks the other
    papers, so a cut-off of `K_list` is at most papers - 1."""
    return defaults | {
        "num_knn": within(defaults["num_knn"], answerable_k(papers)),
        "K_list": k_list_within(defaults["K_list"], answerable_k(papers, asked_beyond=1)),
    }


def rmc_configs(counts: Mapping[str, int]) -> ConfigFiles:
    """`src/configs/VERSION/citrec.config` (their example.config; `--config_name citrec`) and `bm25.config` for
    each dataset version this export wrote, sized by that version's papers.json."""
    configs: ConfigFiles = {}
    for version, papers_file in RMC_VERSIONS.items():
        if papers_file in counts:
            configs[f"src/configs/{version}/citrec.config"] = rmc_config_within(RMC_EXAMPLE_CONFIG, counts[papers_file])
            configs[f"src/configs/{version}/bm25.config"] = rmc_config_within(RMC_BM25_CONFIG, counts[papers_file])
    return configs
