//! `ared-feng`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `ared-feng`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AredFengParams {}

impl AredFengParams {
    /// Read the keys of an `[aqm]` table with `kind = "ared-feng"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<AredFengParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"ared-feng\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct AredFeng {
    _p: AredFengParams,
}

impl AredFeng {
    pub fn new(p: AredFengParams, _link: LinkInfo) -> AredFeng {
        AredFeng { _p: p }
    }
}

impl Aqm for AredFeng {
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
