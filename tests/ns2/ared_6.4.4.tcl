# Thesis section 6.4.4's first phase with ARED(75, 225) and ECN (docs/fidelity.md, item 20), in
# ns-2.35, without the HTTP sessions. Usage: ns ared_6.4.4.tcl 100 50 false. Prints at 50 s and
# 150 s: arrivals, drops, departed bytes, and the queue's mean and standard deviation in
# 500-byte packets over samples every 100 ms from 50 s. Takes about 30 s.
set N [lindex $argv 0]; set R [lindex $argv 1]; set bytes [lindex $argv 2]
set ns [new Simulator]
global defaultRNG
$defaultRNG seed 1
Agent/TCP set packetSize_ 500
Agent/TCP set window_ 100000
Agent/TCP set ecn_ 1
Queue/RED set setbit_ true
Queue/RED set thresh_ 75
Queue/RED set maxthresh_ 225
Queue/RED set q_weight_ 0.00005
Queue/RED set adaptive_ 1
Queue/RED set interval_ 2.0
set r1 [$ns node]; set r2 [$ns node]
$ns duplex-link $r1 $r2 15Mb 1ms RED
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
set qsum 0; set qn 0; set q2 0
proc sample {} { global ns qm qsum qn q2; if {[$ns now] >= 50} { set qsum [expr $qsum + ([$qm set size_]/500.0)]; set q2 [expr $q2 + ([$qm set size_]/500.0)*([$qm set size_]/500.0)]; incr qn }; $ns at [expr [$ns now] + 0.1] "sample" }
proc snap {} { global qm qsum qn q2; if {$qn > 0} {set m [expr $qsum/$qn.0]; set sd [expr sqrt($q2/$qn.0 - $m*$m)]} else {set m 0; set sd 0}; puts "[$qm set parrivals_] [$qm set pdrops_] [$qm set bdepartures_] $m $sd" }
$ns at 0.1 "sample"
$ns at 50 "snap"
$ns at 150 "snap; exit 0"
$ns run
