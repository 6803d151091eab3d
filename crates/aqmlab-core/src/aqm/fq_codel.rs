//! `fq-codel`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `fq-codel`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FqCodelParams {}

impl FqCodelParams {
    /// Read the keys of an `[aqm]` table with `kind = "fq-codel"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<FqCodelParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"fq-codel\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct FqCodel {
    _p: FqCodelParams,
}

impl FqCodel {
    pub fn new(p: FqCodelParams, _link: LinkInfo) -> FqCodel {
        FqCodel { _p: p }
    }
}

impl Aqm for FqCodel {
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
