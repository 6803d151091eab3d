# Sourced by the ns-2.35 scripts whose agents are attached, detached and connected while they
# run (WebTraf attaches four agents and connects two pairs for each web object and detaches the
# four when the object is done; PackMime attaches and connects a pair for each connection).
# ns-2's own procedures reach the same few settings through layers of method calls (the node's
# routing modules, checks for SCTP, AbsTCP and Asim, and every setting through SplitObject's
# `set` and `unknown`, 9-15 Tcl commands each): about 100-135 us an attach or a connect and 80 a
# detach, over half of a WebTraf run. These make the same settings in the same order in fewer
# commands: bound variables through `instvar` links, C++ commands through `cmd` (what `set` and
# `unknown` end in). They cover what the scripts build: flat addresses, plain nodes whose only
# routing module is the base one, agents neither SCTP nor AbsTCP, Asim off; anything else is
# handed to ns-2's procedure. Same output to the byte.
foreach p {attach-agent detach-agent connect} {
  Simulator instproc ns2-$p [Simulator info instargs $p] [Simulator info instbody $p]
}
Node instproc ns2-attach {agent {port ""}} [Node info instbody attach]
Node instproc ns2-detach [Node info instargs detach] [Node info instbody detach]

# Whether ns-2's procedures would do no more for this node (with its port demux made) and this
# agent than the short ones below; remembered per node and per agent.
proc aqmlab-plain {node agent} {
  if {![info exists ::aqmlab_plain_node($node)]} {
    set modules [$node set ptnotif_]
    set ::aqmlab_plain_node($node) [expr {[$node info class] eq "Node"
      && ![Simulator hier-addr?] && [llength $modules] == 1
      && [[lindex $modules 0] info class] eq "RtModule/Base" && [$node set dmux_] ne ""}]
    if {$::aqmlab_plain_node($node)} {
      set ::aqmlab_addr($node) [AddrParams addr2id [$node set address_]]
    }
  }
  expr {$::aqmlab_plain_node($node) && [aqmlab-plain-agent $agent]}
}
proc aqmlab-plain-agent {agent} {
  if {![info exists ::aqmlab_plain_agent($agent)]} {
    set ::aqmlab_plain_agent($agent) \
      [expr {[lindex [split [$agent info class] /] 1] ni {SCTP AbsTCP}}]
  }
  return $::aqmlab_plain_agent($agent)
}

# Node::attach with the base module's attach (RtModule::attach, Classifier::install).
proc aqmlab-attach {node agent port} {
  if {![info exists ::aqmlab_null]} {
    set ::aqmlab_null [[Simulator instance] nullagent]
  }
  $node instvar agents_ dmux_ classifier_
  $agent instvar node_ agent_addr_ agent_port_
  $dmux_ instvar slots_
  lappend agents_ $agent
  set node_ $node
  set agent_addr_ $::aqmlab_addr($node)
  if {$port eq ""} {
    set port [$dmux_ cmd alloc-port $::aqmlab_null]
  }
  set agent_port_ $port
  $agent cmd target $classifier_
  set slots_($port) $agent
  $dmux_ cmd install $port $agent
}

# Node::detach (the base module's detach does nothing).
proc aqmlab-detach {node agent nullagent} {
  $node instvar agents_ dmux_
  $agent instvar node_ agent_addr_ agent_port_
  $dmux_ instvar slots_
  set k [lsearch -exact $agents_ $agent]
  if {$k >= 0} {
    set agents_ [lreplace $agents_[set agents_ {}] $k $k]
  }
  set node_ ""
  set agent_addr_ 0
  $agent cmd target $nullagent
  set port $agent_port_
  set slots_($port) $nullagent
  $dmux_ cmd install $port $nullagent
}

Node instproc attach {agent {port ""}} {
  if {![aqmlab-plain $self $agent]} {
    # A node's first agent makes its port demux; later ones may take the short way.
    unset -nocomplain ::aqmlab_plain_node($self)
    return [$self ns2-attach $agent $port]
  }
  aqmlab-attach $self $agent $port
  return
}

Node instproc detach {agent nullagent} {
  if {![aqmlab-plain $self $agent]} {
    return [$self ns2-detach $agent $nullagent]
  }
  aqmlab-detach $self $agent $nullagent
  return
}

Simulator instproc attach-agent {node agent} {
  if {![aqmlab-plain $node $agent]} {
    unset -nocomplain ::aqmlab_plain_node($node)
    return [$self ns2-attach-agent $node $agent]
  }
  aqmlab-attach $node $agent ""
  return
}

Simulator instproc detach-agent {node agent} {
  $self instvar useasim_ nullAgent_
  if {$useasim_ == 1 || ![aqmlab-plain $node $agent]} {
    return [$self ns2-detach-agent $node $agent]
  }
  aqmlab-detach $node $agent $nullAgent_
  return
}

# Two simplex-connects.
Simulator instproc connect {src dst} {
  $self instvar useasim_
  if {$useasim_ == 1 || ![aqmlab-plain-agent $src] || ![aqmlab-plain-agent $dst]} {
    return [$self ns2-connect $src $dst]
  }
  $src instvar {dst_addr_ src_dst_addr} {dst_port_ src_dst_port} {agent_addr_ src_addr} \
    {agent_port_ src_port}
  $dst instvar {dst_addr_ dst_dst_addr} {dst_port_ dst_dst_port} {agent_addr_ dst_addr} \
    {agent_port_ dst_port}
  set src_dst_addr $dst_addr
  set src_dst_port $dst_port
  set dst_dst_addr $src_addr
  set dst_dst_port $src_port
  return $src
}
