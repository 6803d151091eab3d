//! DropTail: admit every packet; the link drops what does not fit its buffer.

use super::{Aqm, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::units::SimTime;

/// First-in first-out with tail drop. The buffer limit (packets or bytes) is
/// the link's; this scheme never signals early.
#[derive(Clone, Copy, Debug, Default)]
pub struct DropTail;

impl Aqm for DropTail {
    #[inline]
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        _pkt: &PacketInfo,
        _q: QueueLen,
        _rng: &mut Rng,
    ) -> Verdict {
        Verdict::Pass
    }

    /// DropTail has no parameters; its only limit is the link's buffer.
    fn set_param(&mut self, key: &str, _value: f64) -> Result<(), String> {
        Err(format!(
            "droptail has no parameters, so `{key}` cannot change during a run (its only limit is the link's buffer, topology.buffer)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_param_is_refused_with_a_clear_error() {
        let e = DropTail.set_param("max_p", 0.1).unwrap_err();
        assert!(e.contains("`max_p`") && e.contains("no parameters"), "{e}");
    }
}
