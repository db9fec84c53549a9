//! Job schedules (pure): `{cron, tz?}` (a cron expression in a time zone, via `croner`
//! on `jiff`), `{every}` (a fixed interval, at least 1 s) or `{at}` (one RFC 3339 time),
//! and the next time each is due after a given instant.
//!
//! The next time is what the job table stores: a job overdue after downtime runs once and
//! then gets the next time after *now*, never one run per missed tick.

use std::str::FromStr;
use std::time::Duration;

use crate::config::ScheduleConfig;

/// Shortest `every`.
pub const MIN_EVERY: Duration = Duration::from_secs(1);
/// Longest `every` (a year): keeps the arithmetic on unix milliseconds far from overflow.
pub const MAX_EVERY: Duration = Duration::from_secs(366 * 24 * 3600);

#[derive(Debug, Clone)]
pub enum Schedule {
    Cron {
        expr: Box<croner::Cron>,
        tz: jiff::tz::TimeZone,
    },
    Every(Duration),
    /// Unix milliseconds.
    At(i64),
}

impl Schedule {
    /// The schedule `cfg` describes, or what is wrong with it (a sentence for people).
    pub fn parse(cfg: &ScheduleConfig) -> Result<Schedule, String> {
        let given = [cfg.cron.is_some(), cfg.every.is_some(), cfg.at.is_some()]
            .iter()
            .filter(|g| **g)
            .count();
        if given != 1 {
            return Err(
                "give exactly one of `cron` (with an optional `tz`), `every` or `at`".into(),
            );
        }
        if cfg.tz.is_some() && cfg.cron.is_none() {
            return Err("`tz` goes with `cron` only".into());
        }
        if let Some(expr) = &cfg.cron {
            let parsed = croner::Cron::from_str(expr.trim())
                .map_err(|e| format!("invalid cron expression {expr:?}: {e}"))?;
            let tz = match &cfg.tz {
                None => jiff::tz::TimeZone::UTC,
                Some(name) => jiff::tz::TimeZone::get(name).map_err(|_| {
                    format!("unknown time zone {name:?} (an IANA name such as \"Europe/Paris\")")
                })?,
            };
            // An expression that never matches (Feb 30th) would leave the job due never.
            let probe = jiff::Timestamp::UNIX_EPOCH.to_zoned(tz.clone());
            let s = Schedule::Cron {
                expr: Box::new(parsed),
                tz,
            };
            if s.next_after(probe.timestamp().as_millisecond()).is_none() {
                return Err(format!("the cron expression {expr:?} never comes due"));
            }
            return Ok(s);
        }
        if let Some(every) = cfg.every {
            if !(MIN_EVERY..=MAX_EVERY).contains(&every) {
                return Err(format!(
                    "`every` must be between 1s and 366days, got {}",
                    humantime::format_duration(every)
                ));
            }
            return Ok(Schedule::Every(every));
        }
        let at = cfg.at.as_deref().unwrap_or_default();
        let ts = jiff::Timestamp::from_str(at.trim()).map_err(|_| {
            format!("`at` must be an RFC 3339 time such as \"2026-12-01T09:00:00Z\", got {at:?}")
        })?;
        Ok(Schedule::At(ts.as_millisecond()))
    }

    /// The first time strictly after `after` (unix ms) the job is due; `None`: never again.
    pub fn next_after(&self, after: i64) -> Option<i64> {
        match self {
            Schedule::Every(d) => after.checked_add(i64::try_from(d.as_millis()).ok()?),
            Schedule::At(at) => (*at > after).then_some(*at),
            Schedule::Cron { expr, tz } => {
                let t = jiff::Timestamp::from_millisecond(after).ok()?;
                let next = expr
                    .find_next_occurrence(&t.to_zoned(tz.clone()), false)
                    .ok()?;
                Some(next.timestamp().as_millisecond())
            }
        }
    }

