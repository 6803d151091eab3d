//! `codel`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `codel`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CodelParams {}

impl CodelParams {
    /// Read the keys of an `[aqm]` table with `kind = "codel"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<CodelParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"codel\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct Codel {
    _p: CodelParams,
}

impl Codel {
    pub fn new(p: CodelParams, _link: LinkInfo) -> Codel {
        Codel { _p: p }
    }
}

impl Aqm for Codel {
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
