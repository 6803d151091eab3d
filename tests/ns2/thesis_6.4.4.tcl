# Thesis section 6.4.4 in ns-2.35 without the HTTP sessions (docs/fidelity.md, item 20): 15 Mbit/s,
# 1 ms bottleneck, source access delays uniform in 1-20 ms, ECN flows, buffer 1000.
# Usage: ns thesis_6.4.4.tcl AQM FORWARD REVERSE BYTES
#   ns thesis_6.4.4.tcl pi 1000 50 false    PI at q_ref 150, ns-2's defaults (about 10 minutes)
#   ns thesis_6.4.4.tcl pi 1000 50 true     the same with PI's bytes_ (size-scaled probability)
#   ns thesis_6.4.4.tcl ared 100 50 false   ARED(75, 225), the first phase (about 30 s)
# Prints at 50 s and 150 s: arrivals, drops, departed bytes, and the queue's mean (packets) and
# the mean and standard deviation in 500-byte units over samples every 100 ms from 50 s.
set aqm [lindex $argv 0]; set N [lindex $argv 1]; set R [lindex $argv 2]; set bytes [lindex $argv 3]
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
Queue/RED set setbit_ true
Queue/RED set thresh_ 75
Queue/RED set maxthresh_ 225
Queue/RED set q_weight_ 0.00005
Queue/RED set adaptive_ 1
Queue/RED set interval_ 2.0
set r1 [$ns node]; set r2 [$ns node]
if {$aqm == "pi"} { set qt PI } else { set qt RED }
$ns duplex-link $r1 $r2 15Mb 1ms $qt
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
set qsum 0; set qn 0; set q2 0; set psum 0
proc sample {} { global ns qm qsum qn q2 psum; if {[$ns now] >= 50} { set psum [expr $psum + [$qm set pkts_]]; set qsum [expr $qsum + ([$qm set size_]/500.0)]; set q2 [expr $q2 + ([$qm set size_]/500.0)*([$qm set size_]/500.0)]; incr qn }; $ns at [expr [$ns now] + 0.1] "sample" }
proc snap {} {
  global qm qsum qn q2 psum
  if {$qn > 0} {
    set m [expr $qsum/$qn.0]; set sd [expr sqrt($q2/$qn.0 - $m*$m)]; set mp [expr $psum/$qn.0]
  } else { set m 0; set sd 0; set mp 0 }
  puts "[$qm set parrivals_] [$qm set pdrops_] [$qm set bdepartures_] $mp $m $sd"
}
$ns at 0.1 "sample"
$ns at 50 "snap"
$ns at 150 "snap; exit 0"
$ns run
