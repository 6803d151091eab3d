"""Experiment output folders built by hand, as the contract in docs/experiments.md says the
runner writes them: experiment.json, points/<id>/ (real runs of tiny scenarios, via
aqmlab.run and save), failed/<id>.json and summary.parquet."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import aqmlab
from aqmlab import scenario

TESTS = Path(__file__).resolve().parent
SMALL = TESTS / "data" / "small.toml"
WEB = TESTS.parent / "scenarios" / "web.toml"

#: A bulk-traffic experiment: RED vs ARED, flows 10 / 20, two seeds, two phases, 8 s each.
BULK: dict[str, Any] = {
    "experiment": {
        "name": "test-bulk",
        "title": "RED against ARED on the small dumbbell",
        "source": "tests/expfolder.py",
        "scenario": "small.toml",
        "seeds": [1, 2],
        "set": ['duration="8s"', 'metrics.start="2s"', "metrics.phases=[[2,5],[5,8]]"],
        "notes": "The paper is silent on **everything** here.\n\n- a list item\n- `code`",
    },
    "scheme": [
        {"name": "RED", "set": ['aqm.kind="red"']},
        {"name": "ARED", "set": ['aqm.kind="ared"']},
    ],
    "factor": [{"name": "flows", "key": "traffic[0].flows", "values": [10, 20]}],
    "phase": [{"name": "2-5 s"}, {"name": "5-8 s"}],
    "metric": [
        {
            "name": "utilisation",
            "summary": "bottleneck.utilization",
            "unit": "%",
            "scale": 100.0,
            "digits": 1,
            "stat": "mean",
            "better": "higher",
        },
        {
            "name": "queue",
            "derived": "queue_mean",
            "unit": "pkts",
            "digits": 1,
            "better": "lower",
        },
        {
            "name": "deviation",
            "derived": "queue_std_mean",
            "args": {"window_s": 1.5},
            "unit": "pkts",
            "digits": 1,
            "stat": "range",
            "better": "lower",
        },
        {"name": "max_p", "derived": "param_mean", "args": {"name": "max_p"}, "better": "none"},
    ],
    "table": [
        {
            "name": "Table 1",
            "rows": ["scheme"],
            "columns": ["phase"],
            "metrics": ["utilisation", "queue"],
        },
        {"name": "Table 2", "rows": ["flows"], "columns": ["scheme"], "metrics": ["deviation"]},
    ],
    "paper": [
        # Kept (RED's utilisation above ARED's) or not: the tests read the pairs.
        {
            "scheme": "RED",
            "phase": "2-5 s",
            "factors": {"flows": 10},
            "metric": "utilisation",
            "value": 90.0,
            "note": "made up",
        },
        {
            "scheme": "ARED",
            "phase": "2-5 s",
            "factors": {"flows": 10},
            "metric": "utilisation",
            "value": 80.0,
        },
        {
            "scheme": "RED",
            "phase": "5-8 s",
            "factors": {"flows": 10},
            "metric": "queue",
            "value": 25.0,
        },
        {
            "scheme": "ARED",
            "phase": "5-8 s",
            "factors": {"flows": 10},
            "metric": "queue",
            "value": 25.0,
        },
        {"scheme": "RED", "factors": {"flows": 20}, "metric": "deviation", "range": [5.0, 9.0]},
    ],
    "figure": [
        {
            "name": "queue",
            "title": "Queue against time",
            "kind": "timeseries",
            "series": ["queue_pkts", "avg", "param:max_th", "param:max_p"],
            "paper_ref": "Fig. 1",
        },
        {
            "name": "util-flows",
            "title": "Utilisation",
            "kind": "metric_vs_factor",
            "metric": "utilisation",
            "factor": "flows",
        },
        {
            "name": "queue-phases",
            "title": "Mean queue per phase",
            "kind": "phase_bars",
            "metric": "queue",
        },
    ],
}

#: A web experiment: RED against PI, one factor-less point per scheme and seed, a CDF figure.
WEB_EXP: dict[str, Any] = {
    "experiment": {
        "name": "test-web",
        "title": "Response times, RED against PI",
        "source": "tests/expfolder.py",
        "scenario": "web.toml",
        "seeds": [1],
        "set": ['duration="5s"', 'metrics.start="1s"', 'traffic[0].offered_load="60Mbps"'],
        "notes": "",
    },
    "scheme": [
        {"name": "RED", "set": []},
        {"name": "PI", "set": ['aqm={kind="pi", q_ref=50, ecn=true}']},
    ],
    "metric": [
        {
            "name": "within 0.5 s",
            "derived": "response_within",
            "args": {"t_s": 0.5},
            "unit": "%",
            "scale": 100.0,
            "digits": 1,
            "better": "higher",
        },
        {"name": "completed", "derived": "completed_requests", "digits": 0, "better": "higher"},
    ],
    "table": {"name": "Table W", "rows": ["scheme"], "columns": [], "metrics": ["completed"]},
    "paper": [],
    "figure": [
        {"name": "cdf", "title": "Response times", "kind": "cdf", "x_max": 2.0},
        {"name": "ccdf", "title": "Tail", "kind": "cdf", "x_max": 5.0, "tail": True},
    ],
}


#: An experiment of one's own: no paper numbers, a factor of three values, four metrics (a
#: table of 12 columns, as a user's scheme x buffer sweep has), a queueing-delay CDF.
OWN: dict[str, Any] = {
    "experiment": {
        "name": "test-own",
        "title": "RED against ARED over three loads, my own",
        "scenario": "small.toml",
        "seeds": [1, 2],
        "set": ['duration="6s"', 'metrics.start="2s"', 'metrics.window="1s"'],
        "notes": "",
    },
    "scheme": [
        {"name": "RED", "set": ['aqm.kind="red"']},
        {"name": "ARED", "set": ['aqm.kind="ared"']},
    ],
    "factor": [{"name": "flows", "key": "traffic[0].flows", "values": [5, 10, 20]}],
    "metric": [
        {"name": "utilisation", "summary": "bottleneck.utilization", "unit": "%",
         "scale": 100.0, "digits": 1, "better": "higher"},
        {"name": "delay", "summary": "bottleneck.queuing_delay_mean_s", "unit": "ms",
         "scale": 1000.0, "digits": 1, "better": "lower"},
        {"name": "loss", "summary": "bottleneck.loss_rate", "unit": "%", "scale": 100.0,
         "digits": 2, "better": "lower"},
        {"name": "goodput", "summary": "flows.goodput_bps_total", "unit": "Mb/s", "scale": 1e-6,
         "digits": 2, "better": "higher"},
    ],
    "table": {"name": "Results", "rows": ["scheme"], "columns": ["flows"],
              "metrics": ["utilisation", "delay", "loss", "goodput"]},
    "figure": [
        {"name": "delay-cdf", "title": "Queueing delay", "kind": "cdf", "of": "delay",
         "log_x": True},
        {"name": "util-bars", "title": "Utilisation", "kind": "phase_bars",
         "metric": "utilisation"},
    ],
}  # fmt: skip


def point_id(resolved: dict[str, Any], seed: int) -> str:
    text = json.dumps({"scenario": resolved, "seed": seed}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        elif isinstance(v, (int, float, str, bool)):
            out[f"{prefix}{k}"] = v
    return out


def build(
    root: Path,
    exp: dict[str, Any],
    scenario_file: Path,
    fail: set[tuple[str, int]] | None = None,
) -> Path:
    """Run every point of ``exp`` (tiny runs) and write its output folder in ``root``. The
    points (scheme, seed) in ``fail`` are recorded as failed instead of run."""
    exp = copy.deepcopy(exp)
    fail = fail or set()
    out = root / exp["experiment"]["name"]
    (out / "points").mkdir(parents=True)
    factors = exp.get("factor", [])
    combos: list[dict[str, Any]] = [{}]
    for f in factors:
        combos = [{**c, f["name"]: v} for c in combos for v in f["values"]]
    phases = [p["name"] for p in exp.get("phase", [])]
    rows: list[dict[str, Any]] = []
    for s in exp["scheme"]:
        for combo in combos:
            for seed in exp["experiment"]["seeds"]:
                sets = list(exp["experiment"].get("set", [])) + list(s["set"])
                for f in factors:
                    sets.append(f"{f['key']}={json.dumps(combo[f['name']])}")
                doc = aqmlab.load(scenario_file)
                scenario.apply_overrides(doc, sets)
                doc["seed"] = seed
                resolved = scenario.validate(doc)
                pid = point_id(resolved, seed)
                base = {"id": pid, "scheme": s["name"], **combo, "seed": seed}
                if (s["name"], seed) in fail:
                    (out / "failed").mkdir(exist_ok=True)
                    err = "simulated failure for the tests"
                    info = {"id": pid, "scheme": s["name"], "factors": combo, "seed": seed}
                    (out / "failed" / f"{pid}.json").write_text(json.dumps({**info, "error": err}))
                    for i, ph in enumerate(["all", *phases]):
                        rows.append(
                            {
                                **base,
                                "phase": ph,
                                "phase_index": i - 1,
                                "start_s": None,
                                "end_s": None,
                                "status": "failed",
                                "error": err,
                            }
                        )
                    continue
                r = aqmlab.run(doc)
                d = r.save(out / "points" / pid, command=["test"])
                info = {"id": pid, "scheme": s["name"], "factors": combo, "seed": seed}
                (d / "point.json").write_text(json.dumps({**info, "status": "ok"}))
                summ = r.summary
                rows.append(
                    {
                        **base,
                        "phase": "all",
                        "phase_index": -1,
                        "start_s": summ["measure_start_s"],
                        "end_s": summ["duration_s"],
                        "status": "ok",
                        "error": None,
                        **_flatten(summ),
                    }
                )
                for i, ph in enumerate(phases):
                    e = dict(summ["phases"][i])
                    st, en = e.pop("start_s"), e.pop("end_s")
                    rows.append(
                        {
                            **base,
                            "phase": ph,
                            "phase_index": i,
                            "start_s": st,
                            "end_s": en,
                            "status": "ok",
                            "error": None,
                            **_flatten(e),
                        }
                    )
    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    table = pa.Table.from_pylist([{c: r.get(c) for c in cols} for r in rows])
    pq.write_table(table, out / "summary.parquet")
    exp.update(
        {
            "command": ["aqmlab", "sweep", f"{exp['experiment']['name']}.toml"],
            "versions": {"aqmlab": aqmlab.__version__, "engine": aqmlab.__version__},
            "created": "2026-01-01T00:00:00+00:00",
            "quick": False,
        }
    )
    (out / "experiment.json").write_text(json.dumps(exp, indent=2))
    return out
