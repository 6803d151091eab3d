# RED* of the ECN+ paper (000_0675317d310dd341.txt; docs/fidelity.md, item 7) as ns-2.35's RED:
# `use_mark_p_` with `mark_p_ 2.0`, so that every ECN-capable packet the average condemns is
# marked (above max_th too) and any other one dropped; min_th 20, max_th 60, max_p 0.1 (linterm_
# 10), w_q 0.002, not gentle, queue in packets of 1500 bytes (the aqmlab preset ecn-web-000's
# RED*). Marking is on when ECN is (1) and off otherwise (0). Sourced by ecn_web_packmime.tcl and
# ecn_web_webtraf.tcl.
proc red_star {ecn} {
  Queue/RED set setbit_ [expr $ecn ? "true" : "false"]
  Queue/RED set gentle_ false
  Queue/RED set thresh_ 20
  Queue/RED set maxthresh_ 60
  Queue/RED set q_weight_ 0.002
  Queue/RED set linterm_ 10
  Queue/RED set use_mark_p_ true
  Queue/RED set mark_p_ 2.0
  Queue/RED set mean_pktsize_ 1500
  Queue/RED set queue_in_bytes_ false
  Queue/RED set bytes_ false
}
