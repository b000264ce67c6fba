"""Resolving mentions to database papers: by identifier and title (the in-memory matcher, or Beam joins in which
no worker holds the database), by a work's name ("LoRA"), then by the online resolvers when they are enabled.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from extractors.clients.resolvers import OnlineResolver, ResolverConfig
from extractors.reviews.mentions import RECOMMENDED
from extractors.reviews.mentions.names import NAME_SOURCE
from extractors.reviews.records import MentionRecord
from mapping.in_memory import InMemoryMatcher
from mapping.matcher import MatchConfig
from mapping.names import choose_named, mention_name_keys, title_name_key
from mapping.records import BibEntry, Resolution, no_count
from pipelines.citationr.mentions import REFERENCE_ENTRY
from pipelines.citationr.progress import NAMESPACE, Progress
from pipelines.matching import PAPERS, REFS, UNCOUNTED, MatchReferences
from pipelines.tallies import TALLY, Tallies, TallyingFn
from pipelines.transforms import in_memory_matcher


def mention_entry(record: MentionRecord) -> BibEntry:
    """A mention as the bib entry the matchers resolve (its id the mention's). A reviewer's reference entry keeps
    its string as the entry's raw string: without a usable title it resolves as a bibliography's raw reference
    does (`mapping.raw_strings`), with no cutting of a title out of it."""
    m = record.mention
    raw = m.text if m.source == REFERENCE_ENTRY else None
    return BibEntry(bib_id=record.mention_id, title=m.title, year=m.year, doi=m.doi, arxiv_id=m.arxiv_id, raw=raw)


def resolvable(record: MentionRecord) -> bool:
    """Whether a mention has a title, an identifier or a reference string to resolve."""
    m = record.mention
    return bool(m.title or m.arxiv_id or m.doi or m.source == REFERENCE_ENTRY)


def mention_ref(record: MentionRecord) -> str:
    """A mention's key in the join matcher: only recommended mentions are counted, as in the in-memory path."""
    return record.mention_id if record.mention.kind == RECOMMENDED else UNCOUNTED + record.mention_id


class _FinishMentionFn(TallyingFn):
    """What follows a mention's resolution whichever matcher made it: the paper it resolved to, then, for a
    recommended one the database lacks, the online resolvers when they are enabled, and the counts."""

    def __init__(self, resolver: ResolverConfig) -> None:
        self.resolver_config = resolver
        self.resolver: OnlineResolver | None = None
        self.progress = Progress("resolving mentions", "mentions")

    def setup(self) -> None:
        if self.resolver_config.names:
            self.resolver = OnlineResolver(self.resolver_config)

    def finish(self, record: MentionRecord, resolution: Resolution | None, tally: Tallies) -> Iterator:
        m = record.mention
        recommended = m.kind == RECOMMENDED
        if resolution is not None and resolution.paper_id is not None:
            record = replace(
                record, paper_id=resolution.paper_id, resolved_by=resolution.method, resolution_score=resolution.score
            )
        if recommended and record.paper_id is None and self.resolver is not None:
            paper = self.resolver.resolve(m.title)
            if paper is not None:
                tally(f"resolved_by:online:{paper.source}")
                record = replace(record, paper_id=paper.paper_id, resolved_by=paper.source, resolution_score=None)
                yield TaggedOutput("online_papers", paper)
        if recommended:
            tally("recommended_resolved" if record.paper_id else "recommended_unresolved")
            if record.paper_id is None and not resolvable(record) and m.source != NAME_SOURCE:
                tally("unresolved:no_title_or_identifier")  # a name's outcome is counted by `ResolveNames`
        self.progress.add(recommended=int(recommended), resolved=int(recommended and bool(record.paper_id)))
        yield record
        yield from tally.emit()


class ResolveMentionsFn(_FinishMentionFn):
    """Each mention with a title or identifier to a database paper through the in-memory matcher (a side input):
    identifiers first, then the title; then `finish`."""

    def process(self, record: MentionRecord, matcher: InMemoryMatcher) -> Iterator:
        tally = self.tallies(NAMESPACE)
        resolution = None
        if resolvable(record):
            recommended = record.mention.kind == RECOMMENDED
            resolution = matcher.resolve(mention_entry(record), tally if recommended else no_count)
        yield from self.finish(record, resolution, tally)


class _ApplyResolutionFn(_FinishMentionFn):
    """A mention with the join matcher's resolution of it (none for a mention with nothing to resolve); `finish`."""

    def process(self, element) -> Iterator:
        _, grouped = element
        resolution = next(iter(grouped["resolutions"]), None)
        for record in grouped["mentions"]:
            yield from self.finish(record, resolution, self.tallies(NAMESPACE))


def _looked_up(record: MentionRecord) -> bool:
    m = record.mention
    return m.source == NAME_SOURCE and m.kind == RECOMMENDED and record.paper_id is None


def name_keys_of(record: MentionRecord) -> list[str]:
    """The keys a recommended, unresolved `name` mention is looked up by (`mapping.names`); none for the rest."""
    return mention_name_keys(record.mention.text) if _looked_up(record) else []


def _heads_among(paper, wanted: dict[str, None]) -> Iterator:
    """(name key, (paper id, year)) for a database paper whose title's head is one of the `wanted` keys."""
    key = title_name_key(paper.title)
    if key is not None and key in wanted:
        yield key, (paper.paper_id, paper.year)


class _ApplyNamesFn(TallyingFn):
    """Each mention, a recommended name resolved to the paper chosen (`mapping.names.choose_named`, none dated after
    the review) for its first key that has one (`named`: the (paper id, year) pairs per key, a side input), and
    every looked-up name's outcome counted. Not `enabled`: no name is resolved, each counted `name_not_looked_up`."""

    def __init__(self, enabled: bool = True) -> None:
        super().__init__()
        self.enabled = enabled

    def process(self, record: MentionRecord, named: dict[str, list[tuple[str, int | None]]]) -> Iterator:
        if _looked_up(record) and not self.enabled:
            tally = self.tallies(NAMESPACE)
            tally("unresolved:name_not_looked_up")
            yield from tally.emit()
        elif _looked_up(record):
            tally = self.tallies(NAMESPACE)
            keys = mention_name_keys(record.mention.text)
            chosen = (choose_named(named[k], record.review_year) for k in keys if k in named)
            paper_id = next((p for p in chosen if p is not None), None)
            if not keys:
                tally("unresolved:name_too_short")  # "SD": no key can tell its paper
            elif paper_id is not None:
                tally("resolved_by:name")
                record = replace(record, paper_id=paper_id, resolved_by="name", resolution_score=None)
            elif any(choose_named(named[k]) for k in keys if k in named):  # its papers all dated too late
                tally("unresolved:name_after_review")
            elif any(k in named for k in keys):  # several papers of one age bear the name
                tally("unresolved:name_ambiguous")
            else:
                tally("unresolved:name_not_in_database")
            yield from tally.emit()
        yield record


class ResolveNames(beam.PTransform):
    """`{"mentions", "papers"}` to `mentions` (and `tally`) with each recommended work named by name ("compare
    with LoRA") resolved to the database paper whose title's head is that name ("LoRA: Low-Rank Adaptation of
    ..."; `mapping.names`). The names' keys reach the database as a side input (a run's names are few), the
    papers per key reach the mentions as another, where each mention chooses among those not dated after its
    review; no worker holds the database. `enabled=False` (`--no_resolve_names`): names stay unresolved, counted.
    In a database that lacks the work a name means, a namesake's title can begin with it ("CLIP" -> "Clip: A Tool
    for Mapping Hierarchical Schemas")."""

    def __init__(self, enabled: bool = True) -> None:
        super().__init__()
        self.enabled = enabled

    def expand(self, inputs):
        if self.enabled:
            keys = (
                inputs["mentions"]
                | "NameKeys" >> beam.FlatMap(name_keys_of)
                | "DistinctNameKeys" >> beam.Distinct()
                | "AsKeys" >> beam.Map(lambda key: (key, None))
            )
            named = (
                inputs["papers"]
                | "TitleHeads" >> beam.FlatMap(_heads_among, wanted=beam.pvalue.AsDict(keys))
                | "PapersByName" >> beam.GroupByKey()
                | "PapersOfName" >> beam.MapTuple(lambda key, papers: (key, sorted(set(papers), key=repr)))
            )
        else:  # no name is looked up: the database's titles are not read for their heads
            named = inputs["mentions"].pipeline | "NoNames" >> beam.Create([])
        resolved = inputs["mentions"] | "ApplyNames" >> beam.ParDo(
            _ApplyNamesFn(self.enabled), named=beam.pvalue.AsDict(named)
        ).with_outputs(TALLY, main="mentions")
        return {"mentions": resolved.mentions, TALLY: resolved[TALLY]}


class ResolveMentions(beam.PTransform):
    """`{"mentions", "papers"}` to resolved `mentions`, `online_papers` and `tally`. `matcher` "memory": the
    database in one `InMemoryMatcher` side input; "join": `pipelines.matching.MatchReferences`, Beam joins in which
    no worker holds the database (the same resolutions and counts)."""

    def __init__(self, match: MatchConfig, resolver: ResolverConfig, matcher: str = "memory") -> None:
        super().__init__()
        if matcher not in ("memory", "join"):
            raise ValueError(f"matcher must be 'memory' or 'join', not {matcher!r}")
        self.match, self.resolver, self.matcher = match, resolver, matcher

    def expand(self, inputs):
        outputs = ("online_papers", TALLY)
        if self.matcher == "memory":
            matcher = in_memory_matcher(inputs["papers"], self.match)
            resolved = inputs["mentions"] | "Resolve" >> beam.ParDo(
                ResolveMentionsFn(self.resolver), matcher=matcher
            ).with_outputs(*outputs, main="mentions")
            return {"mentions": resolved.mentions, "online_papers": resolved.online_papers, TALLY: resolved[TALLY]}
        refs = (
            inputs["mentions"]
            | "Resolvable" >> beam.Filter(resolvable)
            | "MentionEntries" >> beam.Map(lambda record: (mention_ref(record), mention_entry(record)))
        )
        matched = {PAPERS: inputs["papers"], REFS: refs} | "Match" >> MatchReferences(self.match)
        resolved = (
            {
                "mentions": inputs["mentions"]
                | "MentionsByRef" >> beam.Map(lambda record: (mention_ref(record), record)),
                "resolutions": matched["resolutions"],
            }
            | "JoinResolutions" >> beam.CoGroupByKey()
            | "Apply" >> beam.ParDo(_ApplyResolutionFn(self.resolver)).with_outputs(*outputs, main="mentions")
        )
        tally = (matched[TALLY], resolved[TALLY]) | "ResolveTallies" >> beam.Flatten()
        return {"mentions": resolved.mentions, "online_papers": resolved.online_papers, TALLY: tally}
