//! Percentiles of latency samples (nearest-rank), in milliseconds.

use std::time::Duration;

use serde::Serialize;

/// Summary of one sample set; every value in milliseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Percentiles {
    pub n: usize,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

impl Percentiles {
    /// `None` for an empty sample set.
    pub fn of(samples: &[Duration]) -> Option<Percentiles> {
        if samples.is_empty() {
            return None;
        }
        let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        let rank = |p: f64| {
            // Nearest rank: the smallest value with at least p of the samples at or below it.
            let i = ((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len()) - 1;
            ms[i]
        };
        Some(Percentiles {
            n: ms.len(),
            min: ms[0],
            p50: rank(0.50),
            p90: rank(0.90),
            p99: rank(0.99),
            max: ms[ms.len() - 1],
            mean: ms.iter().sum::<f64>() / ms.len() as f64,
        })
    }

    /// Every value shifted by `-ms` (e.g. the model's own time taken off).
    pub fn minus(self, ms: f64) -> Percentiles {
        Percentiles {
            n: self.n,
            min: self.min - ms,
            p50: self.p50 - ms,
            p90: self.p90 - ms,
            p99: self.p99 - ms,
            max: self.max - ms,
            mean: self.mean - ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        let p = Percentiles::of(&samples).expect("samples");
        assert_eq!(
            (p.n, p.min, p.p50, p.p90, p.p99, p.max),
            (100, 1.0, 50.0, 90.0, 99.0, 100.0)
        );
        assert!(Percentiles::of(&[]).is_none());
    }
}
