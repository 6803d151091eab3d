"""What ``aqmlab plot --what`` can draw (a module of its own, so that the
command line offers the choices without importing matplotlib or pyarrow)."""

#: What ``aqmlab plot --what`` can draw.
KINDS = (
    "queue",
    "queue-bytes",
    "delay",
    "throughput",
    "cdf",
    "params",
    "flows",
    "flow-throughput",
    "goodput-rtt",
    "ping",
)
