//! `blue`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `blue`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BlueParams {}

impl BlueParams {
    /// Read the keys of an `[aqm]` table with `kind = "blue"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<BlueParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"blue\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct Blue {
    _p: BlueParams,
}

impl Blue {
    pub fn new(p: BlueParams, _link: LinkInfo) -> Blue {
        Blue { _p: p }
    }
}

impl Aqm for Blue {
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
