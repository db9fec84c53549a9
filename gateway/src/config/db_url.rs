//! What `storage.url` names: which engine, and the URL as it may be shown (logs, errors,
//! status) with its password masked.

/// Whether `url` names a PostgreSQL database: the store's own answer, which picks the engine.
pub use switchboard_store::is_postgres_url;

/// `url` with the password of its userinfo (`user:PASSWORD@`) and the value of any
/// `password=` query parameter replaced by `***`. The userinfo ends at the last `@`, so a
/// password with an unencoded `@`, `/` or `?` is masked whole; a URL without `://` is
/// returned as it is (it has no userinfo).
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let rest = match rest.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{user}:***@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => rest.to_owned(),
    };
    format!("{scheme}://{}", redact_query_password(&rest))
}

/// Masks the value (up to the next `&`) of every `password=` in `rest`, in any case.
fn redact_query_password(rest: &str) -> String {
    const KEY: &str = "password=";
    // ASCII lowercasing keeps every byte offset.
    let lower = rest.to_ascii_lowercase();
    let mut out = String::with_capacity(rest.len());
    let mut at = 0;
    while let Some(found) = lower[at..].find(KEY) {
        let value = at + found + KEY.len();
        out.push_str(&rest[at..value]);
        out.push_str("***");
        at = lower[value..]
            .find('&')
            .map_or(rest.len(), |end| value + end);
    }
    out.push_str(&rest[at..]);
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn urls_are_shown_without_their_password() {
        for (url, shown) in [
            (
                "postgres://sb:s3cret@db:5432/sb",
                "postgres://sb:***@db:5432/sb",
            ),
            ("postgresql://sb@db/sb", "postgresql://sb@db/sb"),
            (
                "postgres://db/sb?user=sb&password=x&sslmode=require",
                "postgres://db/sb?user=sb&password=***&sslmode=require",
            ),
            ("postgres://sb:p@ss/w?rd@db/sb", "postgres://sb:***@db/sb"),
            ("sqlite:///var/lib/sb.db", "sqlite:///var/lib/sb.db"),
            ("sqlite::memory:", "sqlite::memory:"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
        assert!(is_postgres_url("postgres://x") && is_postgres_url("postgresql://x"));
        assert!(!is_postgres_url("sqlite://x") && !is_postgres_url("postgres:x"));
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Whatever the password holds (`@`, `:`, `/`, `?`, Unicode), none of it is shown.
        #[test]
        fn the_password_never_shows(
            user in "[a-z_][a-z0-9_]{0,8}",
            password in "[^\u{0}]{1,24}",
            host in "[a-z][a-z0-9.-]{0,12}(:[0-9]{1,5})?",
            db in "[a-z0-9_]{1,8}",
        ) {
            let url = format!("postgres://{user}:{password}@{host}/{db}");
            prop_assert_eq!(redact_url(&url), format!("postgres://{user}:***@{host}/{db}"));
        }

        /// Arbitrary text never panics, and a `password=` value never shows.
        #[test]
        fn arbitrary_urls_are_redacted_without_panicking(
            head in ".{0,40}",
            secret in "[A-Z]{12}",
        ) {
            let url = format!("postgres://{head}?password={secret}");
            prop_assert!(!redact_url(&url).contains(&secret));
        }
    }
}
