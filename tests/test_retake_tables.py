"""tools/retake_tables.py: a docs page's tables taken again from a preset's new report."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from file_modules import load


def _tool() -> ModuleType:
    return load("retake_tables", Path(__file__).parents[1] / "tools" / "retake_tables.py")


rt = _tool()

OLD = """# A preset

### Delay and goodput

| scheme | delay (ms)<br>alone | delay (ms)<br>beside | goodput (Mb/s)<br>alone |
|---|---:|---:|---:|
| PI | **7.0** ± 0.1 | **9.0** | **9.37** |
| PIE | **17.5** ± 0.2 | **38.2** | **9.37** |
| RED | **6.6** | **11.3** | **7.26** |
| RED x0.5 | **3.9** | **5.3** | **6.81** |
"""

NEW = """# A preset

### Delay and goodput

| scheme | delay (ms)<br>alone | delay (ms)<br>beside | goodput (Mb/s)<br>alone |
|---|---:|---:|---:|
| PI | **7.1** ± 0.1 | **9.3** | **9.71** |
| PIE | **17.2** ± 0.2 | **42.1** | **9.40** |
| RED | **6.7** | **11.7** | **7.32** |
| RED x0.5 | **4.0** | **5.3** | **6.93** |
"""

PAGE = """# The page

## Results: `preset` (full form)

| scheme | delay ms | goodput |
|---|---:|---:|
| PIE | 17.5 / 38.2 | 9.37 |
| RED | 6.6 / 11.3 | 7.26 |
| Cake | 1.0 / 2.0 | 9.00 |

| scheme | x0.5 | default |
|---|---:|---:|
| RED | 3.9 / 6.81 | 6.6 / 7.26 |

Text keeps 17.5 ms.

## Elsewhere

| PIE | 17.5 |
"""


def _folders(tmp_path: Path, old: str = OLD, new: str = NEW) -> tuple[Path, Path]:
    for name, text in (("old", old), ("new", new)):
        (tmp_path / name / "report").mkdir(parents=True)
        (tmp_path / name / "report" / "tables.md").write_text(text)
    return tmp_path / "old", tmp_path / "new"


def _retake(
    tmp_path: Path, page_text: str, *flags: str, old: str = OLD, new: str = NEW
) -> tuple[int, str]:
    """The tool run on ``page_text`` with the two reports: its exit status and the page after."""
    o, n = _folders(tmp_path, old, new)
    page = tmp_path / "page.md"
    page.write_text(page_text)
    return rt.main([str(page), f"Results={o}:{n}", *flags]), page.read_text()


def test_each_figure_takes_its_own_schemes_new_cell(tmp_path: Path) -> None:
    status, text = _retake(tmp_path, PAGE, "--write")
    assert status == 0
    # Both cells of a combined one, each from its own column; PIE never takes PI's figures
    # (PI's goodput was PIE's 9.37 too).
    assert "| PIE | 17.2 / 42.1 | 9.40 |" in text
    assert "| RED | 6.7 / 11.7 | 7.32 |" in text
    # A row of settings: the scheme's rows with a setting after its name.
    assert "| RED | 4.0 / 6.93 | 6.7 / 7.32 |" in text
    # A scheme the report lacks keeps its figures; the text and other sections are left alone.
    assert "| Cake | 1.0 / 2.0 | 9.00 |" in text
    assert "Text keeps 17.5 ms." in text
    assert "| PIE | 17.5 |" in text


def test_without_write_the_page_is_left_and_the_rows_are_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _retake(tmp_path, PAGE) == (0, PAGE)
    out = capsys.readouterr().out
    assert "3 rows changed; 1 of no report row, left as they were" in out
    assert "no report row of '| Cake" in out


@pytest.mark.parametrize(
    ("spec", "said"),
    [("Results", "expected HEADING_REGEX=OLD:NEW"), ("Results=a", "expected OLD:NEW")],
)
def test_bad_sections_name_what_is_expected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, said: str
) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    assert rt.main([str(page), spec]) == 2
    assert said in capsys.readouterr().err


def test_a_missing_report_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    assert rt.main([str(page), f"Results={tmp_path}/x:{tmp_path}/y"]) == 2
    assert "report/tables.md: no such report table" in capsys.readouterr().err


def _loss_report(rows: dict[str, tuple[str, str, str]]) -> str:
    """A report's table of loss alone, loss beside and goodput alone, a row per scheme."""
    lines = [
        "# A preset",
        "",
        "### Loss and goodput",
        "",
        "| scheme | loss (%)<br>alone | loss (%)<br>beside | goodput (Mb/s)<br>alone |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {k} | " + " | ".join(f"**{v}**" for v in vs) + " |" for k, vs in rows.items()]
    return "\n".join(lines) + "\n"


OLD_TWO = _loss_report(
    {
        "PI": ("0.50", "0.70", "9.10"),
        "PIE": ("0.70", "0.90", "9.20"),
        "RED": ("1.10", "1.30", "7.30"),
    }
)
NEW_TWO = _loss_report(
    {
        "PI": ("0.55", "0.75", "9.15"),
        "PIE": ("0.72", "0.95", "9.25"),
        "RED": ("1.12", "1.35", "7.35"),
    }
)

# RED's "beside" figure on the page, 1.10, is not the old report's 1.30 there (the page was left
# behind) but is RED's old "alone" figure: the column the other rows take overrules the
# coincidence, where a figure found once would have taken "alone".
PAGE_TWO = """# The page

## Results: `preset`

| scheme | loss beside | goodput |
|---|---:|---:|
| PI | 0.70 | 9.10 |
| PIE | 0.90 | 9.20 |
| RED | 1.10 | 7.30 |
"""


def test_a_page_column_takes_the_report_column_most_rows_take(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, text = _retake(tmp_path, PAGE_TWO, "--write", old=OLD_TWO, new=NEW_TWO)
    assert status == 0
    assert "| PI | 0.75 | 9.15 |" in text
    assert "| PIE | 0.95 | 9.25 |" in text
    assert "| RED | 1.35 | 7.35 |" in text
    assert "'1.10' in '| RED | 1.10 | 7.30 |' was not the old report's '1.30'" in (
        capsys.readouterr().out
    )


def test_one_report_as_old_and_new_checks_the_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A page taken from the report: no row changed, every figure found; one figure left
    behind: its row told, and the figure the report has there."""
    taken = PAGE_TWO.replace("0.70 | 9.10", "0.75 | 9.15").replace("0.90 | 9.20", "0.95 | 9.25")
    taken = taken.replace("1.10 | 7.30", "1.35 | 7.35")
    assert _retake(tmp_path, taken, old=NEW_TWO, new=NEW_TWO) == (0, taken)
    out = capsys.readouterr().out
    assert "0 rows changed" in out and "not found" not in out
    behind = taken.replace("1.35 | 7.35", "1.10 | 7.35")
    assert _retake(tmp_path / "b", behind, old=NEW_TWO, new=NEW_TWO) == (0, behind)
    out = capsys.readouterr().out
    assert "1 rows changed" in out
    assert "'1.10' in '| RED | 1.10 | 7.35 |' was not the old report's '1.35'" in out
