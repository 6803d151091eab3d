#!/usr/bin/env bash
# Redraw the figures of docs/design.md into docs/figures/ (PNG files are not kept in git).
# Run from the repository root after `make build`: bash docs/figures/design.sh
set -euo pipefail
A=${AQMLAB:-.venv/bin/aqmlab}
F=docs/figures
D=tests/data
APRED='aqm={kind="ap-red",max_p0=0.05,min_th0=50,max_th0=150,w_q0=1e-4,n0=50,c0=2500,r0="120ms",estimator="oracle"}'
$A design ap-red --rate 12Mbps --rtt 250ms --flows 100 -o $F/design-ap-red-exp3.png
$A design pi --rate 15Mbps --rtt 246ms --rtt-total --flows 60 --q-ref 200 --sampling-freq 160 \
  -o $F/design-pi-hollot.png
$A design rem --rate 20Mbps --packet-size 1000 --rtt 80ms --flows 20 --buffer 300 \
  -o $F/design-rem.png
$A design check $D/design_exp3.toml -o $F/design-check-exp3.png
$A design fluid $D/design_exp3.toml -o $F/design-fluid-exp3-ared.png
$A design fluid $D/design_exp3.toml --set "$APRED" -o $F/design-fluid-exp3-ap-red.png
$A design fluid $D/design_pi.toml -o $F/design-fluid-pi-50.png
$A design fluid $D/design_pi.toml --set aqm.q_ref=500 -o $F/design-fluid-pi-500.png
$A design grid -o $F/design-grid.png --json ${TMPDIR:-/tmp}/design-grid.json
