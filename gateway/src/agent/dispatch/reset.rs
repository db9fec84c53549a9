//! `session.reset` (docs/context.md): a session quiet since before the most recent daily
//! reset time (`daily: "04:00"`, the gateway's local time) or for longer than
//! `idleMinutes` starts fresh on its next message, as after `/new`: the old session is
//! archived (its transcript stays readable), the message opens a new one. A session with
//! a run active or queued is never reset.

use std::sync::Arc;

use jiff::{Timestamp, Zoned};

use crate::config::context::{parse_daily, ResetConfig};
use crate::runtime::Runtime;
use crate::store::Result;

/// The most recent `minutes`-after-midnight in `now`'s time zone, at or before `now`.
/// (A time that a DST change skips falls to the instant after the gap.)
pub fn last_daily(now: &Zoned, minutes: u32) -> Timestamp {
    let at = |date: jiff::civil::Date| {
        date.at((minutes / 60) as i8, (minutes % 60) as i8, 0, 0)
            .to_zoned(now.time_zone().clone())
            .map(|z| z.timestamp())
    };
    let today = now.date();
    match at(today) {
        Ok(t) if t <= now.timestamp() => t,
        _ => today
            .yesterday()
            .ok()
            .and_then(|d| at(d).ok())
            .unwrap_or(Timestamp::MIN),
    }
}

/// Whether a session last active at `last_ms` (ms since the epoch) is due for a reset at
/// `now`, and why.
pub fn due(reset: &ResetConfig, now: &Zoned, last_ms: i64) -> Option<&'static str> {
    let now_ms = now.timestamp().as_millisecond();
    if let Some(m) = reset.idle_minutes {
        if now_ms - last_ms > i64::from(m) * 60_000 {
            return Some("idle");
        }
    }
    if let Some(minutes) = reset.daily.as_deref().and_then(parse_daily) {
        if last_ms < last_daily(now, minutes).as_millisecond() {
            return Some("daily");
        }
    }
    None
}

/// Archives the session of `key` when it is due for a reset (and nothing of it runs or
/// waits). Called before a message is accepted.
pub async fn apply(rt: &Arc<Runtime>, key: &str) -> Result<()> {
    let reset = rt.config().session.reset.clone();
    if reset.daily.is_none() && reset.idle_minutes.is_none() {
        return Ok(());
    }
    if rt.active_run(key).is_some() || rt.lanes.get(super::lane_for(key)).has_queued(key) {
        return Ok(());
    }
    let Some(session) = rt.store.active_session(key).await? else {
        return Ok(());
    };
    let last_message = rt
        .store
        .transcript_tail(&session.id, 1)
        .await?
        .first()
        .map_or(0, |m| m.created_at);
    let last = session.updated_at.max(last_message);
    if let Some(why) = due(&reset, &Zoned::now(), last) {
        if rt.store.archive_session(key).await?.is_some() {
            tracing::info!(
                session = key,
                reason = why,
                "session.reset: the session starts fresh"
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::tz::TimeZone;

    fn zoned(s: &str, tz: &str) -> Zoned {
        let tz = TimeZone::get(tz).unwrap_or(TimeZone::UTC);
        s.parse::<jiff::civil::DateTime>()
            .expect("a civil date-time")
            .to_zoned(tz)
            .expect("a zoned time")
    }

    fn ms(z: &Zoned) -> i64 {
        z.timestamp().as_millisecond()
    }

    /// Catches: the daily boundary taken as today's even before it comes (every session
    /// reset all night), or the day before's once it has passed (no reset at all).
    #[test]
    fn the_daily_boundary_is_the_most_recent_one() {
        let now = zoned("2026-03-10T10:00", "UTC");
        assert_eq!(
            ms(&now) - last_daily(&now, 240).as_millisecond(),
            6 * 3_600_000
        );
        let early = zoned("2026-03-10T03:00", "UTC");
        assert_eq!(
            ms(&early) - last_daily(&early, 240).as_millisecond(),
            23 * 3_600_000
        );
        let at = zoned("2026-03-10T04:00", "UTC");
        assert_eq!(last_daily(&at, 240).as_millisecond(), ms(&at));
    }

    /// Catches: a daily reset of a session active after the boundary, none for one
    /// active before it, or idleMinutes counted in seconds or hours.
    #[test]
    fn due_by_daily_time_or_idle_minutes() {
        let daily = ResetConfig {
            daily: Some("04:00".into()),
            idle_minutes: None,
        };
        let now = zoned("2026-03-10T10:00", "UTC");
        let before = ms(&zoned("2026-03-10T03:59", "UTC"));
        let after = ms(&zoned("2026-03-10T04:01", "UTC"));
        assert_eq!(due(&daily, &now, before), Some("daily"));
        assert_eq!(due(&daily, &now, after), None);
        let idle = ResetConfig {
            daily: None,
            idle_minutes: Some(30),
        };
        assert_eq!(due(&idle, &now, ms(&now) - 31 * 60_000), Some("idle"));
        assert_eq!(due(&idle, &now, ms(&now) - 29 * 60_000), None);
        assert_eq!(due(&ResetConfig::default(), &now, 0), None);
    }

    /// Catches: a reset time in a DST gap (02:30 on the spring-forward night) read as
    /// never happening that day.
    #[test]
    fn a_reset_time_in_a_dst_gap_still_happens() {
        let tz = "America/New_York";
        if TimeZone::get(tz).is_err() {
            return; // no tz database on this machine
        }
        let now = zoned("2026-03-08T12:00", tz);
        let t = last_daily(&now, 150);
        assert!(t.as_millisecond() > ms(&zoned("2026-03-08T01:59", tz)));
        assert!(t.as_millisecond() <= ms(&now));
    }
}
