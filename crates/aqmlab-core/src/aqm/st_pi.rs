//! `st-pi`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `st-pi`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StPiParams {}

impl StPiParams {
    /// Read the keys of an `[aqm]` table with `kind = "st-pi"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<StPiParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"st-pi\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct StPi {
    _p: StPiParams,
}

impl StPi {
    pub fn new(p: StPiParams, _link: LinkInfo) -> StPi {
        StPi { _p: p }
    }
}

impl Aqm for StPi {
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
