"""Control-theory tools of the seeds: the TCP fluid model (eq. 4.1 of
``003_b277268f444f7691.txt``), its linear loops and margins (eq. 4.2, 4.10,
6.2), the stability propositions (eq. 4.9, 6.3-6.5, REM's Theorem 1), the
tuning rules (eq. 4.3-4.6, 6.3 with Tustin's rule, 6.6), and scenario-level
checks against the packet-level engine. See ``docs/design.md``.

>>> from aqmlab import design
>>> net = design.Network(flows=60, rtt=0.246, capacity=3750)
>>> d = design.design_pi(net, sampling_freq=160, q_ref=200, rtt_total=True)
>>> round(d.law.a, 9), round(d.law.b, 9)
(1.8227e-05, 1.8166e-05)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aqmlab._lazy import lazy_names

if TYPE_CHECKING:
    from aqmlab.design.fluid import FluidResult, Phase, fluid
    from aqmlab.design.linear import (
        Loop,
        Margins,
        OperatingPoint,
        Proposition,
        loop,
        operating_point,
        pi_proposition,
        proposition,
        red_proposition,
        rem_proposition,
    )
    from aqmlab.design.model import (
        ApRedInitial,
        Avq,
        DesignError,
        Network,
        Pi,
        Red,
        Rem,
        ap_red_derive,
        law_from_aqm,
    )
    from aqmlab.design.packets import queue_verdict
    from aqmlab.design.scenario import LinkPhases, scenario_phases
    from aqmlab.design.study import GRID, check_scenario, compare, grid_study
    from aqmlab.design.tune import (
        Design,
        analyse,
        design_ap_red,
        design_pi,
        design_pi_gains,
        design_red,
        design_rem,
        pi_kp_z,
        scale_pi,
        to_toml,
    )

# The names are imported on first use (PEP 562): the linear analysis needs
# SciPy, which the CLI's other commands should not pay for at start-up.
_LAZY = {
    "ApRedInitial": "aqmlab.design.model",
    "Avq": "aqmlab.design.model",
    "Design": "aqmlab.design.tune",
    "DesignError": "aqmlab.design.model",
    "FluidResult": "aqmlab.design.fluid",
    "GRID": "aqmlab.design.study",
    "LinkPhases": "aqmlab.design.scenario",
    "Loop": "aqmlab.design.linear",
    "Margins": "aqmlab.design.linear",
    "Network": "aqmlab.design.model",
    "OperatingPoint": "aqmlab.design.linear",
    "Phase": "aqmlab.design.fluid",
    "Pi": "aqmlab.design.model",
    "Proposition": "aqmlab.design.linear",
    "Red": "aqmlab.design.model",
    "Rem": "aqmlab.design.model",
    "analyse": "aqmlab.design.tune",
    "ap_red_derive": "aqmlab.design.model",
    "check_scenario": "aqmlab.design.study",
    "compare": "aqmlab.design.study",
    "design_ap_red": "aqmlab.design.tune",
    "design_pi": "aqmlab.design.tune",
    "design_pi_gains": "aqmlab.design.tune",
    "design_red": "aqmlab.design.tune",
    "design_rem": "aqmlab.design.tune",
    "fluid": "aqmlab.design.fluid",
    "grid_study": "aqmlab.design.study",
    "law_from_aqm": "aqmlab.design.model",
    "loop": "aqmlab.design.linear",
    "operating_point": "aqmlab.design.linear",
    "pi_kp_z": "aqmlab.design.tune",
    "pi_proposition": "aqmlab.design.linear",
    "proposition": "aqmlab.design.linear",
    "queue_verdict": "aqmlab.design.packets",
    "red_proposition": "aqmlab.design.linear",
    "rem_proposition": "aqmlab.design.linear",
    "scale_pi": "aqmlab.design.tune",
    "scenario_phases": "aqmlab.design.scenario",
    "to_toml": "aqmlab.design.tune",
}

__all__ = [
    "GRID",
    "ApRedInitial",
    "Avq",
    "Design",
    "DesignError",
    "FluidResult",
    "LinkPhases",
    "Loop",
    "Margins",
    "Network",
    "OperatingPoint",
    "Phase",
    "Pi",
    "Proposition",
    "Red",
    "Rem",
    "analyse",
    "ap_red_derive",
    "check_scenario",
    "compare",
    "design_ap_red",
    "design_pi",
    "design_pi_gains",
    "design_red",
    "design_rem",
    "fluid",
    "grid_study",
    "law_from_aqm",
    "loop",
    "operating_point",
    "pi_kp_z",
    "pi_proposition",
    "proposition",
    "queue_verdict",
    "red_proposition",
    "rem_proposition",
    "scale_pi",
    "scenario_phases",
    "to_toml",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
