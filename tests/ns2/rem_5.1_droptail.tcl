# The REM paper's section 5.1 (002_80945567bf68047d.txt, figure 7) with DropTail in ns-2.35
# (docs/fidelity.md, item 6): 2 Mbit/s wireless link, 20 ms, buffer 100 packets, 1 % packet
# loss (ErrorModel after the queue), 48-byte packets (useHeaders_ false: the packet is
# packetSize_ bytes on the wire, as in the ns-2 of 2001), NewReno sources with round trips of
# 80 ms +- 2 % (access links 9.6-10.4 ms, 100 Mbit/s), started within 1 s.
# Usage: ns rem_5.1_droptail.tcl SOURCES SEED OLD RWND [DECREASE]
#   OLD 1: ns-2's TCP defaults of 2001 (tcpTick_ 0.1, minrto_ 0, windowInit_ 1, rtxcur_init_ 6,
#          no limited transmit, Slow-but-Steady NewReno); 0: ns-2.35's
#   RWND: the advertised window in packets (ns-2's default window_ is 20)
#   DECREASE: ns-2's decrease_num_, the factor of a cut on duplicate ACKs (default 0.5); 1.0 is
#          the paper's modified NewReno, which does not cut there (a connection's first cut and
#          a timeout's ssthresh still halve)
# Prints, at 20 s and 100 s: the time, the sum of the sources' cumulative ACKs (packets) and of
# their timeouts. Goodput = difference of the ACK sums / (80 s x 5208.3 packets/s).
lassign $argv N seed old rwnd decrease
if {$decrease eq ""} { set decrease 0.5 }
set ns [new Simulator]
global defaultRNG
$defaultRNG seed $seed
Agent/TCP set useHeaders_ false
Agent/TCP set packetSize_ 48
Agent/TCP set window_ $rwnd
Agent/TCP set decrease_num_ $decrease
if {$old} {
  Agent/TCP set tcpTick_ 0.1
  Agent/TCP set minrto_ 0
  Agent/TCP set windowInit_ 1
  Agent/TCP set singledup_ 0
  Agent/TCP set rtxcur_init_ 6.0
  Agent/TCP/Newreno set newreno_changes1_ 0
}
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 2Mb 20ms DropTail
$ns queue-limit $r1 $r2 100
$ns queue-limit $r2 $r1 100
set em [new ErrorModel]
$em set rate_ 0.01
$em unit pkt
$em ranvar [new RandomVariable/Uniform]
$em drop-target [new Agent/Null]
$ns lossmodel $em $r1 $r2
set rng [new RNG]
$rng seed $seed
for {set i 0} {$i < $N} {incr i} {
  set s($i) [$ns node]
  set d($i) [$ns node]
  set dl [expr 9.6 + 0.8 * [$rng uniform 0 1]]
  $ns duplex-link $s($i) $r1 100Mb ${dl}ms DropTail
  $ns duplex-link $d($i) $r2 100Mb ${dl}ms DropTail
  foreach {a b} [list $s($i) $r1 $r1 $s($i) $d($i) $r2 $r2 $d($i)] { $ns queue-limit $a $b 100000 }
  set tcp($i) [new Agent/TCP/Newreno]
  set sink($i) [new Agent/TCPSink]
  $ns attach-agent $s($i) $tcp($i)
  $ns attach-agent $d($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  $ns at [$rng uniform 0 1] "$ftp($i) start"
}
proc snap {} {
  global tcp N
  set acked 0; set timeouts 0
  for {set i 0} {$i < $N} {incr i} {
    set acked [expr $acked + [$tcp($i) set ack_]]
    set timeouts [expr $timeouts + [$tcp($i) set nrexmit_]]
  }
  puts "[[Simulator instance] now] $acked $timeouts"
}
$ns at 20 "snap"
$ns at 100 "snap; exit 0"
$ns run
