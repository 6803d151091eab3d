//! `pie`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `pie`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PieParams {}

impl PieParams {
    /// Read the keys of an `[aqm]` table with `kind = "pie"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<PieParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"pie\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct Pie {
    _p: PieParams,
}

impl Pie {
    pub fn new(p: PieParams, _link: LinkInfo) -> Pie {
        Pie { _p: p }
    }
}

impl Aqm for Pie {
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
