"""The report's HTML pages in a real browser: Debian's Chromium, headless, driven over the
DevTools protocol (tests/browser.py). `make test` installs Chromium (`make browser`) when it is
missing and the user is root; otherwise these tests are skipped, saying why."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import expfolder as E
from aqmlab.report import build_index, build_report
from browser import check_page, chromium

pytestmark = pytest.mark.skipif(
    chromium() is None,
    reason="chromium is not installed: run `make browser` as root (apt-get install chromium)",
)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("browser")
    bulk = E.build(root, E.BULK, E.SMALL, fail={("ARED", 2)})
    web = E.build(root, E.WEB_EXP, E.WEB)
    own = E.build(root, E.OWN, E.SMALL)
    # An RFC 7928 experiment: the relations' tables and the delay/goodput ellipse.
    rfc = root / "rfc"
    mini = Path(__file__).resolve().parent / "data" / "rfc7928-mini.toml"
    subprocess.run(
        [sys.executable, "-m", "aqmlab", "sweep", str(mini), "--jobs", "2", "--no-report",
         "--out", str(rfc)],
        check=True, capture_output=True,
    )  # fmt: skip
    return {
        "rfc": build_report(rfc),
        "bulk": build_report(bulk),
        "web": build_report(web),
        "own": build_report(own),
        "index": build_index([bulk, web], root / "index.html"),
    }


@pytest.mark.parametrize(("name", "figures"), [("bulk", 3), ("web", 2), ("own", 2), ("rfc", 1)])
def test_report_page_loads_and_shows_every_figure(
    pages: dict[str, Path], name: str, figures: int
) -> None:
    res = check_page(pages[name])
    assert res.errors == []
    assert res.title.startswith(f"test-{name}:")
    assert len(res.images) == figures
    for img in res.images:
        assert img["complete"] and img["width"] > 300 and img["height"] > 200, img


@pytest.mark.parametrize("name", ["own", "bulk", "web", "rfc"])
def test_report_page_fits_a_1400_px_window(
    pages: dict[str, Path], name: str, tmp_path: Path
) -> None:
    """At 1400 px nothing scrolls sideways: not the page, not a table's frame. The report of
    one's own experiment (12 columns: four metrics by three settings) is the widest."""
    shot = tmp_path / f"{name}.png"
    res = check_page(pages[name], width=1400, screenshot=shot)
    assert res.errors == []
    assert res.overflow == [], res.overflow
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(shot.read_bytes()[16:20], "big") == 1400


def test_the_width_check_sees_a_table_wider_than_the_window(tmp_path: Path) -> None:
    page = tmp_path / "wide.html"
    cells = "".join(f"<td>{'x' * 40}</td>" for _ in range(30))
    page.write_text(
        "<!DOCTYPE html><html><head><title>wide</title><style>td{white-space:nowrap}</style>"
        f'</head><body><div class="scroll" style="overflow-x:auto"><table><tr>{cells}</tr>'
        "</table></div></body></html>"
    )
    res = check_page(page, width=1400)
    assert len(res.overflow) == 1 and res.overflow[0].startswith("div.scroll ")


def test_index_page_loads(pages: dict[str, Path]) -> None:
    res = check_page(pages["index"])
    assert res.errors == [] and res.title == "aqmlab experiments"


def test_the_check_sees_broken_pages(tmp_path: Path) -> None:
    """The check can fail: a missing image, an undecodable one, a console error and an
    uncaught exception are all reported."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><head><title>bad</title></head><body><img src="nothere.png">'
        '<img src="data:image/png;base64,AAAA"><script>console.error("boom"); nope();</script>'
        "</body></html>"
    )
    res = check_page(page)
    assert [img["width"] for img in res.images] == [0, 0]
    text = "\n".join(res.errors)
    assert "ERR_FILE_NOT_FOUND" in text and "console.error: boom" in text
    assert "nope is not defined" in text
