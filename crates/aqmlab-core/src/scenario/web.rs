//! The web-browsing workload of `000_0675317d310dd341.txt` and
//! `001_e060da456e213f64.txt` (`[[traffic]] kind = "web"`) as the scenario
//! describes it: the resolved parameters of a group ([`WebParams`]), the
//! distributions a session draws from, their defaults, and the estimate of
//! a session's offered load that sizes a group from `offered_load`. The
//! sessions that run this workload are the engine's (`traffic/web.rs`).
//!
//! Distributions:
//! - object sizes: a lognormal body spliced to a bounded Pareto tail,
//!   [`SizeDist`]; the defaults give a mean of 7.2 KB whose largest 15 % of
//!   objects carry 80 % of the bytes (`000_...`, "Experimental methodology");
//! - objects per page: geometric on {1, 2, ...} with mean `objects`
//!   (the papers say only "several objects");
//! - think time between pages: Pareto with shape `think_shape` and mean
//!   `think` (`000_...`: "Inter-page time distribution: Pareto"); a
//!   session begins with a think period drawn from the equilibrium
//!   residual-life distribution of the think time, so the page arrivals of
//!   a group are stationary from the start;
//! - per-session base RTT uniform in `rtt` (10-150 ms, `000_...`).
//!
//! `docs/scenario.md` (section `kind = "web"`) has the derivation of the
//! size parameters and of the number of sessions for an offered load.

use super::spec::HEADER_BYTES;
use super::tcp::TcpSpec;
use crate::rng::Rng;
use crate::units::SimTime;

/// Default size distribution parameters (see [`SizeDist`]): median of the
/// lognormal body, bytes.
pub const SIZE_MEDIAN: u64 = 1320;
/// Default sigma of the body (of ln bytes).
pub const SIZE_SIGMA: f64 = 1.72;
/// Default share of objects in the Pareto tail.
pub const SIZE_TAIL: f64 = 0.07;
/// Default largest object, bytes.
pub const SIZE_MAX: u64 = 2_000_000;
/// Default mean think time between pages.
pub const THINK: SimTime = SimTime::from_secs(5);
/// Default Pareto shape of the think time.
pub const THINK_SHAPE: f64 = 1.5;
/// Default mean number of objects per page.
pub const OBJECTS: f64 = 3.0;
/// Default HTTP request size (payload bytes of the request segment).
pub const REQUEST_SIZE: u64 = 300;
/// Default lanes (parallel page fetches) of a session with open pages.
pub const LANES: u32 = 4;
/// Most lanes a session may have.
pub const MAX_LANES: u32 = 64;

/// Standard normal density.
fn phi(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Standard normal CDF, from the complementary error function
/// (Abramowitz and Stegun 7.1.26, |error| < 1.5e-7 on erf).
pub fn norm_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 {
        1.0 - 0.5 * erfc
    } else {
        0.5 * erfc
    }
}