    /// A one-shot (`at`) schedule: disabled after it ran.
    pub fn is_once(&self) -> bool {
        matches!(self, Schedule::At(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ms(rfc: &str) -> i64 {
        jiff::Timestamp::from_str(rfc)
            .map(|t| t.as_millisecond())
            .unwrap_or_else(|e| panic!("{rfc}: {e}"))
    }

    fn cron(expr: &str, tz: Option<&str>) -> Schedule {
        Schedule::parse(&ScheduleConfig {
            cron: Some(expr.into()),
            tz: tz.map(str::to_string),
            ..ScheduleConfig::default()
        })
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Weekdays at 9: Friday 09:00 → Monday 09:00, in UTC and in Paris (UTC+1 in winter).
    /// Catches: Sunday-first weekday numbering, the time zone ignored, or the current
    /// minute counted as "next".
    #[test]
    fn cron_next_times() {
        let weekdays = cron("0 9 * * 1-5", None);
        assert_eq!(
            weekdays.next_after(ms("2026-11-27T09:00:00Z")),
            Some(ms("2026-11-30T09:00:00Z"))
        );
        assert_eq!(
            weekdays.next_after(ms("2026-11-26T08:59:59Z")),
            Some(ms("2026-11-26T09:00:00Z"))
        );
        let paris = cron("0 9 * * 1-5", Some("Europe/Paris"));
        assert_eq!(
            paris.next_after(ms("2026-11-26T07:00:00Z")),
            Some(ms("2026-11-26T08:00:00Z"))
        );
    }

    #[test]
    fn every_and_at() {
        let every = Schedule::parse(&ScheduleConfig {
            every: Some(Duration::from_secs(1800)),
            ..ScheduleConfig::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(every.next_after(1_000), Some(1_000 + 1_800_000));
        let at = Schedule::parse(&ScheduleConfig {
            at: Some("2026-12-01T09:00:00Z".into()),
            ..ScheduleConfig::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let t = ms("2026-12-01T09:00:00Z");
        assert_eq!(at.next_after(t - 1), Some(t));
        assert_eq!(at.next_after(t), None, "a one-shot is not due again");
        assert!(at.is_once());
    }

    /// Every malformed schedule is refused with a sentence saying why. Catches: a bad
    /// schedule accepted and never run (or run in a loop).
    #[test]
    fn bad_schedules_are_refused() {
        let cases = [
            (ScheduleConfig::default(), "give exactly one of"),
            (
                ScheduleConfig {
                    cron: Some("0 9 * * 1-5".into()),
                    every: Some(Duration::from_secs(60)),
                    ..ScheduleConfig::default()
                },
                "give exactly one of",
            ),
            (
                ScheduleConfig {
                    cron: Some("61 * * * *".into()),
                    ..ScheduleConfig::default()
                },
                "invalid cron expression",
            ),
            (
                ScheduleConfig {
                    cron: Some("0 0 30 2 *".into()),
                    ..ScheduleConfig::default()
                },
                "never comes due",
            ),
            (
                ScheduleConfig {
                    cron: Some("0 9 * * *".into()),
                    tz: Some("Mars/Olympus".into()),
                    ..ScheduleConfig::default()
                },
                "unknown time zone",
            ),
            (
                ScheduleConfig {
                    every: Some(Duration::from_millis(500)),
                    ..ScheduleConfig::default()
                },
                "between 1s and",
            ),
            (
                ScheduleConfig {
                    at: Some("tomorrow".into()),
                    ..ScheduleConfig::default()
                },
                "RFC 3339",
            ),
            (
                ScheduleConfig {
                    every: Some(Duration::from_secs(60)),
                    tz: Some("UTC".into()),
                    ..ScheduleConfig::default()
                },
                "`tz` goes with `cron` only",
            ),
        ];
        for (cfg, want) in cases {
            match Schedule::parse(&cfg) {
                Ok(_) => panic!("{cfg:?} was accepted"),
                Err(e) => assert!(e.contains(want), "{cfg:?}: {e}"),
            }
        }
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Any text as a cron expression or time zone is either refused or gives a next
        /// time strictly later. Catches: a panic on odd input, or a "next" time that is
        /// not after now (a job firing in a loop).
        #[test]
        fn any_expression_is_refused_or_moves_forward(
            expr in "([0-9*/,LW#?-]{1,4} ){4}[0-9*/,LW#?-]{1,4}|.*",
            tz in proptest::option::of("(UTC|Europe/Paris|.*)"),
            after in 0i64..4_102_444_800_000,
        ) {
            if let Ok(s) = Schedule::parse(&ScheduleConfig { cron: Some(expr), tz, ..ScheduleConfig::default() }) {
                if let Some(next) = s.next_after(after) {
                    prop_assert!(next > after);
                }
            }
        }
    }
}
