"""The five papers that define aqmlab, by name.

The project's specification is five documents kept as text files named by a number and a hash
(``003_b277268f444f7691.txt``). Code comments and the developer docs cite those file names; a
reader needs the paper: its authors, title, venue and year. :data:`PAPERS` holds them, and
:func:`split_source` reads an experiment's ``source`` (which names the paper, or, in files
written before the presets named their papers, the seed file) into the paper and the place in
it (section, table, figure). docs/papers.md is the same list for readers.

Two of the seeds are excerpts without a title page (``000_...`` and ``001_...``); their entries
were identified from their content (the schemes, the ECN+ and RED* terms, the figure and table
numbers), as docs/papers.md says.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PAPERS", "Paper", "by_seed", "cite_source", "split_source"]


@dataclass(frozen=True)
class Paper:
    """One seed document and its bibliographic entry."""

    #: The seed's file name (``003_b277268f444f7691.txt``).
    seed: str
    #: Author and year, for listings: ``Chen 2010``.
    short: str
    authors: str
    title: str
    venue: str
    year: int

    @property
    def citation(self) -> str:
        """``Authors, "Title", venue, year``: what a reader looks the paper up by."""
        return f'{self.authors}, "{self.title}", {self.venue}, {self.year}'


#: The seeds in file order.
PAPERS: tuple[Paper, ...] = (
    Paper(
        seed="000_0675317d310dd341.txt",
        short="Kuzmanovic 2005",
        authors="A. Kuzmanovic",
        title="The Power of Explicit Congestion Notification",
        venue="Proc. ACM SIGCOMM",
        year=2005,
    ),
    Paper(
        seed="001_e060da456e213f64.txt",
        short="Le et al. 2003",
        authors="L. Le, J. Aikat, K. Jeffay, F. D. Smith",
        title="The Effects of Active Queue Management on Web Performance",
        venue="Proc. ACM SIGCOMM",
        year=2003,
    ),
    Paper(
        seed="002_80945567bf68047d.txt",
        short="Athuraliya et al. 2001",
        authors="S. Athuraliya, V. H. Li, S. H. Low, Q. Yin",
        title="REM: Active Queue Management",
        venue="IEEE Network 15(3)",
        year=2001,
    ),
    Paper(
        seed="003_b277268f444f7691.txt",
        short="Chen 2010",
        authors="W. Chen",
        title="Parameter Self-Tuning in Internet Congestion Control",
        venue="PhD thesis, Loughborough University",
        year=2010,
    ),
    Paper(
        seed="004_618a487a53bfbc7f.txt",
        short="Feng et al. 1999",
        authors="W. Feng, D. D. Kandlur, D. Saha, K. G. Shin",
        title="A Self-Configuring RED Gateway",
        venue="Proc. IEEE INFOCOM",
        year=1999,
    ),
)


def by_seed(name: str) -> Paper | None:
    """The paper of a seed file name (``003_b277268f444f7691.txt``, or its first digits
    ``003_``); None for another name."""
    for p in PAPERS:
        if name == p.seed or (len(name) >= 4 and p.seed.startswith(name)):
            return p
    return None


def split_source(source: str) -> tuple[Paper | None, str]:
    """An experiment's ``source`` as (the paper it names, the place in it): the source may
    begin with the paper's citation (``W. Chen, "Parameter ...", ..., 2010: section 5.5.3``)
    or with its seed file name (``003_b277268f444f7691.txt, section 5.5.3``). A source that
    names neither gives (None, the source)."""
    text = source.strip()
    for p in PAPERS:
        for head in (p.citation, p.seed):
            if text.startswith(head):
                rest = text[len(head) :].lstrip(" ,:;")
                return p, rest
    return None, text


def cite_source(source: str) -> str:
    """``source`` with the paper named in full (``W. Chen, "Parameter Self-Tuning in Internet
    Congestion Control", PhD thesis, Loughborough University, 2010: section 5.5.3``): what a
    report's header and ``aqmlab reproduce --list`` show."""
    paper, rest = split_source(source)
    if paper is None:
        return source
    return f"{paper.citation}: {rest}" if rest else paper.citation