/// Inverse of [`norm_cdf`] by bisection (setup only, not per draw).
fn norm_quantile(u: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if norm_cdf(mid) < u {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Object sizes: a lognormal body spliced at its own (1 - `tail`) quantile
/// `x_c` to a bounded Pareto tail on [`x_c`, `max`] whose shape `alpha`
/// makes the density continuous at `x_c`.
///
/// - Body (probability 1 - w): the lognormal (mu = ln median, sigma)
///   restricted to x <= x_c = exp(mu + sigma z_c), z_c = Phi^-1(1 - w).
/// - Tail (probability w): P(X > x | tail) = ((x_c / x)^a - r^a) / (1 - r^a),
///   r = x_c / max.
/// - Continuity of the density at x_c: phi(z_c) / (sigma x_c) =
///   w a / (x_c (1 - r^a)), i.e. a / (1 - r^a) = phi(z_c) / (sigma w),
///   solved for a (the left side grows with a from 1 / ln(1 / r)).
///
/// The CDF is continuous by construction; the mean and the byte share of
/// the largest objects have closed forms ([`SizeDist::mean`],
/// [`SizeDist::top_share`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeDist {
    pub mu: f64,
    pub sigma: f64,
    /// Share of objects in the tail (w).
    pub tail: f64,
    /// Largest object, bytes.
    pub max: f64,
    /// Splice point x_c, bytes.
    pub splice: f64,
    /// Pareto shape of the tail.
    pub alpha: f64,
}

impl SizeDist {
    /// Build from the median of the body (bytes), its sigma, the tail share
    /// and the largest size (bytes). Errors say which parameter is at fault.
    pub fn new(
        median: f64,
        sigma: f64,
        tail: f64,
        max: f64,
    ) -> Result<SizeDist, (&'static str, String)> {
        let mu = median.ln();
        if tail == 0.0 {
            return Ok(SizeDist {
                mu,
                sigma,
                tail,
                max,
                splice: max,
                alpha: 1.0,
            });
        }
        let zc = norm_quantile(1.0 - tail);
        let splice = (mu + sigma * zc).exp();
        if splice >= max {
            return Err((
                "size_max",
                format!(
                    "{max:.0} bytes is not above the start of the Pareto tail ({splice:.0} bytes, the body's {:.1} % quantile); raise size_max or size_tail",
                    100.0 * (1.0 - tail)
                ),
            ));
        }
        let r = splice / max;
        let target = phi(zc) / (sigma * tail);
        let g = |a: f64| a / (1.0 - r.powf(a));
        if target <= 1.0 / (1.0 / r).ln() {
            return Err((
                "size_tail",
                format!("{tail}: no Pareto tail up to size_max joins the body smoothly; lower size_tail or raise size_max"),
            ));
        }
        let (mut lo, mut hi) = (1e-9f64, 1.0f64);
        while g(hi) < target {
            hi *= 2.0;
            if hi > 1e6 {
                return Err(("size_tail", format!("{tail} gives no usable tail shape")));
            }
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if g(mid) < target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(SizeDist {
            mu,
            sigma,
            tail,
            max,
            splice,
            alpha: 0.5 * (lo + hi),
        })
    }

    /// The default parameters.
    pub fn default_sizes() -> SizeDist {
        SizeDist::new(SIZE_MEDIAN as f64, SIZE_SIGMA, SIZE_TAIL, SIZE_MAX as f64)
            .expect("valid defaults")
    }

    fn r_a(&self) -> f64 {
        (self.splice / self.max).powf(self.alpha)
    }

    /// P(X <= x).
    pub fn cdf(&self, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        if x >= self.max {
            return 1.0;
        }
        if x <= self.splice {
            return norm_cdf((x.ln() - self.mu) / self.sigma);
        }
        let ra = self.r_a();
        1.0 - self.tail * ((self.splice / x).powf(self.alpha) - ra) / (1.0 - ra)
    }

    /// The `u` quantile, 0 <= u < 1.
    pub fn quantile(&self, u: f64) -> f64 {
        if u <= 1.0 - self.tail {
            return (self.mu + self.sigma * norm_quantile(u))
                .exp()
                .min(self.splice);
        }
        let v = (1.0 - u) / self.tail;
        let ra = self.r_a();
        self.splice * (v * (1.0 - ra) + ra).powf(-1.0 / self.alpha)
    }

    /// E\[X; X > x\] (bytes of the objects above `x`, per object).
    pub fn mean_above(&self, x: f64) -> f64 {
        let (a, xc) = (self.alpha, self.splice);
        let ra = self.r_a();
        // Tail part above max(x, x_c).
        let y = x.max(xc).min(self.max);
        let tail = if self.tail == 0.0 {
            0.0
        } else if (a - 1.0).abs() < 1e-12 {
            self.tail * xc * (self.max / y).ln() / (1.0 - ra)
        } else {
            self.tail * a * xc.powf(a) * (y.powf(1.0 - a) - self.max.powf(1.0 - a))
                / ((a - 1.0) * (1.0 - ra))
        };
        if x >= xc {
            return tail;
        }
        // Body part between x and x_c: E[X; X <= t] = e^(mu + s^2/2) Phi((ln t - mu - s^2)/s).
        let s = self.sigma;
        let m = (self.mu + 0.5 * s * s).exp();
        let upto = |t: f64| {
            if t <= 0.0 {
                0.0
            } else {
                m * norm_cdf((t.ln() - self.mu - s * s) / s)
            }
        };
        tail + upto(xc) - upto(x)
    }

    /// Mean size, bytes.
    pub fn mean(&self) -> f64 {
        self.mean_above(0.0)
    }

    /// Share of all bytes carried by the largest `q` of the objects.
    pub fn top_share(&self, q: f64) -> f64 {
        self.mean_above(self.quantile(1.0 - q)) / self.mean()
    }

    /// Draw a size in bytes (at least 1). The body by Box-Muller with
    /// rejection above the splice point, the tail by inversion.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let x = if self.tail > 0.0 && rng.uniform() < self.tail {
            let v = 1.0 - rng.uniform(); // (0, 1]
            let ra = self.r_a();
            self.splice * (v * (1.0 - ra) + ra).powf(-1.0 / self.alpha)
        } else {
            loop {
                let u1 = 1.0 - rng.uniform();
                let u2 = rng.uniform();
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                let x = (self.mu + self.sigma * z).exp();
                if x <= self.splice {
                    break x;
                }
            }
        };
        (x.round() as u64).clamp(1, self.max as u64)
    }
}

