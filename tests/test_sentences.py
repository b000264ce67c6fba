from extractors.documents.sentences import split_sentences


def sentences(text, markers=()):
    return [text[a:b] for a, b in split_sentences(text, markers)]


def test_abbreviations_and_initials_do_not_end_a_sentence():
    text = (
        "Prior work (Smith et al., 2019) studied this. See Fig. 2 for details. "
        "It was proposed by J. Smith and K. Lee [3, 4]. Results are in Table 2 of Jones et al. [5]. Done."
    )
    assert sentences(text) == [
        "Prior work (Smith et al., 2019) studied this.",
        "See Fig. 2 for details.",
        "It was proposed by J. Smith and K. Lee [3, 4].",
        "Results are in Table 2 of Jones et al. [5].",
        "Done.",
    ]


def test_eg_ie_and_eq_stay_inside():
    text = "We use metrics, e.g. recall, as before. Then Eq. 4 holds, i.e. the bound is tight. End."
    assert sentences(text) == [
        "We use metrics, e.g. recall, as before.",
        "Then Eq. 4 holds, i.e. the bound is tight.",
        "End.",
    ]


def test_a_sentence_of_only_markers_joins_the_previous_one():
    text = "This was shown before. [12]. Next sentence here."
    out = sentences(text, [(23, 27)])
    assert out[0].endswith("[12].") and len(out) == 2


def test_empty_text_has_no_sentences():
    assert split_sentences("   ") == ()


def test_fast_spans_equal_blingfires_own_offsets_on_real_paragraphs(shared):
    """BlingFire's `text_to_sentences_and_offsets` stays the reference for our faster span finder."""
    import blingfire

    from extractors.documents.sentences import blingfire_spans
    from extractors.documents.tei import parse_tei

    checked = 0
    for path in sorted((shared / "grobid").glob("*/*.tei.xml")):
        for paragraph in parse_tei(path.read_bytes(), str(path)).paragraphs:
            text = paragraph.text
            reference = [text[a:b].rstrip() for a, b in blingfire.text_to_sentences_and_offsets(text)[1] if b > a]
            assert [text[a:b] for a, b in blingfire_spans(text)] == reference
            checked += 1
    assert checked > 5000


def test_text_to_sentences_equals_the_librarys_wrapper(shared):
    """Our call with a reused output buffer gives what `blingfire.text_to_sentences` gives: on real paragraphs,
    and on what a stale buffer could leak into (a long text, then a short one; a NUL; non-ASCII; nothing)."""
    import blingfire

    from extractors.documents.sentences import text_to_sentences
    from extractors.documents.tei import parse_tei

    texts = ["", " ", "a", "x\x00y. Then z.", "Über Maß. 中文句子。 Next one? Yes!", "Fig. 2. " * 20_000, "Ok."]
    for path in sorted((shared / "grobid").glob("*/*.tei.xml"))[:8]:
        texts += [p.text for p in parse_tei(path.read_bytes(), str(path)).paragraphs]
    assert len(texts) > 1000
    for text in texts:
        assert text_to_sentences(text) == blingfire.text_to_sentences(text), text[:80]


def test_sentences_without_markers_merge_as_with_them():
    """The no-marker path reads a sentence in place with `fullmatch`; it must merge exactly as the marker
    path's `^...$` match on the blanked copy does, newlines included."""
    from extractors.documents.sentences import _NO_WORD, _ONLY_MARKERS_AND_PUNCT

    samples = [chr(c) for c in range(0, 0x3100)] + ["[5].", "(12)\n", "\n", "a\n", "\n.", "12. 13.", " ", ""]
    for sample in samples:
        assert bool(_NO_WORD.fullmatch(sample)) == bool(_ONLY_MARKERS_AND_PUNCT.match(sample)), repr(sample)
    text = "This was shown before. [12]. Next sentence here. 3. Last."
    assert split_sentences(text) == split_sentences(text, [(100, 101)])
