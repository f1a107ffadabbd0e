"""Small PDFs with a known shape, written on demand for tests.

Four generators:

* :func:`write_sectioned_pdf` - a five-page A4 article with a title, an abstract, numbered
  (sub)section headings in larger bold type than the body, and one unique marker sentence per
  section whose page is known exactly.
* :func:`write_scanned_pdf` - one page holding a single raster image and no text at all.
* :func:`write_blank_pdf` - one page with no content. PDFium (and so pypdfium2) refuses to
  open a document with zero pages, even one it wrote itself, so a zero-page file would only
  exercise the "cannot open" path; a blank page is the smallest document that opens.
* :func:`write_corrupt_pdf` - a ``%PDF-1.7`` header followed by garbage that PDFium rejects.

Only the core fonts (Helvetica, Times) and ASCII text are used, and the creation date is pinned,
so the same call always writes the same bytes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium
from fpdf import FPDF
from fpdf.enums import XPos, YPos
from PIL import Image, ImageDraw

__all__ = [
    "SECTIONED_TITLE",
    "SectionedPdf",
    "write_blank_pdf",
    "write_corrupt_pdf",
    "write_lines_pdf",
    "write_scanned_pdf",
    "write_sectioned_pdf",
]

_FIXED_DATE = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)

SECTIONED_TITLE = "Lake Ice Thickness from Ground Radar"
"""The title line of the sectioned article (18pt Helvetica bold)."""

TITLE_SIZE = 18.0
H1_SIZE = 14.0
H2_SIZE = 12.0
BODY_SIZE = 11.0
REFERENCE_SIZE = 10.0


@dataclass(frozen=True)
class SectionedPdf:
    """What :func:`write_sectioned_pdf` wrote.

    Attributes:
        path: where the PDF is.
        pages: number of pages.
        heading_pages: heading text (e.g. ``"2.1 Dense Retrieval"``) -> 1-based page it is on.
            Covers ``"Abstract"``, every numbered heading and ``"References"``; not the title.
        markers: section heading -> ``(marker sentence, 1-based page, expected section path)``.
            The marker sentence occurs exactly once in the document and always on a single
            line, so it can be found verbatim in the extracted text of its page. The section
            path lists the enclosing headings outermost first, e.g.
            ``["2 Related Work", "2.1 Dense Retrieval"]``.
        title: the title line.
    """

    path: Path
    pages: int
    heading_pages: dict[str, int]
    markers: dict[str, tuple[str, int, list[str]]]
    title: str = SECTIONED_TITLE


@dataclass(frozen=True)
class _Section:
    heading: str
    level: int  # 0 = Abstract / References, 1 = "N Title", 2 = "N.M Title"
    page: int  # 1-based page the heading must land on
    new_page: bool  # start a fresh page before this heading
    marker: str  # unique sentence; opens paragraph ``marker_at``
    paragraphs: tuple[str, ...]
    marker_at: int = 1


_SECTIONS: tuple[_Section, ...] = (
    _Section(
        heading="Abstract",
        level=0,
        page=1,
        new_page=False,
        marker="The walrus survey logged nine hundred radar traces before noon.",
        paragraphs=(
            "We describe a field campaign that measured the thickness of seasonal lake ice "
            "with a sledge-mounted ground-penetrating radar. The radar was towed across three "
            "small lakes during two consecutive winters, and its travel-time picks were "
            "converted to thickness using a locally fitted wave velocity. Drill holes provided "
            "reference values at fixed stations along each transect.",
            "We compare a densely sampled radar retrieval with a sparse retrieval built from "
            "drill holes alone. The dense approach captured narrow pressure ridges and thin "
            "patches near inflowing streams that the drill network missed entirely.",
        ),
    ),
    _Section(
        heading="1 Introduction",
        level=1,
        page=1,
        new_page=False,
        marker="The zebra calibration constant was fixed at seventeen.",
        paragraphs=(
            "Lake ice supports winter travel, fishing camps and research access across much "
            "of the boreal zone. Its thickness varies over short distances because snow load, "
            "groundwater seepage and wind exposure change from one bay to the next. Travellers "
            "usually judge safety from a handful of auger holes, which is slow and leaves most "
            "of the surface unmeasured. A method that maps thickness continuously would reduce "
            "that uncertainty and help plan safer routes.",
            "That constant scales the raw sample index of each radar trace into a two-way "
            "travel time before any velocity model is applied. We chose it once in the "
            "laboratory and did not adjust it in the field, so that every lake shares the same "
            "timing reference. Keeping it unchanged made later comparisons between winters "
            "straightforward.",
            "This paper makes three contributions. First, it documents a towing rig that keeps "
            "the antenna at a constant height above rough snow. Second, it compares a dense "
            "radar retrieval with a sparse retrieval interpolated from drill holes. Third, it "
            "reports where the two disagree and explains most of those disagreements through "
            "snow cover and slush layers. Section 2 reviews earlier surveys, Section 3 "
            "describes the method, Section 4 presents results and Section 5 concludes.",
        ),
    ),
    _Section(
        heading="2 Related Work",
        level=1,
        page=2,
        new_page=True,
        marker="An obscure almanac from Tromso first described the violet echo.",
        paragraphs=(
            "Measuring floating ice from above has a long history in river engineering and "
            "polar logistics. Early surveys relied on hand augers and weighted tapes, and many "
            "agencies still publish guidance in that form. Airborne electromagnetic sounding "
            "later made regional maps possible, although its footprint is too wide for small "
            "lakes. Ground radar sits between these extremes and has been tested on rivers, "
            "sea ice and glaciers.",
            "It noted that a faint second reflection sometimes follows the ice base, and it "
            "attributed the effect to trapped water within the ice column. Later authors "
            "confirmed the observation with modern equipment but disagreed about its cause. "
            "We group prior studies below by whether they sample the surface densely or "
            "sparsely.",
        ),
    ),
    _Section(
        heading="2.1 Dense Retrieval",
        level=2,
        page=2,
        new_page=False,
        marker="The pelican antenna array swept each grid cell twice.",
        paragraphs=(
            "Dense retrieval refers to methods that record a measurement every few centimetres "
            "along a continuous track. Radar systems towed by snowmobile or by hand are the "
            "most common example. Their main strength is spatial coverage, since a single "
            "afternoon can produce tens of kilometres of profiles. Their weakness is that the "
            "conversion from travel time to thickness depends on a wave velocity that must be "
            "assumed or calibrated.",
            "Repeating each pass in the opposite direction allowed the authors of one study to "
            "separate instrument drift from real changes in the ice. Others have used "
            "common-midpoint gathers to estimate velocity directly from the data. Both ideas "
            "influenced the design of our own survey lines.",
            "Dense profiles also reveal features that point samples cannot. Pressure ridges, "
            "refrozen cracks and thin zones above springs appear as abrupt steps in the picked "
            "interface. Several authors have argued that such features, rather than the "
            "average thickness, control the risk of breaking through. Their work motivates our "
            "emphasis on local minima in Section 4.",
        ),
    ),
    _Section(
        heading="2.2 Sparse Retrieval",
        level=2,
        page=3,
        new_page=True,
        marker="Only the cobalt auger reached the lakebed on the third attempt.",
        paragraphs=(
            "Sparse retrieval estimates thickness from a small number of direct measurements, "
            "usually auger holes drilled on a grid or along a route. Each hole gives an exact "
            "value at one point, and the values between holes are filled by interpolation. "
            "Kriging and inverse distance weighting are the usual choices. The approach is "
            "cheap in equipment but expensive in labour, and it scales poorly to large lakes.",
            "That remark, from a field report on a shallow prairie lake, illustrates how "
            "drilling itself can fail when ice is thick or when the lake freezes to the "
            "bottom. Holes also disturb the ice and can flood the surface with water that "
            "later refreezes. Such effects bias repeated measurements at the same station.",
            "Despite these limits, drill holes remain the reference against which every "
            "remote method is judged. We therefore retain a sparse network in our own design "
            "and treat it as ground truth for calibration and validation.",
        ),
    ),
    _Section(
        heading="3 Method",
        level=1,
        page=3,
        new_page=False,
        marker="A brass metronome set the sledge pace at forty paces per minute.",
        paragraphs=(
            "The survey used a shielded radar antenna with a centre frequency of eight hundred "
            "megahertz. The antenna rode in a plastic sledge that kept it in contact with the "
            "snow surface, and a second sledge carried the control unit and a battery. A "
            "survey wheel triggered one trace every five centimetres, and a handheld "
            "satellite receiver logged positions once per second.",
            "Walking at a steady pace kept the trace spacing even when the survey wheel "
            "slipped on crusted snow. Each lake was covered by parallel lines twenty metres "
            "apart and by a single perimeter loop close to the shore. Drill holes were placed "
            "every hundred metres along three of the parallel lines.",
            "Processing followed a fixed sequence. We removed the direct wave by subtracting a "
            "moving average, applied a gain that increases with time, and picked the ice base "
            "with a semi-automatic tracker. Picks were converted to thickness with a velocity "
            "fitted to the drill holes on each lake. Finally, the dense profiles were gridded "
            "at one metre resolution and compared with the interpolated drill hole surface.",
        ),
    ),
    _Section(
        heading="4 Results",
        level=1,
        page=4,
        new_page=True,
        marker="The mean discrepancy shrank to eleven millimetres at the saffron transect.",
        paragraphs=(
            "Across the three lakes the radar produced about forty kilometres of usable "
            "profiles. Fewer than two percent of traces were discarded, mostly where the "
            "sledge crossed open leads near inflows. The fitted velocities differed by less "
            "than four percent between lakes, which suggests that the ice was similar in "
            "composition.",
            "That transect crossed the middle of the largest lake, where snow was thin and "
            "the ice was clear. Elsewhere the agreement between radar and drill holes was "
            "weaker but still acceptable for route planning. Errors grew where slush layers "
            "formed beneath heavy snow, because the slush returned a strong reflection that "
            "the tracker sometimes mistook for the ice base.",
            "The dense retrieval revealed thin zones that the sparse retrieval missed. On the "
            "smallest lake a spring near the northern shore kept the ice less than half as "
            "thick as the surrounding surface. None of the drill holes fell within that zone, "
            "so the interpolated map showed uniform ice across the whole bay.",
            "Repeat surveys in the second winter reproduced the main patterns. Pressure "
            "ridges formed in the same places, and the spring again produced a thin patch, "
            "although its outline shifted by a few metres. Year to year differences in mean "
            "thickness followed the number of freezing degree days recorded at a nearby "
            "weather station.",
        ),
    ),
    _Section(
        heading="5 Conclusion",
        level=1,
        page=5,
        new_page=True,
        marker="Future winters will test whether the lantern heuristic survives thaw cycles.",
        paragraphs=(
            "Ground radar towed on a sledge can map lake ice thickness quickly and with "
            "accuracy close to that of drilling. Its main advantage over a sparse network of "
            "holes is the detection of narrow thin zones, which matter most for safety. Its "
            "main weakness is confusion between the ice base and slush layers under deep snow.",
            "That heuristic flags any pick that jumps more than a set fraction between "
            "neighbouring traces, and it removed most slush errors in our data. We also plan "
            "to release the processing scripts and the gridded maps so that other groups can "
            "repeat the comparison on their own lakes.",
        ),
    ),
    _Section(
        heading="References",
        level=0,
        page=5,
        new_page=False,
        marker="Okonkwo, A. (2017). Harmonica echoes beneath frozen tarns. J. Winter Limnol. 12.",
        marker_at=2,
        paragraphs=(
            "Aalto, K. and Berg, S. (2011). Auger sampling of seasonal lake ice. Cold Regions "
            "Field Notes 7, 101-115.",
            "Dubois, M. (2015). Velocity calibration for radar over floating ice. Journal of "
            "Applied Snow Science 22, 18-30.",
            "",
            "Peltonen, R., Sato, Y. and Novak, J. (2019). Slush detection in ground radar "
            "profiles. Ice and Water 3, 77-92.",
            "Whitfield, L. (2020). Route planning on frozen lakes. Northern Transport Review "
            "9, 5-21.",
        ),
    ),
)

_EXPECTED_PAGES = 5


def _section_path(index: int) -> list[str]:
    """Headings enclosing ``_SECTIONS[index]``, outermost first, ending with its own."""
    section = _SECTIONS[index]
    if section.level == 2:
        parent = next(s for s in reversed(_SECTIONS[:index]) if s.level == 1)
        return [parent.heading, section.heading]
    return [section.heading]


def _heading_font(level: int) -> tuple[str, str, float]:
    """Font family, style and size used for a heading of ``level``."""
    if level == 2:
        return ("Helvetica", "B", H2_SIZE)
    return ("Helvetica", "B", H1_SIZE)


def _page_texts(path: Path) -> list[str]:
    """Extracted text of every page, in order."""
    doc = pdfium.PdfDocument(path)
    try:
        texts = []
        for page in doc:
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return texts
    finally:
        doc.close()


def _verify_sectioned(result: SectionedPdf) -> None:
    """Re-read ``result.path`` with pypdfium2 and fail loudly if the layout drifted."""
    texts = _page_texts(result.path)
    assert len(texts) == result.pages, f"expected {result.pages} pages, found {len(texts)}"
    lines = [{line.strip() for line in text.splitlines()} for text in texts]
    flat = [" ".join(text.split()) for text in texts]

    assert result.title in lines[0], "title is not a line of page 1"
    for heading, page in result.heading_pages.items():
        on = [n for n, page_lines in enumerate(lines, 1) if heading in page_lines]
        assert on == [page], f"heading {heading!r} expected on page {page}, found on {on}"
    for heading, (marker, page, _) in result.markers.items():
        assert marker in texts[page - 1], f"marker of {heading!r} not verbatim on page {page}"
        on = [n for n, text in enumerate(flat, 1) if marker in text]
        assert on == [page], f"marker of {heading!r} expected on page {page}, found on {on}"
        assert " ".join(flat).count(marker) == 1, f"marker of {heading!r} is not unique"


def write_sectioned_pdf(path: Path) -> SectionedPdf:
    """Write a deterministic five-page A4 article to ``path`` and describe it.

    Layout (fonts are core fonts; sizes in points):

    * page 1: title (Helvetica bold 18), "Abstract" and "1 Introduction" (Helvetica bold 14);
    * page 2: "2 Related Work" (bold 14) and "2.1 Dense Retrieval" (Helvetica bold 12);
    * page 3: "2.2 Sparse Retrieval" (bold 12) and "3 Method" (bold 14);
    * page 4: "4 Results";
    * page 5: "5 Conclusion" and "References" (bold 14).

    Body paragraphs are Times 11 (reference entries Times 10), left aligned. Every section
    carries one marker sentence that opens one of its paragraphs and fits on a single line.
    Page breaks before "2 Related Work", "2.2 Sparse Retrieval", "4 Results" and
    "5 Conclusion" are forced, and the result is checked with pypdfium2 before returning;
    an ``AssertionError`` means the layout no longer matches what is described here.
    """
    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_creation_date(_FIXED_DATE)
    pdf.set_title(SECTIONED_TITLE)
    pdf.set_author("A. Tester")
    pdf.set_margins(left=20, top=20, right=20)
    pdf.set_auto_page_break(auto=True, margin=20)
    pdf.add_page()

    pdf.set_font("Helvetica", "B", TITLE_SIZE)
    assert pdf.get_string_width(SECTIONED_TITLE) < pdf.epw, "title would wrap"
    pdf.cell(0, 10, SECTIONED_TITLE, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(6)

    heading_pages: dict[str, int] = {}
    markers: dict[str, tuple[str, int, list[str]]] = {}
    for index, section in enumerate(_SECTIONS):
        if section.new_page:
            pdf.add_page()
        else:
            pdf.ln(3)
        pdf.set_font(*_heading_font(section.level))
        assert pdf.page_no() == section.page, (
            f"{section.heading!r} would start on page {pdf.page_no()}, not {section.page}"
        )
        pdf.cell(0, 8, section.heading, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.ln(1)
        heading_pages[section.heading] = section.page

        is_references = section.heading == "References"
        body_size = REFERENCE_SIZE if is_references else BODY_SIZE
        pdf.set_font("Times", "", body_size)
        assert pdf.get_string_width(section.marker) < pdf.epw, (
            f"marker of {section.heading!r} would wrap"
        )
        for n, paragraph in enumerate(section.paragraphs):
            text = paragraph
            if n == section.marker_at:
                text = f"{section.marker} {paragraph}".strip()
            pdf.multi_cell(
                0, body_size * 0.45, text, align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT
            )
            pdf.ln(1.5 if is_references else 3)
        assert pdf.page_no() == section.page, f"{section.heading!r} overflowed its page"
        markers[section.heading] = (section.marker, section.page, _section_path(index))

    assert pdf.page_no() == _EXPECTED_PAGES
    pdf.output(str(path))

    result = SectionedPdf(
        path=path, pages=_EXPECTED_PAGES, heading_pages=heading_pages, markers=markers
    )
    _verify_sectioned(result)
    return result


def write_scanned_pdf(path: Path) -> None:
    """Write a one-page A4 PDF whose only content is a raster image, so it has no text layer.

    The image is drawn with Pillow (a page frame, "text" bars, a chart box and a line of
    lettering rendered into pixels) and placed over the whole page with ``FPDF.image``.
    """
    width, height = 620, 877  # A4 at 75 dpi
    image = Image.new("L", (width, height), color=255)
    draw = ImageDraw.Draw(image)
    draw.rectangle((30, 30, width - 30, height - 30), outline=0, width=3)
    draw.text((60, 60), "SCANNED PAGE - NO TEXT LAYER", fill=0)
    for row in range(12):
        y = 110 + row * 22
        draw.rectangle((60, y, width - 60 - (row % 4) * 40, y + 8), fill=70)
    draw.rectangle((60, 420, width - 60, 700), outline=0, width=2)
    draw.line((60, 700, width - 60, 430), fill=0, width=3)
    draw.ellipse((250, 740, 370, 820), outline=0, width=2)

    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_creation_date(_FIXED_DATE)
    pdf.add_page()
    pdf.image(image, x=0, y=0, w=pdf.w, h=pdf.h)
    pdf.output(str(path))


def write_blank_pdf(path: Path) -> None:
    """Write a valid one-page A4 PDF whose page has no content at all.

    This stands in for an "empty" PDF: PDFium will not open a document with zero pages
    (``/Count 0``), so the smallest document pypdfium2 accepts is one blank page.
    """
    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_creation_date(_FIXED_DATE)
    pdf.add_page()
    pdf.output(str(path))


def write_corrupt_pdf(path: Path) -> None:
    """Write bytes that start like a PDF (``%PDF-1.7``) but are garbage after the header.

    There are no objects, no xref table and no trailer, so pypdfium2 raises ``PdfiumError``.
    """
    garbage = bytes((i * 37 + 11) % 256 for i in range(2048))
    path.write_bytes(b"%PDF-1.7\n" + b"this is not a real pdf body\n" + garbage)


def write_manuscript_pdf(
    path: Path,
    entries: list[str],
    *,
    style: str = "numbered",
    appendix: str | None = None,
    body: str | None = None,
) -> None:
    """Write a short manuscript whose last section is a reference list of ``entries``.

    ``style`` sets how entries are told apart: ``"numbered"`` prints ``[1]``, ``[2]`` ...
    with wrapped lines at the margin; ``"hanging"`` indents every line after an entry's
    first; ``"flush"`` sets every line at the margin with no gap between entries.
    ``appendix`` adds a bold "Appendix" heading and that paragraph after the list;
    ``body`` replaces the body text before the list.
    """
    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_creation_date(_FIXED_DATE)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", TITLE_SIZE)
    pdf.cell(0, 10, "A Manuscript With Citations", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Times", "", BODY_SIZE)
    pdf.multi_cell(0, 5, body or "Body text that cites earlier work [1, 2]. " * 6)
    pdf.ln(4)
    pdf.set_font("Helvetica", "B", H1_SIZE)
    pdf.cell(0, 8, "References", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Times", "", REFERENCE_SIZE)
    for number, entry in enumerate(entries, start=1):
        if style == "numbered":
            pdf.multi_cell(0, 4.5, f"[{number}] {entry}", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        elif style == "hanging":
            first, _, rest = entry.partition(". ")
            pdf.multi_cell(0, 4.5, f"{first}.", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.set_left_margin(pdf.l_margin + 6)
            pdf.multi_cell(0, 4.5, rest, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.set_left_margin(pdf.l_margin - 6)
        else:
            pdf.multi_cell(0, 4.5, entry, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    if appendix is not None:
        pdf.ln(4)
        pdf.set_font("Helvetica", "B", H1_SIZE)
        pdf.cell(0, 8, "Appendix", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.set_font("Times", "", BODY_SIZE)
        pdf.multi_cell(0, 5, appendix)
    pdf.output(str(path))


def write_lines_pdf(path: Path, pages: list[list[str]]) -> Path:
    """Write ``pages`` (each a list of lines) to ``path``, one Times 11 line per cell, so
    every line break and page break is where the caller put it (a word broken with a
    hyphen at a line end, a sentence running over a page break)."""
    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_creation_date(_FIXED_DATE)
    pdf.set_margins(left=20, top=20, right=20)
    pdf.set_auto_page_break(auto=False)
    for lines in pages:
        pdf.add_page()
        pdf.set_font("Times", "", BODY_SIZE)
        for line in lines:
            assert pdf.get_string_width(line) < pdf.epw, f"line would wrap: {line!r}"
            pdf.cell(0, BODY_SIZE * 0.45, line, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.output(str(path))
    return path


def write_paper_pdf(
    path: Path,
    title: str,
    authors: list[str],
    *,
    page_doi: str | None = None,
    arxiv_stamp: str | None = None,
    cited: list[str] = (),  # type: ignore[assignment]
    info_subject: str | None = None,
    xmp_doi: str | None = None,
    sections: list[tuple[str, str]] = (),  # type: ignore[assignment]
) -> Path:
    """Write the first page of a paper: ``title`` in large bold type, the ``authors``
    under it with affiliation marks, an abstract, ``page_doi`` printed as a
    ``https://doi.org/`` link, ``arxiv_stamp`` rotated in the left margin as arXiv
    prints it, ``sections`` (heading, paragraph) in bold headings over body text, and a
    reference list of ``cited`` entries (which may hold DOIs).
    ``info_subject`` goes to the Info dictionary, ``xmp_doi`` to an XMP packet."""
    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_creation_date(_FIXED_DATE)
    if info_subject is not None:
        pdf.set_subject(info_subject)
    if xmp_doi is not None:
        pdf.set_xmp_metadata(
            '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF '
            'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
            '<rdf:Description xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/">'
            f"<prism:doi>{xmp_doi}</prism:doi></rdf:Description></rdf:RDF></x:xmpmeta>"
        )
    pdf.add_page()
    if arxiv_stamp is not None:
        pdf.set_font("Times", "", 20)
        with pdf.rotation(90, 12, 200):
            pdf.text(12, 200, arxiv_stamp)
    pdf.set_font("Helvetica", "B", TITLE_SIZE)
    pdf.multi_cell(0, 9, title, align="C", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Times", "", 12)
    marked = ", ".join(f"{name}{number}" for number, name in enumerate(authors, start=1))
    pdf.multi_cell(0, 6, marked, align="C", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Times", "I", 9)
    pdf.cell(0, 5, "1 Department of Examples, University of Nowhere", align="C",
             new_x=XPos.LMARGIN, new_y=YPos.NEXT)  # fmt: skip
    pdf.ln(4)
    pdf.set_font("Times", "", BODY_SIZE)
    pdf.multi_cell(0, 5, "Abstract. " + "We study a question and report what we found. " * 8)
    if page_doi is not None:
        pdf.cell(0, 6, f"https://doi.org/{page_doi}", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    for heading, paragraph in sections:
        pdf.ln(4)
        pdf.set_font("Helvetica", "B", H1_SIZE)
        pdf.cell(0, 8, heading, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.set_font("Times", "", BODY_SIZE)
        pdf.multi_cell(0, 5, paragraph, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    if cited:
        pdf.ln(4)
        pdf.set_font("Helvetica", "B", H1_SIZE)
        pdf.cell(0, 8, "References", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.set_font("Times", "", REFERENCE_SIZE)
        for number, entry in enumerate(cited, start=1):
            pdf.multi_cell(0, 4.5, f"[{number}] {entry}", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.output(str(path))
    return path


# -- raw PDFs, written object by object ------------------------------------------------

_FONT_OBJECT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
_PAGE_TEXT = b"BT /F1 12 Tf 72 700 Td (A page of text long enough to count as text) Tj ET"


def raw_pdf(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (numbered from 1, the first the catalog) with a correct xref."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    start = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        start,
    )
    return bytes(out)


def pdf_stream(body: bytes, *, extra: bytes = b"") -> bytes:
    """A stream object holding ``body`` as it is (already encoded, per ``extra``)."""
    return b"<< /Length %d %s >>\nstream\n" % (len(body), extra) + body + b"\nendstream"


def pdf_page(contents: bytes = b"5 0 R", parent: bytes = b"2 0 R", xobjects: bytes = b"") -> bytes:
    """A page dictionary: font F1 is object 4, its content stream object 5."""
    return (
        b"<< /Type /Page /Parent " + parent + b" /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> " + xobjects + b">> /Contents " + contents + b" >>"
    )


def one_page_pdf(contents: bytes, *, extra: bytes = b"", more: list[bytes] = ()) -> bytes:  # type: ignore[assignment]
    """One page whose content stream (object 5) is ``contents``, then ``more`` objects."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            pdf_page(xobjects=b"/XObject << /X0 6 0 R >> " if more else b""),
            _FONT_OBJECT,
            pdf_stream(contents, extra=extra),
            *more,
        ]
    )


