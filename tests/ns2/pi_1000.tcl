# Thesis section 6.4.4's second phase with PI (docs/fidelity.md, item 20), in ns-2.35.
# Usage: ns pi_1000.tcl FORWARD REVERSE BYTES   (the figures: ns pi_1000.tcl 1000 50 false)
# Prints the forward bottleneck's arrivals, drops, departed bytes and mean queue at 50 s
# and at 150 s; loss = drops / arrivals over 50-150 s. Takes about 10 minutes.
set N [lindex $argv 0]; set R [lindex $argv 1]; set bytes [lindex $argv 2]
set ns [new Simulator]
global defaultRNG
$defaultRNG seed 1
Agent/TCP set packetSize_ 500
Agent/TCP set window_ 100000
Agent/TCP set ecn_ 1
Queue/PI set setbit_ true
Queue/PI set qref_ 150
Queue/PI set a_ 0.00007288
Queue/PI set b_ 0.00007264
Queue/PI set w_ 170
Queue/PI set bytes_ $bytes
set r1 [$ns node]; set r2 [$ns node]
$ns duplex-link $r1 $r2 15Mb 1ms PI
$ns queue-limit $r1 $r2 1000
$ns queue-limit $r2 $r1 1000
set qm [$ns monitor-queue $r1 $r2 ""]
set rng [new RNG]; $rng seed 1
for {set i 0} {$i < [expr $N + $R]} {incr i} {
  set s($i) [$ns node]; set d($i) [$ns node]
  set dl [$rng uniform 1 20]
  $ns duplex-link $s($i) $r1 100Mb ${dl}ms DropTail
  $ns duplex-link $d($i) $r2 100Mb 0ms DropTail
  foreach {a b} [list $s($i) $r1 $r1 $s($i) $d($i) $r2 $r2 $d($i)] { $ns queue-limit $a $b 100000 }
  set tcp($i) [new Agent/TCP/Newreno]; set sink($i) [new Agent/TCPSink]
  if {$i < $N} { $ns attach-agent $s($i) $tcp($i); $ns attach-agent $d($i) $sink($i) } else { $ns attach-agent $d($i) $tcp($i); $ns attach-agent $s($i) $sink($i) }
  $ns connect $tcp($i) $sink($i)
  set ftp($i) [new Application/FTP]; $ftp($i) attach-agent $tcp($i)
  $ns at [$rng uniform 0 10] "$ftp($i) start"
}
set qsum 0; set qn 0
proc sample {} { global ns qm qsum qn; if {[$ns now] >= 50} { set qsum [expr $qsum + [$qm set pkts_]]; incr qn }; $ns at [expr [$ns now] + 0.1] "sample" }
proc snap {} { global qm qsum qn; puts "[$qm set parrivals_] [$qm set pdrops_] [$qm set bdepartures_] [expr $qn > 0 ? $qsum/$qn.0 : 0]" }
$ns at 0.1 "sample"
$ns at 50 "snap"
$ns at 150 "snap; exit 0"
$ns run
