//! `autotune-red`: not implemented yet (issue 3). Decoding rejects the kind, so
//! no scenario can run this placeholder.

use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Parameters of `autotune-red`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AutotuneRedParams {}

impl AutotuneRedParams {
    /// Read the keys of an `[aqm]` table with `kind = "autotune-red"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<AutotuneRedParams> {
        Err(SpecError::new(
            crate::scenario::decode::join(t.path(), "kind"),
            "\"autotune-red\" is not implemented yet",
        ))
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct AutotuneRed {
    _p: AutotuneRedParams,
}

impl AutotuneRed {
    pub fn new(p: AutotuneRedParams, _link: LinkInfo) -> AutotuneRed {
        AutotuneRed { _p: p }
    }
}

impl Aqm for AutotuneRed {
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
