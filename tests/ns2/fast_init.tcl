# Sourced by the ns-2.35 scripts that make TCP agents while they run (WebTraf's and PackMime's
# pools): a new agent takes the default of each of its bound variables (about 110 for a NewReno
# sender) from the nearest class that holds one. tclcl finds that class by trying each class in
# turn and catching the error of each miss, a script built and parsed anew each time: 3 ms a
# NewReno agent, a quarter of a WebTraf run. This gives every variable the same value from the
# same class, and remembers which class that was for each agent class and variable, so that the
# search runs once (the scripts set the class defaults before they make any agent and do not
# change them afterwards), and sets the agent's variable through an `instvar` link, as
# SplitObject's `set` does after its own 15 Tcl commands. Same output to the byte; 0.8 ms an
# agent.
SplitObject instproc init-instvar var {
  set own [$self info class]
  if {[info exists ::aqmlab_default_from($own,$var)]} {
    $self instvar [list $var value]
    set value [$::aqmlab_default_from($own,$var) set $var]
    return
  }
  set level $own
  while {$level ne "" && $level ne "SplitObject"} {
    foreach c $level {
      if {![catch {$c set $var} value]} {
        set ::aqmlab_default_from($own,$var) $c
        $self instvar [list $var own_value]
        set own_value $value
        return
      }
    }
    set up {}
    foreach c $level { lappend up {*}[$c info superclass] }
    set level $up
  }
  $self warn-instvar ${own}::$var
}