/// HTTP version of a web group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Http {
    /// A new connection (SYN, SYN/ACK, request, response) per object.
    #[serde(rename = "1.0")]
    V10,
    /// One persistent connection per page, requests one after another.
    #[serde(rename = "1.1")]
    V11,
    /// ns-2's WebTraf in its one-way TCP form (the web model after
    /// Feldmann et al. that `000_0675317d310dd341.txt` cites as \[11\]): two
    /// connections per object. The client opens a request connection
    /// (SYN, SYN/ACK, the request, the server's pure ACK); when the ACK is
    /// in, the server opens a response connection (its SYN, the client's
    /// SYN/ACK, the response). Three packets that are not ECN-capable cross
    /// the data direction per object (SYN/ACK, ACK, SYN), where HTTP/1.0
    /// has one; ECN+ makes only the SYN/ACK ECN-capable.
    #[serde(rename = "webtraf")]
    WebTraf,
}

/// How a session's pages follow one another (`pages`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pages {
    /// The think time runs from the end of a page to the start of the
    /// next: a session waits for its page, so congestion slows its pages
    /// down (ns-2's WebTraf since November 2001, `interPageOption_ = 1`;
    /// the browsers of `001_e060da456e213f64.txt`, "browsers generate
    /// requests less frequently as response times increase").
    Closed,
    /// The think time runs from the start of a page to the start of the
    /// next, whether the page has arrived or not: the requests of a trace
    /// replayed on a congested link (`000_0675317d310dd341.txt`: "re-run
    /// the web-request traces"; ns-2's WebTraf with `interPageOption_ =
    /// 0`, its behaviour before November 2001). A page that comes while
    /// the session's earlier pages are still arriving is fetched in
    /// parallel on another of the session's `lanes` (connections of the
    /// same client); with every lane busy it waits for the first to free.
    Open,
}

/// When a session's first page comes (`first_page`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FirstPage {
    /// After an equilibrium residual think time, so that a group's page
    /// requests are stationary from its start.
    Residual,
    /// When the session begins, as ns-2's WebTraf `create-session` starts a
    /// session with a page. Sessions that begin together then ask for
    /// their first pages together, and with Pareto think times of infinite
    /// variance the pages that follow stay denser than the stationary rate
    /// for tens of seconds (docs/fidelity.md, item 7).
    Start,
}

/// The resolved parameters of a web group.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WebParams {
    pub sizes: SizeDist,
    /// Mean objects per page (geometric on 1, 2, ...).
    pub objects: f64,
    /// Mean think time, seconds.
    pub think_s: f64,
    /// Pareto shape of the think time (> 1).
    pub think_shape: f64,
    /// Payload bytes of a request.
    pub request_bytes: u32,
    pub http: Http,
    pub pages: Pages,
    /// Flows (parallel fetches) per session with `Pages::Open` or
    /// `parallel_objects`; 1 otherwise.
    pub lanes: u32,
    /// A page's objects are all asked for when the page comes, each on its
    /// own lane (as ns-2's WebTraf launches them), instead of one after
    /// another. With `Pages::Closed` the next think time starts when the
    /// page's last object has arrived (WebTraf's default pattern).
    pub parallel_objects: bool,
    /// With `parallel_objects`: the mean gap, seconds, between the launches
    /// of a page's objects (exponential; WebTraf's `interObj`); 0: all at
    /// once.
    pub object_gap_s: f64,
    /// When a session's first page comes.
    pub first_page: FirstPage,
    /// Every object a whole number of full segments (its size rounded up to
    /// a multiple of the MSS), as ns-2's one-way TCP sends WebTraf's objects
    /// (`advanceby` packets of `packetSize_`).
    pub whole_segments: bool,
    /// Each connection closes with the client's FIN and the server's
    /// FIN/ACK (40 bytes each, the FIN/ACK in the data direction); `false`:
    /// no closing packets, as ns-2's one-way TCP, which has no FIN (WebTraf's
    /// connections in ns-2).
    pub teardown: bool,
}

