//! `pi`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `pi`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PiParams {}

impl PiParams {
    /// Read the keys of an `[aqm]` table with `kind = "pi"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<PiParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"pi\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct Pi {
    _p: PiParams,
}

impl Pi {
    pub fn new(p: PiParams, _link: LinkInfo) -> Pi {
        Pi { _p: p }
    }
}

impl Aqm for Pi {
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
