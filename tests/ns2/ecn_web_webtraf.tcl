# The ECN+ paper's RED* experiment (000_0675317d310dd341.txt, figure 3; docs/fidelity.md, item 7)
# in ns-2.35 with the web model the paper cites as [11]: ns-2's WebTraf (sessions of pages of
# objects, after Feldmann et al.). WebTraf spends two connections on each object: the client
# opens a request connection (its SYN; the server's SYN/ACK and its ACK of the one-packet request
# cross the congested direction), and once that is acknowledged the server opens a response
# connection (its SYN crosses the congested direction too). ECN+ (TCPSink's `ecn_syn_`) makes
# only the SYN/ACK ECN-capable. aqmlab's `http = "webtraf"` is this pattern.
#
# Clients: 140 nodes on 1 Gbit/s links of one-way delay 4-74 ms (evenly spread, 0.5 ms apart),
# the server node on a 1 Gbit/s link of 0 ms, R1-R2 at BW Mbit/s and 1 ms: round trips of
# 10-150 ms, as the paper, 1 ms apart (a session picks its client at random and keeps it; with
# 30 clients, 4.7 ms apart, the grid alone moved the share within 0.5 s by 1-2 points against
# aqmlab's uniform draw). R1-R2 has 500 packets each way. RED* is ns-2's RED with `use_mark_p_`
# and `mark_p_ 2.0` (every ECN-capable packet the average condemns is marked, above max_th too,
# any other one dropped); min_th 20, max_th 60, max_p 0.1, w_q 0.002, not gentle, in packets (as
# ecn_web_packmime.tcl and the aqmlab preset ecn-web-000).
#
# Sessions: think time (end of a page to the start of the next) Pareto of mean 5 s, shape 1.5;
# objects per page ceil(Exponential of mean 2.5) (about 3); objects launched at Exponential
# gaps of mean 50 ms; object sizes ceil(Pareto of mean 4.4, shape 1.2) segments of 1460 bytes
# (about 7.2 KB; 1500-byte packets), or with SIZES a CDF file for ns-2's Empirical random
# variable, whose lines "k 0 P(object <= k segments)" give the segment counts (aqmlab's object
# sizes, written by ecn_web_webtraf.py). ns-2.35's one-way TCP (NewReno, TCPSink, `syn_`: a 40-byte
# SYN that is not ECN-capable, answered by the sink's ACK as the SYN/ACK, ECN-capable with
# ECN+) and its defaults otherwise. (WebTraf's Full-TCP mode was tried: there the request
# connections never closed, so that no response started.)
#
# Pages: WebTraf's think time runs from the end of a page to the start of the next (its
# `interPageOption_ 1`, the default since November 2001), or with PAGES "open" from the start of
# a page to the start of the next, whether the page has arrived or not (`interPageOption_ 0`, as
# before 2001, and as a replayed request trace; aqmlab's `pages = "open"`).
#
# Sessions begin with a page, as WebTraf's `create-session` starts them, at times uniform in
# 0-5 s; or with STARTS a file of one start time per session (ecn_web_webtraf.py writes draws from
# the think time's equilibrium residual there, so that the page requests are stationary from the
# start, as aqmlab's default `first_page = "residual"`).
#
# Initial windows: ns-2.35's TcpAgent::timeout() applies RFC 5681's one-segment window after a
# lost SYN by setting the agent's own `windowInit_` to 1 (`bugfix_ss_`, added in 2006), and
# WebTraf recycles its agents, so every later connection on that agent (any session's) starts
# with one segment too; over a congested run more and more of the pool does. With IW "connection"
# the window is restored at every launch, so that the rule acts on the connection that lost its
# SYN only (aqmlab's `syn_loss_cut`); with IW "agent" (or none given) ns-2 runs as it is.
#
# Usage: ns ecn_web_webtraf.tcl BW SESSIONS DURATION ECN ECNPLUS SEED [SIZES [PAGES [IW [STARTS]]]]
#   stdout: WebTraf's request and response records ("req + id page size client server time",
#   "resp - id page sent size server client time"), then a line "queue bytes B drops D
#   arrivals A util U" for the server-to-client R2-R1 queue; every second "bytes T B D" (the
#   bytes departed from and packets dropped at that queue so far).
lassign $argv bw nsess dur ecn ecnplus seed sizes pages iw starts
set nclient 140
set ns [new Simulator]
global defaultRNG
$defaultRNG seed $seed
Agent/TCP set ecn_ $ecn
Agent/TCP set packetSize_ 1460
if {$ecnplus} { Agent/TCPSink set ecn_syn_ true }
source [file join [file dirname [info script]] red_star.tcl]
source [file join [file dirname [info script]] fast_init.tcl]
source [file join [file dirname [info script]] fast_attach.tcl]
source [file join [file dirname [info script]] fast_webtraf.tcl]
red_star $ecn
set r1 [$ns node]
set r2 [$ns node]
set srv [$ns node]
$ns duplex-link $srv $r2 1Gb 0ms DropTail
$ns queue-limit $srv $r2 100000
$ns queue-limit $r2 $srv 100000
for {set i 0} {$i < $nclient} {incr i} {
  set c($i) [$ns node]
  set d [expr 4.0 + 70.0 * ($i + 0.5) / $nclient]
  $ns duplex-link $c($i) $r1 1Gb ${d}ms DropTail
  $ns queue-limit $c($i) $r1 100000
  $ns queue-limit $r1 $c($i) 100000
}
$ns duplex-link $r1 $r2 ${bw}Mb 1ms RED
$ns queue-limit $r1 $r2 500
$ns queue-limit $r2 $r1 500
set qm [$ns monitor-queue $r2 $r1 ""]

