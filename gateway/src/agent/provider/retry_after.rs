//! The `Retry-After` header of a 429/503 answer: delay-seconds (whole or, as some APIs
//! send, fractional) or an HTTP-date, parsed without panics and capped.

use std::time::{Duration, SystemTime};

/// Longest delay a `Retry-After` may say; anything longer (`1e20`) reads as this. The
/// retry loop never sleeps this long: it gives up when the server asks for more than its
/// own cap (`RetryPolicy::backoff`'s longest wait).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Parses a `Retry-After` value as of `now`. `None` when it is neither a non-negative
/// number of seconds nor an HTTP-date; a date in the past is zero.
pub fn parse(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    // Delay-seconds. Fractions are not in the RFC but some APIs send them; so is
    // scientific notation (`1e20`), which a server means as "a long time".
    if value
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        let secs: f64 = value.parse().ok()?;
        if secs.is_nan() || secs < 0.0 {
            return None;
        }
        // Capped before `Duration::from_secs_f64`, which panics on what it cannot hold
        // (a digit string too long for an f64 reads as infinity: the cap too).
        return Some(if secs >= MAX_RETRY_AFTER.as_secs_f64() {
            MAX_RETRY_AFTER
        } else {
            Duration::try_from_secs_f64(secs).unwrap_or(MAX_RETRY_AFTER)
        });
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(now)
            .unwrap_or(Duration::ZERO)
            .min(MAX_RETRY_AFTER),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn now() -> SystemTime {
        // Wed, 21 Oct 2015 07:28:00 GMT
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480)
    }

    /// Catches: `Duration::from_secs_f64(1e20)` (a panic that wedged the run: it stayed
    /// `running`, the chat never heard of it) and the HTTP-date form being ignored.
    #[test]
    fn seconds_fractions_dates_and_absurd_values() {
        let p = |v: &str| parse(v, now());
        assert_eq!(p("7"), Some(Duration::from_secs(7)));
        assert_eq!(p(" 1.5 "), Some(Duration::from_millis(1500)));
        assert_eq!(p("0"), Some(Duration::ZERO));
        assert_eq!(p("1e20"), Some(MAX_RETRY_AFTER));
        assert_eq!(p("100000000000000000000000"), Some(MAX_RETRY_AFTER));
        assert_eq!(
            p(&"9".repeat(400)),
            Some(MAX_RETRY_AFTER),
            "overflows f64 to inf"
        );
        assert_eq!(
            p("Wed, 21 Oct 2015 07:28:30 GMT"),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            p("Wednesday, 21-Oct-15 07:29:00 GMT"),
            Some(Duration::from_secs(60))
        );
        assert_eq!(p("Wed Oct 21 07:28:05 2015"), Some(Duration::from_secs(5)));
        assert_eq!(
            p("Tue, 20 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO),
            "in the past"
        );
        assert_eq!(p("Fri, 31 Dec 9999 23:59:59 GMT"), Some(MAX_RETRY_AFTER));
        for bad in [
            "",
            "-1",
            "soon",
            "NaN",
            "inf",
            "-0.5",
            "1..2",
            "Wed, 99 Oct 2015 07:28:00 GMT",
        ] {
            assert_eq!(p(bad), None, "{bad:?}");
        }
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Catches: a panic on any header value, or a delay past the cap.
        #[test]
        fn any_value_parses_without_panic_within_the_cap(
            v in "[0-9.eE+-]{0,30}|.{0,40}|[A-Za-z]{3}, [0-9]{1,2} [A-Za-z]{3} [0-9]{1,5} [0-9:]{8} GMT",
            at in 0u64..=(1u64 << 40),
        ) {
            let now = SystemTime::UNIX_EPOCH + Duration::from_secs(at);
            if let Some(d) = parse(&v, now) {
                prop_assert!(d <= MAX_RETRY_AFTER);
            }
        }

        /// Catches: whole and fractional seconds read wrong.
        #[test]
        fn seconds_read_back(ms in 0u64..=MAX_RETRY_AFTER.as_millis() as u64) {
            let v = format!("{}.{:03}", ms / 1000, ms % 1000);
            prop_assert_eq!(parse(&v, now()), Some(Duration::from_millis(ms)));
        }

        /// Catches: HTTP-dates read wrong.
        #[test]
        fn dates_read_back(secs in 0u64..=MAX_RETRY_AFTER.as_secs()) {
            let at = now() + Duration::from_secs(secs);
            prop_assert_eq!(parse(&httpdate::fmt_http_date(at), now()), Some(Duration::from_secs(secs)));
        }
    }
}
