//! Random loss models: seeded Bernoulli, and the Gilbert–Elliott two-state model
//! (the same four parameters as netem's `loss gemodel p r 1-h 1-k`).

use crate::rng::Rng;
use crate::units::{Probability, UnitError};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum LossModel {
    #[default]
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Two states. Good → Bad with probability `p`, Bad → Good with `r`, per packet;
    /// a packet is lost with probability `loss_bad` in Bad and `loss_good` in Good.
    GilbertElliott {
        p: f64,
        r: f64,
        loss_bad: f64,
        loss_good: f64,
    },
}

const LOSS_FORMS: &str = "a loss such as 1% (independent losses) or ge:P,R[,LOSS_BAD[,LOSS_GOOD]] \
(Gilbert-Elliott, e.g. ge:1%,30% or ge:1%,30%,100%,0%)";

impl LossModel {
    /// Long-run fraction of packets lost.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                if p + r == 0.0 {
                    return loss_good;
                }
                let bad = p / (p + r);
                bad * loss_bad + (1.0 - bad) * loss_good
            }
        }
    }
}

impl FromStr for LossModel {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        let fail = || UnitError {
            given: s.to_string(),
            expected: LOSS_FORMS,
        };
        if let Some(args) = s.strip_prefix("ge:") {
            let ps: Vec<f64> = args
                .split(',')
                .map(|a| a.parse::<Probability>().map(|p| p.0))
                .collect::<Result<_, _>>()
                .map_err(|_| fail())?;
            let (p, r, loss_bad, loss_good) = match ps[..] {
                [p, r] => (p, r, 1.0, 0.0),
                [p, r, h] => (p, r, h, 0.0),
                [p, r, h, k] => (p, r, h, k),
                _ => return Err(fail()),
            };
            return Ok(LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            });
        }
        let p = s.parse::<Probability>().map_err(|_| fail())?.0;
        Ok(if p == 0.0 {
            LossModel::None
        } else {
            LossModel::Bernoulli { p }
        })
    }
}

impl fmt::Display for LossModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LossModel::None => write!(f, "0%"),
            LossModel::Bernoulli { p } => write!(f, "{}", Probability(p)),
            LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => write!(
                f,
                "ge:{},{},{},{}",
                Probability(p),
                Probability(r),
                Probability(loss_bad),
                Probability(loss_good)
            ),
        }
    }
}

/// A loss model with its random state: decides, packet by packet, what is lost.
#[derive(Debug, Clone)]
pub struct LossProcess {
    model: LossModel,
    rng: Rng,
    bad: bool,
}

impl LossProcess {
    pub fn new(model: LossModel, seed: u64) -> LossProcess {
        LossProcess {
            model,
            rng: Rng::new(seed),
            bad: false,
        }
    }

    /// Decides the fate of the next packet: true if it is lost.
    pub fn lose_next(&mut self) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => self.rng.chance(p),
            LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                let flip = if self.bad { r } else { p };
                if self.rng.chance(flip) {
                    self.bad = !self.bad;
                }
                self.rng.chance(if self.bad { loss_bad } else { loss_good })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bounds of the binomial 99% interval via the normal approximation, widened by one.
    fn binomial_99(n: u64, p: f64) -> (f64, f64) {
        let mean = n as f64 * p;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        (mean - 2.576 * sd - 1.0, mean + 2.576 * sd + 1.0)
    }

    #[test]
    fn bernoulli_rate_inside_binomial_bounds() {
        for (p, seed) in [(0.01, 1), (0.03, 2), (0.2, 3)] {
            let mut l = LossProcess::new(LossModel::Bernoulli { p }, seed);
            let n = 100_000;
            let lost = (0..n).filter(|_| l.lose_next()).count() as f64;
            let (lo, hi) = binomial_99(n, p);
            assert!(
                lo <= lost && lost <= hi,
                "p={p}: {lost} not in [{lo}, {hi}]"
            );
        }
    }

    #[test]
    fn same_seed_same_losses() {
        let model = "3%".parse().unwrap();
        let a: Vec<bool> = {
            let mut l = LossProcess::new(model, 7);
            (0..1000).map(|_| l.lose_next()).collect()
        };
        let mut l = LossProcess::new(model, 7);
        assert!(a.iter().all(|&x| x == l.lose_next()));
    }

    #[test]
    fn gilbert_elliott_is_bursty_with_the_right_mean() {
        let model: LossModel = "ge:1%,30%".parse().unwrap();
        let expected = model.mean_loss();
        assert!((expected - 0.01 / 0.31).abs() < 1e-12);
        let mut l = LossProcess::new(model, 11);
        let n = 200_000;
        let seq: Vec<bool> = (0..n).map(|_| l.lose_next()).collect();
        let lost = seq.iter().filter(|&&x| x).count() as f64;
        assert!((lost / n as f64 - expected).abs() < 0.005, "{lost}");
        // Bursty: a loss is followed by another far more often than the mean rate.
        let pairs = seq.windows(2).filter(|w| w[0] && w[1]).count() as f64;
        assert!(pairs / lost > 0.5, "conditional loss {}", pairs / lost);
    }

    #[test]
    fn parse_forms() {
        assert_eq!("0%".parse::<LossModel>().unwrap(), LossModel::None);
        assert_eq!(
            "1%".parse::<LossModel>().unwrap(),
            LossModel::Bernoulli { p: 0.01 }
        );
        assert!("ge:1%".parse::<LossModel>().is_err());
        assert!("1".parse::<LossModel>().is_err());
        let ge: LossModel = "ge:1%,30%,50%,1%".parse().unwrap();
        assert_eq!(ge.to_string(), "ge:1%,30%,50%,1%");
    }
}