impl WebParams {
    /// The session runs on several lanes (flows): open pages, or a page's
    /// objects in parallel.
    pub fn laned(&self) -> bool {
        self.pages == Pages::Open || self.parallel_objects
    }

    /// Pareto scale (minimum) of the think time: mean (a - 1) / a.
    fn think_min(&self) -> f64 {
        self.think_s * (self.think_shape - 1.0) / self.think_shape
    }

    /// A think time, seconds (Pareto).
    pub fn think(&self, rng: &mut Rng) -> f64 {
        rng.pareto(self.think_shape, self.think_min())
    }

    /// The equilibrium residual of the think time, seconds: the time to the
    /// next page of a session observed at a random instant of a think
    /// period. Its survival function is the integral of the Pareto's from
    /// x to infinity over the mean: with k the minimum and a the shape,
    /// 1 - x (a - 1) / (a k) below k and (k / x)^(a - 1) / a above; drawn by
    /// inversion.
    pub fn residual_think(&self, rng: &mut Rng) -> f64 {
        let (a, k) = (self.think_shape, self.think_min());
        let v = 1.0 - rng.uniform(); // survival level in (0, 1]
        if v > 1.0 / a {
            (1.0 - v) * a * k / (a - 1.0)
        } else {
            k * (a * v).powf(-1.0 / (a - 1.0))
        }
    }

    /// Objects of a page: geometric on {1, 2, ...} with mean `objects`.
    pub fn page_objects(&self, rng: &mut Rng) -> u32 {
        if self.objects <= 1.0 {
            return 1;
        }
        let q = 1.0 / self.objects; // success probability
        let u = 1.0 - rng.uniform();
        let n = 1.0 + (u.ln() / (1.0 - q).ln()).floor();
        n.min(1e6) as u32
    }
}

/// What the engine needs to size a group: the expected bytes a page puts
/// on the wire in the data direction and the expected page download time
/// on an uncongested path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageEstimate {
    /// Payload bytes per object.
    pub object_bytes: f64,
    /// Data packets per object, E[ceil(size / mss)].
    pub object_segments: f64,
    /// Wire bytes per page in the data direction: payload, 40 bytes of
    /// header per data packet, and one 40-byte SYN/ACK per connection
    /// (with `webtraf`: a SYN/ACK, an ACK and a SYN per object).
    pub page_wire_bytes: f64,
    /// Slow-start rounds per object, E[ceil(log2(n / w + 1))].
    pub object_rounds: f64,
    /// Page download time, seconds: mean RTT x (objects x rounds + one
    /// handshake RTT per connection; with `webtraf`, three more round trips
    /// per object: the request connection's two and the response
    /// connection's handshake).
    pub page_time_s: f64,
}

impl PageEstimate {
    /// Estimates for `p` with the TCP of `tcp` and mean base RTT `rtt_s`.
    pub fn new(p: &WebParams, tcp: &TcpSpec, rtt_s: f64) -> PageEstimate {
        let d = &p.sizes;
        let mss = tcp.mss() as f64;
        // E[ceil(S / m)] = sum over j >= 0 of P(S > j m).
        let jmax = (d.max / mss).ceil() as u64;
        let object_segments: f64 = (0..=jmax).map(|j| 1.0 - d.cdf(j as f64 * mss)).sum();
        // r(n) = k for w (2^(k-1) - 1) < n <= w (2^k - 1).
        let w = tcp.initial_cwnd.max(1) as f64;
        let mut object_rounds = 0.0;
        let mut k = 1.0;
        let mut below = 0.0; // P(n <= w (2^(k-1) - 1))
        while below < 1.0 - 1e-12 && k < 64.0 {
            let top = d.cdf(w * (2f64.powf(k) - 1.0) * mss);
            object_rounds += k * (top - below);
            below = top;
            k += 1.0;
        }
        // Round trips and data-direction control packets beyond the data.
        let (setup_rtts, control) = match p.http {
            Http::V10 => (p.objects, p.objects),
            Http::V11 => (1.0, 1.0),
            Http::WebTraf => (3.0 * p.objects, 3.0 * p.objects),
        };
        let hdr = HEADER_BYTES as f64;
        let object_bytes = if p.whole_segments {
            mss * object_segments
        } else {
            d.mean()
        };
        PageEstimate {
            object_bytes,
            object_segments,
            page_wire_bytes: p.objects * (object_bytes + hdr * object_segments) + control * hdr,
            object_rounds,
            // With the objects in parallel a page takes about as long as
            // one object (its slowest, which this underestimates).
            page_time_s: if p.parallel_objects {
                rtt_s * (object_rounds + setup_rtts / p.objects)
                    + p.object_gap_s * (p.objects - 1.0)
            } else {
                rtt_s * (p.objects * object_rounds + setup_rtts)
            },
        }
    }