def broken_pdf(kind: str) -> bytes:
    """A small PDF PDFium opens but cannot read, by ``kind``: ``kids-loop`` (the page
    tree lists itself as a kid), ``parent-loop`` (a node's kid is its own parent),
    ``count-lies`` (a million pages declared, one there), ``page-is-pages`` (a kid that
    is a page tree node pointing back up), ``truncated`` (cut before its xref)."""
    catalog = b"<< /Type /Catalog /Pages 2 0 R >>"
    text = pdf_stream(_PAGE_TEXT)
    trees = {
        "kids-loop": [b"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>", pdf_page()],
        "parent-loop": [
            b"<< /Type /Pages /Kids [6 0 R] /Count 1 >>",
            pdf_page(parent=b"6 0 R"),
        ],
        "count-lies": [b"<< /Type /Pages /Kids [3 0 R] /Count 1000 >>", pdf_page()],
        "page-is-pages": [
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Pages /Kids [2 0 R] /Count 1 /Parent 2 0 R >>",
        ],
    }
    if kind == "truncated":
        whole = raw_pdf([catalog, *trees["kids-loop"], _FONT_OBJECT, text])
        return whole[: len(whole) * 2 // 3]
    more = [b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 /Parent 2 0 R >>"]
    return raw_pdf(
        [catalog, *trees[kind], _FONT_OBJECT, text, *(more if kind == "parent-loop" else [])]
    )
