//! `avq`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `avq`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AvqParams {}

impl AvqParams {
    /// Read the keys of an `[aqm]` table with `kind = "avq"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<AvqParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"avq\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct Avq {
    _p: AvqParams,
}

impl Avq {
    pub fn new(p: AvqParams, _link: LinkInfo) -> Avq {
        Avq { _p: p }
    }
}

impl Aqm for Avq {
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
