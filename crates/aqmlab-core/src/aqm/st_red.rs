//! `st-red`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `st-red`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StRedParams {}

impl StRedParams {
    /// Read the keys of an `[aqm]` table with `kind = "st-red"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<StRedParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"st-red\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct StRed {
    _p: StRedParams,
}

impl StRed {
    pub fn new(p: StRedParams, _link: LinkInfo) -> StRed {
        StRed { _p: p }
    }
}

impl Aqm for StRed {
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
