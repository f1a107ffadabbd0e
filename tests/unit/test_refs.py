"""Ref parsing and store keys."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doiget.contract import parse
from doiget.errors import DoigetError, ErrorCode
from doiget.papers.contracts import PaperFetchArgs
from doiget.refs import DOT_SEGMENT, SAFEKEY_MAX_BYTES, Ref, parse_ref, safekey


@pytest.mark.parametrize(
    ("raw", "kind", "canonical"),
    [
        ("10.1371/journal.pone.0033693", "doi", "10.1371/journal.pone.0033693"),
        ("10.1371/JOURNAL.PONE.0033693", "doi", "10.1371/journal.pone.0033693"),
        ("doi:10.1038/srep16696", "doi", "10.1038/srep16696"),
        ("DOI:10.1038/SREP16696", "doi", "10.1038/srep16696"),
        ("https://doi.org/10.1073/pnas.1414271111", "doi", "10.1073/pnas.1414271111"),
        ("http://dx.doi.org/10.1023/A:1007154515475", "doi", "10.1023/a:1007154515475"),
        ("https://doi.org/10.1002%2F%28SICI%291097", "doi", "10.1002/(sici)1097"),
        ("  10.1016/j.xgen.2025.100814 ", "doi", "10.1016/j.xgen.2025.100814"),
        ("2104.12255", "arxiv", "2104.12255"),
        ("2104.12255v1", "arxiv", "2104.12255v1"),
        ("arXiv:1707.08567", "arxiv", "1707.08567"),
        ("ARXIV:1605.08386v3", "arxiv", "1605.08386v3"),
        ("0704.0001", "arxiv", "0704.0001"),
        ("hep-th/9901001", "arxiv", "hep-th/9901001"),
        ("astro-ph/0601001", "arxiv", "astro-ph/0601001"),
        ("quant-ph/0201082v1", "arxiv", "quant-ph/0201082v1"),
        ("math.gt/0309136", "arxiv", "math.GT/0309136"),
        ("arXiv:cond-mat/0011002", "arxiv", "cond-mat/0011002"),
        ("https://arxiv.org/abs/2401.12345v2", "arxiv", "2401.12345v2"),
        ("https://arxiv.org/pdf/2401.12345.pdf", "arxiv", "2401.12345"),
    ],
)
def test_accepted_forms_normalise(raw: str, kind: str, canonical: str) -> None:
    ref = parse_ref(raw)
    assert (ref.kind, ref.canonical) == (kind, canonical)


def test_arxiv_version_is_kept_apart() -> None:
    ref = parse_ref("arXiv:2104.12255v12")
    assert (ref.value, ref.version, ref.shape()) == ("2104.12255", 12, {"arxiv": "2104.12255v12"})


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "hello",
        "10.12/abc",  # registrant code too short
        "10.1234/",  # no suffix
        "10.1234/has space",
        "10.1234/a\x00b",
        "doi:",
        "arXiv:12345",
        "2104.123",
        "2104.12255v0",
        "hep-th/99010",
        "https://example.org/10.1234/abc",
        "'; DROP TABLE papers; --",
        "../../etc/passwd",
        "10.1234/" + "a" * 300,
        "pmid:12345",
    ],
)
def test_everything_else_is_invalid_ref_naming_the_accepted_forms(raw: str) -> None:
    with pytest.raises(DoigetError) as caught:
        parse_ref(raw)
    assert caught.value.code is ErrorCode.INVALID_REF
    assert "10.1234/abc" in caught.value.message and "hep-th/9901001" in caught.value.message


def test_non_string_is_invalid_ref() -> None:
    with pytest.raises(DoigetError) as caught:
        parse_ref(12345)  # type: ignore[arg-type]
    assert caught.value.code is ErrorCode.INVALID_REF


def test_safekey_examples() -> None:
    assert parse_ref("10.1371/journal.pone.0033693").safekey == "doi_10.1371_journal.pone.0033693"
    # The plain mapping loses the ':' here, so the key carries a digest of the id.
    colon = parse_ref("10.1023/A:1007154515475")
    digest = hashlib.sha256(colon.canonical.encode()).hexdigest()[:8]
    assert colon.safekey == f"doi_10.1023_a_1007154515475_{digest}"
    assert parse_ref("hep-th/9901001v2").safekey == "arxiv_hep-th_9901001v2"
    assert parse_ref("2104.12255").safekey == "arxiv_2104.12255"
    assert parse_ref("10.1000/..__//x").safekey.startswith("doi_10.1000_x_")


suffix_chars = st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"))
doi_refs = st.builds(
    lambda registrant, suffix: Ref("doi", f"10.{registrant}/{suffix}".lower()),
    st.integers(min_value=1000, max_value=999999999),
    st.text(suffix_chars, min_size=1, max_size=400),
)


@given(doi_refs)
def test_safekey_is_always_a_safe_file_name(ref: Ref) -> None:
    key = safekey(ref)
    assert "/" not in key and "\\" not in key and "\x00" not in key
    assert ".." not in key
    assert not key.startswith(".")
    assert len(key.encode("utf-8")) <= SAFEKEY_MAX_BYTES + 9
    assert key == safekey(Ref(ref.kind, ref.value))  # stable


@given(st.text(st.characters(whitelist_categories=("Ll",), max_codepoint=127), min_size=200))
def test_long_ids_differing_only_in_escaped_characters_get_distinct_keys(tail: str) -> None:
    first = Ref("doi", f"10.1234/{tail}:x")
    second = Ref("doi", f"10.1234/{tail};x")
    assert safekey(first) != safekey(second)
    digest = hashlib.sha256(first.canonical.encode()).hexdigest()[:8]
    assert safekey(first).endswith("_" + digest)


@given(st.text(min_size=1, max_size=300))
def test_parse_ref_never_crashes(raw: str) -> None:
    try:
        ref = parse_ref(raw)
    except DoigetError as error:
        assert error.code is ErrorCode.INVALID_REF
    else:
        assert ref.kind in ("doi", "arxiv")
        assert parse_ref(ref.canonical) == ref


@pytest.mark.parametrize("raw", ["10.1234/../../x", "10.1234/a/./b", "doi:10.1234/.."])
def test_dois_with_dot_path_parts_are_refused(raw: str) -> None:
    with pytest.raises(DoigetError) as caught:
        parse_ref(raw)
    assert caught.value.code is ErrorCode.INVALID_REF and "path parts" in caught.value.message


# The papers spec's narrow ref pattern: every ref it matches is still taken, except
# '.'/'..' path parts, which no form may hold.
SPEC_REF_PATTERN = r"^(10\.\d{4,9}/[A-Za-z0-9._/()-]+|arXiv:\d{4}\.\d{4,5}|\d{4}\.\d{4,5})$"


@given(st.from_regex(SPEC_REF_PATTERN, fullmatch=True))
def test_every_ref_of_the_spec_pattern_is_taken_by_the_mcp_tools(ref: str) -> None:
    if DOT_SEGMENT.search(ref) or len(ref) > 256:
        with pytest.raises(DoigetError):
            parse(PaperFetchArgs, {"ref": ref})
    else:
        assert parse(PaperFetchArgs, {"ref": ref}).ref == ref
