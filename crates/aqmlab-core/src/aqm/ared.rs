//! `ared`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `ared`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AredParams {}

impl AredParams {
    /// Read the keys of an `[aqm]` table with `kind = "ared"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<AredParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"ared\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct Ared {
    _p: AredParams,
}

impl Ared {
    pub fn new(p: AredParams, _link: LinkInfo) -> Ared {
        Ared { _p: p }
    }
}

impl Aqm for Ared {
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
