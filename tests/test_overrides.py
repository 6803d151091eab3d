"""``--set key=value`` parsing and application."""

from __future__ import annotations

from typing import Any

import pytest

from aqmlab import ScenarioError
from aqmlab.scenario import apply_overrides, format_key, parse_key, parse_override


@pytest.mark.parametrize(
    ("key", "steps"),
    [
        ("aqm.max_p", ["aqm", "max_p"]),
        ("traffic[0].flows", ["traffic", 0, "flows"]),
        ("traffic.0.flows", ["traffic", 0, "flows"]),
        ("topology.access_delay.uniform[1]", ["topology", "access_delay", "uniform", 1]),
        ("a[1][2]", ["a", 1, 2]),
        (" duration ", ["duration"]),
    ],
)
def test_parse_key(key: str, steps: list[Any]) -> None:
    assert parse_key(key) == steps


@pytest.mark.parametrize(
    "key", ["", "aqm..max_p", "traffic[x].flows", "traffic[-1]", "0.flows", "a]b", "a[1"]
)
def test_malformed_keys(key: str) -> None:
    with pytest.raises(ScenarioError, match="malformed"):
        parse_key(key)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("aqm.max_p=0.05", 0.05),
        ("traffic[0].flows=50", 50),
        ("aqm.gentle=false", False),
        ("aqm.kind=red", "red"),
        ('aqm.kind="red"', "red"),
        ("topology.bottleneck_rate=10Mbps", "10Mbps"),
        ("duration = 30s", "30s"),
        ('topology.access_delay={ uniform = ["1ms", "20ms"] }', {"uniform": ["1ms", "20ms"]}),
        ("x=[1, 2]", [1, 2]),
        ("x=", ""),
        ("x=a=b", "a=b"),
        ("x=1\ny = 2", "1\ny = 2"),
    ],
)
def test_parse_value(text: str, value: Any) -> None:
    assert parse_override(text)[1] == value


@pytest.mark.parametrize("text", ["aqm.max_p", "=3", "  =3"])
def test_malformed_overrides(text: str) -> None:
    with pytest.raises(ScenarioError, match="malformed override"):
        parse_override(text)


def test_apply(small_doc: dict[str, Any]) -> None:
    apply_overrides(
        small_doc,
        [
            "aqm.max_p=0.05",
            "traffic[0].flows=50",
            "traffic.0.direction=reverse",
            "reverse_aqm.kind=droptail",
            "topology.loss.kind=bernoulli",
            "topology.loss.p=0.01",
            "traffic[0].start.uniform[1]=9s",
        ],
    )
    assert small_doc["aqm"]["max_p"] == 0.05
    assert small_doc["traffic"][0]["flows"] == 50
    assert small_doc["traffic"][0]["direction"] == "reverse"
    assert small_doc["reverse_aqm"] == {"kind": "droptail"}
    assert small_doc["topology"]["loss"] == {"kind": "bernoulli", "p": 0.01}
    assert small_doc["traffic"][0]["start"]["uniform"] == ["0s", "9s"]


def test_later_overrides_win(small_doc: dict[str, Any]) -> None:
    apply_overrides(small_doc, ["seed=2", "seed=3"])
    assert small_doc["seed"] == 3


@pytest.mark.parametrize(
    ("text", "path", "fragment"),
    [
        ("traffic[1].flows=3", "traffic[1]", "out of range: traffic has 1 element"),
        ("traffic.5=3", "traffic[5]", "out of range"),
        ("traffic.flows=3", "traffic.flows", "traffic is an array"),
        ("aqm[0]=1", "aqm[0]", "aqm is a table"),
        ("duration.unit=s", "duration.unit", "duration is a string"),
        ("tcp.packet_size.x=1", "tcp.packet_size.x", "an integer"),
    ],
)
def test_apply_errors_name_the_key(
    small_doc: dict[str, Any], text: str, path: str, fragment: str
) -> None:
    with pytest.raises(ScenarioError) as e:
        apply_overrides(small_doc, [text])
    assert e.value.path == path
    assert fragment in e.value.msg


@pytest.mark.parametrize("steps", [["aqm", "max_p"], ["traffic", 0, "flows"], ["a", 1, 2, "b"]])
def test_format_key_round_trips(steps: list[Any]) -> None:
    assert parse_key(format_key(steps)) == steps
