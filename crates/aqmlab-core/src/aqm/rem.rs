//! `rem`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `rem`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RemParams {}

impl RemParams {
    /// Read the keys of an `[aqm]` table with `kind = "rem"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<RemParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"rem\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct Rem {
    _p: RemParams,
}

impl Rem {
    pub fn new(p: RemParams, _link: LinkInfo) -> Rem {
        Rem { _p: p }
    }
}

impl Aqm for Rem {
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
