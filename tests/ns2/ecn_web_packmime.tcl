# The ECN+ paper's RED* experiment (000_0675317d310dd341.txt, figure 3; docs/fidelity.md, item 7)
# in ns-2.35 with ns-2's own web model: PackMime-HTTP (Poisson connection arrivals, its own
# request and response sizes) over Full-TCP, whose ECN+ is `ecn_syn_` (ECN-capable SYN/ACKs).
# Client and server clouds on 1 Gbit/s, 19 ms links; R1-R2 at BW Mbit/s, 1 ms, 500 packets each
# way (RTT 78 ms, the middle of aqmlab's 10-150 ms). RED* is ns-2's RED with `use_mark_p_` and
# `mark_p_ 2.0`: every ECN-capable packet the average condemns is marked, above max_th too, and
# every other (SYN/ACKs without ECN+, pure ACKs) dropped; min_th 20, max_th 60, max_p 0.1,
# w_q 0.002, not gentle, queue in packets of 1500 bytes (the aqmlab preset ecn-web-000's RED*).
#
# Usage: ns ecn_web_packmime.tcl BW RATE DURATION ECN ECNPLUS QUEUE OUTFILE
#   BW Mbit/s (100, or 1000 for the uncongested reference), RATE new connections per second
#   (1440 offers about 90 Mbit/s: measured on 1000 Mbit/s), ECN and ECNPLUS 0 or 1, QUEUE RED
#   or DropTail. OUTFILE gets PackMime's record per response (column 1 the time, column 4 the
#   response time in ms); stdout the bytes and packets of the server-to-client queue.
lassign $argv bw rate dur ecn ecnplus qt out
set ns [new Simulator]
global defaultRNG
$defaultRNG seed 1
Agent/TCP/FullTcp set segsize_ 1460
Agent/TCP/FullTcp set ecn_ $ecn
if {$ecnplus} { Agent/TCP/FullTcp set ecn_syn_ true }
source [file join [file dirname [info script]] red_star.tcl]
source [file join [file dirname [info script]] fast_init.tcl]
source [file join [file dirname [info script]] fast_attach.tcl]
red_star $ecn
set c [$ns node]
set s [$ns node]
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $c $r1 1Gb 19ms DropTail
$ns duplex-link $s $r2 1Gb 19ms DropTail
$ns duplex-link $r1 $r2 ${bw}Mb 1ms $qt
$ns queue-limit $r1 $r2 500
$ns queue-limit $r2 $r1 500
foreach {a b} [list $c $r1 $r1 $c $s $r2 $r2 $s] { $ns queue-limit $a $b 100000 }
set qm [$ns monitor-queue $r2 $r1 ""]
set pm [new PackMimeHTTP]
$pm set-client $c
$pm set-server $s
$pm set-rate $rate
$pm set-outfile $out
$ns at 0.0 "$pm start"
proc done {} {
  global qm dur bw
  set util [expr [$qm set bdepartures_] * 8.0 / $dur / ($bw * 1e6)]
  puts "bytes [$qm set bdepartures_] drops [$qm set pdrops_] arrivals [$qm set parrivals_] util $util"
  exit 0
}
$ns at $dur "done"
$ns run
