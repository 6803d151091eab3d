# Sourced by ecn_web_webtraf.tcl: WebTraf's four per-object procedures (ns-2.35's webtraf.tcl:
# launch and completion of an object's request and response connections) with the same steps in
# the same order, each made in fewer Tcl commands: an agent's or the pool's C++ command through
# `cmd` (what OTcl's `unknown` handler does after building and parsing a script), an agent's
# bound variable through an `instvar` link (what SplitObject's `set` does after Agent's check
# for the retired `dst_`), a node's id and the clock read directly. Same output to the byte.

# A node's id (its id_ is set when it is made and never changes).
proc aqmlab-node-id {node} {
  if {![info exists ::aqmlab_node_id($node)]} {
    set ::aqmlab_node_id($node) [$node id]
  }
  return $::aqmlab_node_id($node)
}

# What `[Simulator instance] now` gives.
proc aqmlab-now {} {
  if {![info exists ::aqmlab_scheduler]} {
    set ::aqmlab_scheduler [[Simulator instance] set scheduler_]
  }
  return [$::aqmlab_scheduler cmd now]
}

# An object's connection opened: its sender on node `from`, its sink on `to`, the two connected,
# the flow id set as WebTraf's FID_ASSIGNING_MODE_ asks (the same steps in launch-req, launch-resp
# and done-resp); returns the sender's flow id.
proc aqmlab-open {ns from to tcp snk id} {
  $ns attach-agent $from $tcp
  $ns attach-agent $to $snk
  $ns connect $tcp $snk
  if {[PagePool/WebTraf set fulltcp_] == 1} {
    $snk listen
  }
  $tcp instvar fid_
  if {[PagePool/WebTraf set FID_ASSIGNING_MODE_] == 0} {
    set fid_ $id
    if {[PagePool/WebTraf set fulltcp_] == 1} {
      $snk set fid_ $id
    }
  }
  return $fid_
}

PagePool/WebTraf instproc launch-req {id pid clnt svr ctcp csnk size} {
  $self instvar timer_
  set launch_req 1
  set flow_th [PagePool/WebTraf set FLOW_SIZE_TH_]
  if {[PagePool/WebTraf set FLOW_SIZE_OPS_] == 1 && $size > $flow_th} {
    set launch_req 0
  }
  if {$launch_req == 1} {
    set ns [Simulator instance]
    aqmlab-open $ns $clnt $svr $ctcp $csnk $id
    set timer_ [$self get-conn-timer $ctcp $csnk $clnt $svr]
    $ctcp proc done {} "$self done-req $id $pid $clnt $svr $ctcp $csnk $size $timer_"
    if {[PagePool/WebTraf set req_trace_]} {
      puts "req + $id $pid $size [aqmlab-node-id $clnt] [aqmlab-node-id $svr] [aqmlab-now]"
    }
    $self send-message $ctcp 1
  }
}

PagePool/WebTraf instproc done-req {id pid clnt svr ctcp csnk size timer} {
  if {[PagePool/WebTraf set enable_conn_timer_]} {
    $timer cancel
    delete $timer
  }
  set ns [Simulator instance]
  $ns detach-agent $clnt $ctcp
  $ns detach-agent $svr $csnk
  $ctcp cmd reset
  $csnk cmd reset
  set delay [$self cmd job_arrival $id $clnt $svr $ctcp $csnk $size $pid]
  if {$delay == 0} {
    if {[PagePool/WebTraf set req_trace_]} {
      puts "req d $id $pid $size [aqmlab-node-id $clnt] [aqmlab-node-id $svr] [aqmlab-now]"
    }
    $self cmd recycle $ctcp $csnk
    $self cmd doneObj $pid
  } elseif {[PagePool/WebTraf set req_trace_]} {
    puts "req - $id $pid $size [aqmlab-node-id $clnt] [aqmlab-node-id $svr] [aqmlab-now]"
  }
}

PagePool/WebTraf instproc launch-resp {id pid svr clnt stcp ssnk size} {
  set flow_th [PagePool/WebTraf set FLOW_SIZE_TH_]
  set ns [Simulator instance]
  set fid [aqmlab-open $ns $svr $clnt $stcp $ssnk $id]
  if {[PagePool/WebTraf set FLOW_SIZE_OPS_] == 2 && $size > $flow_th} {
    set sent $flow_th
  } else {
    set sent $size
  }
  set now [aqmlab-now]
  $stcp proc done {} \
    "$self done-resp $id $pid $clnt $svr $stcp $ssnk $size $sent $flow_th $now $fid"
  if {[PagePool/WebTraf set resp_trace_]} {
    puts "resp + $id $pid $sent $size [aqmlab-node-id $svr] [aqmlab-node-id $clnt] $now"
  }
  $self send-message $stcp $sent
}

PagePool/WebTraf instproc done-resp {id pid clnt svr stcp ssnk size sent sent_th startTime fid} {
  set ns [Simulator instance]
  set now [aqmlab-now]
  if {[PagePool/WebTraf set resp_trace_]} {
    puts "resp - $id $pid $sent $size [aqmlab-node-id $svr] [aqmlab-node-id $clnt] $now"
  }
  if {[PagePool/WebTraf set VERBOSE_] == 1} {
    puts "done-resp - $id [aqmlab-node-id $svr] [aqmlab-node-id $clnt] $size $startTime $now $fid"
  }
  $stcp cmd reset
  $ssnk cmd reset
  $ns detach-agent $clnt $ssnk
  $ns detach-agent $svr $stcp
  if {$sent < $size} {
    set fid [aqmlab-open $ns $svr $clnt $stcp $ssnk $id]
    set left [expr {$size - $sent}]
    if {$left <= $sent_th} {
      set part $left
    } else {
      set part $sent_th
    }
    if {[PagePool/WebTraf set resp_trace_]} {
      puts "resp + $id $pid $part $size [aqmlab-node-id $svr] [aqmlab-node-id $clnt] $now"
    }
    set sent [expr {$sent + $part}]
    $stcp proc done {} \
      "$self done-resp $id $pid $clnt $svr $stcp $ssnk $size $sent $sent_th $now $fid"
    $self send-message $stcp $part
  } else {
    $self cmd recycle $stcp $ssnk
    $self cmd doneObj $pid
  }
}

PagePool/WebTraf instproc send-message {tcp num_packet} {
  if {[PagePool/WebTraf set fulltcp_] == 1} {
    $tcp sendmsg [expr {$num_packet * 1000}] "MSG_EOF"
  } else {
    $tcp cmd advanceby $num_packet
  }
}