    /// Mean offered rate of one session, bit/s: page bits over the mean
    /// cycle (think + page time; with open pages the think time alone, the
    /// mean gap between page starts).
    pub fn session_bps(&self, p: &WebParams) -> f64 {
        let cycle = match p.pages {
            Pages::Closed => p.think_s + self.page_time_s,
            Pages::Open => p.think_s,
        };
        8.0 * self.page_wire_bytes / cycle
    }

    /// Sessions for an offered load of `bps` (rounded, at least 1).
    pub fn sessions_for(&self, p: &WebParams, bps: f64) -> u32 {
        (bps / self.session_bps(p))
            .round()
            .clamp(1.0, u32::MAX as f64) as u32
    }
}

/// The scenario with which `000_0675317d310dd341.txt` measures offered
/// load: one `web` group with `offered_load = load` on an uncongested
/// dumbbell (1 Gbps bottleneck and access links, 1 ms bottleneck delay,
/// 1500-byte packets), measured from `measure_from` to `duration`.
/// `extra` holds further top-level tables as (table, key, value) triples
/// applied to `tcp` or `traffic[0]` (e.g. `("traffic", "http", "1.1")`).
/// Run it and compare `summary.bottleneck.throughput_bps` with `load`.
pub fn calibration_scenario(
    load: &str,
    duration: &str,
    measure_from: &str,
    seed: u64,
    extra: &[(&str, &str, crate::scenario::Value)],
) -> Result<crate::scenario::Scenario, crate::scenario::SpecError> {
    use crate::scenario::Value;
    let s = |x: &str| Value::Str(x.to_string());
    let mut tcp = vec![("packet_size".to_string(), Value::Int(1500))];
    let mut traffic = vec![
        ("kind".to_string(), s("web")),
        ("offered_load".to_string(), s(load)),
    ];
    for (table, key, v) in extra {
        let t = if *table == "tcp" {
            &mut tcp
        } else {
            &mut traffic
        };
        t.retain(|(k, _)| k != key);
        t.push((key.to_string(), v.clone()));
    }
    let doc = Value::Table(vec![
        ("duration".into(), s(duration)),
        ("seed".into(), Value::Int(seed as i64)),
        (
            "topology".into(),
            Value::Table(vec![
                ("bottleneck_rate".into(), s("1Gbps")),
                ("bottleneck_delay".into(), s("1ms")),
                ("buffer".into(), Value::Int(5000)),
                ("access_rate".into(), s("1Gbps")),
            ]),
        ),
        ("tcp".into(), Value::Table(tcp)),
        ("traffic".into(), Value::Array(vec![Value::Table(traffic)])),
        (
            "metrics".into(),
            Value::Table(vec![("start".into(), s(measure_from))]),
        ),
    ]);
    crate::scenario::Scenario::from_value(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn normal_cdf_values() {
        assert!((norm_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((norm_cdf(1.0) - 0.841_344_7).abs() < 2e-7);
        assert!((norm_cdf(-1.644_853_6) - 0.05).abs() < 2e-7);
        assert!((norm_quantile(0.975) - 1.959_964).abs() < 1e-5);
    }

    /// The defaults: analytic mean 7.2 KB (within 0.2 %), top-15 % byte
    /// share 0.80, tail shape about 1.11, splice near 16.7 KB; the CDF
    /// and the quantile function invert each other.
    #[test]
    fn default_size_distribution_closed_forms() {
        let d = SizeDist::default_sizes();
        assert!((d.mean() - 7200.0).abs() < 15.0, "{}", d.mean());
        assert!(
            (d.top_share(0.15) - 0.80).abs() < 0.005,
            "{}",
            d.top_share(0.15)
        );
        assert!((d.alpha - 1.11).abs() < 0.01, "{}", d.alpha);
        assert!((d.splice - 16_710.0).abs() < 50.0, "{}", d.splice);
        for u in [0.1, 0.5, 0.9, 0.93, 0.95, 0.999] {
            assert!((d.cdf(d.quantile(u)) - u).abs() < 1e-6, "{u}");
        }
        // Density continuity at the splice point: the CDF's slope on both sides.
        let h = 1e-3 * d.splice;
        let left = (d.cdf(d.splice) - d.cdf(d.splice - h)) / h;
        let right = (d.cdf(d.splice + h) - d.cdf(d.splice)) / h;
        assert!((left / right - 1.0).abs() < 0.01, "{left} {right}");
    }

    /// Acceptance: over 10^6 draws the sample mean is 7.2 KB within 10 %
    /// and the largest 15 % of the objects carry 75-85 % of the bytes.
    #[test]
    fn object_size_sample() {
        let d = SizeDist::default_sizes();
        let mut rng = Rng::new(3, Stream::App(0));
        let n = 1_000_000;
        let mut v: Vec<u64> = (0..n).map(|_| d.sample(&mut rng)).collect();
        let total: u64 = v.iter().sum();
        let mean = total as f64 / n as f64;
        v.sort_unstable();
        let top: u64 = v[(0.85 * n as f64) as usize..].iter().sum();
        let share = top as f64 / total as f64;
        assert!((mean / 7200.0 - 1.0).abs() < 0.10, "mean {mean}");
        assert!((0.75..=0.85).contains(&share), "share {share}");
        assert!(v[n / 2] > 1000 && v[n / 2] < 1700, "median {}", v[n / 2]);
        assert!(*v.last().unwrap() <= 2_000_000);
    }

    #[test]
    fn think_and_objects_means() {
        let p = WebParams {
            sizes: SizeDist::default_sizes(),
            objects: 3.0,
            think_s: 5.0,
            think_shape: 1.5,
            request_bytes: 300,
            http: Http::V10,
            pages: Pages::Closed,
            lanes: 1,
            parallel_objects: false,
            object_gap_s: 0.0,
            first_page: FirstPage::Residual,
            whole_segments: false,
            teardown: true,
        };
        let mut rng = Rng::new(5, Stream::App(1));
        let n = 200_000;
        let obj: f64 = (0..n).map(|_| p.page_objects(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((obj - 3.0).abs() < 0.05, "{obj}");
        // Pareto 1.5 has infinite variance: the mean converges slowly.
        let think: f64 = (0..n).map(|_| p.think(&mut rng)).sum::<f64>() / n as f64;
        assert!((think / 5.0 - 1.0).abs() < 0.1, "{think}");
        // The residual's median: survival 1/2 < 1/a, so k (a/2)^(-2).
        let mut r: Vec<f64> = (0..n).map(|_| p.residual_think(&mut rng)).collect();
        r.sort_by(f64::total_cmp);
        let k = 5.0 / 3.0;
        let med = k * (1.5f64 * 0.5).powf(-2.0);
        assert!((r[n / 2] / med - 1.0).abs() < 0.03, "{} vs {med}", r[n / 2]);
    }

    /// The sessions formula for the defaults at 90 Mb/s: page wire bytes
    /// and rounds by hand, and the session count they give.
    #[test]
    fn sessions_for_an_offered_load() {
        let p = WebParams {
            sizes: SizeDist::default_sizes(),
            objects: 3.0,
            think_s: 5.0,
            think_shape: 1.5,
            request_bytes: 300,
            http: Http::V10,
            pages: Pages::Closed,
            lanes: 1,
            parallel_objects: false,
            object_gap_s: 0.0,
            first_page: FirstPage::Residual,
            whole_segments: false,
            teardown: true,
        };
        let tcp = TcpSpec {
            packet_size: 1500,
            ..TcpSpec::default()
        };
        let e = PageEstimate::new(&p, &tcp, 0.08);
        // At least one segment per object and about size / mss + 1/2 more.
        assert!(e.object_segments > 5.0 && e.object_segments < 6.5, "{e:?}");
        assert!(e.object_rounds > 1.5 && e.object_rounds < 3.0, "{e:?}");
        let per_page = 3.0 * (e.object_bytes + 40.0 * e.object_segments) + 3.0 * 40.0;
        assert!((e.page_wire_bytes - per_page).abs() < 1e-6);
        let n = e.sessions_for(&p, 90e6);
        let back = n as f64 * e.session_bps(&p);
        assert!((back / 90e6 - 1.0).abs() < 0.001, "{n} {back}");
    }
}
