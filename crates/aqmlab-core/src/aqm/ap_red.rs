//! `ap-red`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `ap-red`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ApRedParams {}

impl ApRedParams {
    /// Read the keys of an `[aqm]` table with `kind = "ap-red"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<ApRedParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"ap-red\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct ApRed {
    _p: ApRedParams,
}

impl ApRed {
    pub fn new(p: ApRedParams, _link: LinkInfo) -> ApRed {
        ApRed { _p: p }
    }
}

impl Aqm for ApRed {
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
