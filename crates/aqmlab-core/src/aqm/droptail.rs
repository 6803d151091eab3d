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
}