PagePool/WebTraf set TCPTYPE_ Newreno
PagePool/WebTraf set req_trace_ 1
PagePool/WebTraf set resp_trace_ 1
set pool [new PagePool/WebTraf]
if {$iw eq "connection"} {
  PagePool/WebTraf instproc send-message {tcp num_packet} {
    $tcp instvar windowInit_
    set windowInit_ [Agent/TCP set windowInit_]
    $tcp cmd advanceby $num_packet
  }
}
$pool set-num-client $nclient
$pool set-num-server 1
for {set i 0} {$i < $nclient} {incr i} { $pool set-client $i $c($i) }
$pool set-server 0 $srv
$pool set-server-mode 0
$pool set-num-session $nsess
set start [new RandomVariable/Uniform]
$start set min_ 0
$start set max_ 5
if {$starts ne ""} {
  set fh [open $starts]
  set startlist [split [string trim [read $fh]] "\n"]
  close $fh
}
for {set i 0} {$i < $nsess} {incr i} {
  set interPage [new RandomVariable/Pareto]
  $interPage set avg_ 5.0
  $interPage set shape_ 1.5
  set pageSize [new RandomVariable/Exponential]
  $pageSize set avg_ 2.5
  set interObj [new RandomVariable/Exponential]
  $interObj set avg_ 0.05
  if {$sizes == ""} {
    set objSize [new RandomVariable/Pareto]
    $objSize set avg_ 4.4
    $objSize set shape_ 1.2
  } else {
    set objSize [new RandomVariable/Empirical]
    $objSize set interpolation_ 0
    $objSize loadCDF $sizes
  }
  if {$starts ne ""} { set st [lindex $startlist $i] } else { set st [$start value] }
  $pool create-session $i 1000000 $st $interPage $pageSize $interObj $objSize
}
if {$pages eq "open"} { $pool set-interPageOption 0 }
proc tick {} {
  global ns qm
  puts "bytes [$ns now] [$qm set bdepartures_] [$qm set pdrops_]"
  $ns at [expr [$ns now] + 1.0] "tick"
}
$ns at 1.0 "tick"
proc done {} {
  global qm dur bw
  set util [expr [$qm set bdepartures_] * 8.0 / $dur / ($bw * 1e6)]
  puts "queue bytes [$qm set bdepartures_] drops [$qm set pdrops_] arrivals [$qm set parrivals_] util $util"
  flush stdout
  exit 0
}
$ns at $dur "done"
$ns run
