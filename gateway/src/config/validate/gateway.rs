//! The `gateway.*` checks (README, Security): the bind address and the token it needs, the
//! token itself (never blank, never quoted back), `auth.mode: "none"` only on loopback,
//! `allowedOrigins`, the body limit.

use std::net::IpAddr;

use crate::config::error::{Issue, KeyPath};
use crate::config::{AuthMode, Config, GatewayConfig, TOKEN_ENV};

pub(super) fn gateway(config: &Config, env: &dyn Fn(&str) -> Option<String>, out: &mut Vec<Issue>) {
    let g = &config.gateway;
    // gateway.port: every u16 is fine; 0 asks the OS for a free port (used by tests).
    match g.bind.trim().parse::<IpAddr>() {
        Err(_) => out.push(Issue::new(
            KeyPath::dotted("gateway.bind"),
            format!(
                "must be an IP address such as \"127.0.0.1\" or \"::1\", got {:?}",
                g.bind
            ),
        )),
        Ok(ip) if !ip.is_loopback() && g.auth.mode == AuthMode::None => out.push(Issue::new(
            KeyPath::dotted("gateway.auth.mode"),
            format!("\"none\" (no token) is accepted only on a loopback bind, and gateway.bind is {:?}: remove the key to use a token", g.bind),
        )),
        // The same rule `run` applies: the effective token, never a blank one. (The token
        // the daemon generates is for this machine's users: an exposed address wants one
        // chosen and handed out on purpose.)
        Ok(ip) if !ip.is_loopback() && g.auth.effective_token(env).is_none() => {
            out.push(Issue::new(
                KeyPath::dotted("gateway.bind"),
                "refusing to bind a non-loopback address without gateway.auth.token",
            ));
        }
        Ok(_) => {}
    }
    gateway_auth(g, env, out);
    if g.max_body_bytes < 1024 {
        out.push(Issue::new(
            KeyPath::dotted("gateway.maxBodyBytes"),
            format!("must be at least 1024, got {}", g.max_body_bytes),
        ));
    }
}

/// `gateway.auth.token` and `gateway.allowedOrigins` (README, Security). Values are never
/// quoted back: a token must not reach a log line.
fn gateway_auth(g: &GatewayConfig, env: &dyn Fn(&str) -> Option<String>, out: &mut Vec<Issue>) {
    let path = || KeyPath::dotted("gateway.auth.token");
    if g.auth.mode == AuthMode::None && g.auth.token.is_some() {
        out.push(Issue::new(
            path(),
            "must not be set with gateway.auth.mode \"none\": remove one of the two",
        ));
    }
    match &g.auth.token {
        Some(t) if t.trim().is_empty() => out.push(Issue::new(
            path(),
            format!("must not be blank: remove the key to use ${TOKEN_ENV}, or set a token"),
        )),
        Some(t) => {
            if let Some(problem) = token_problem(t) {
                out.push(Issue::new(path(), problem));
            }
        }
        None => {
            if let Some(problem) = env(TOKEN_ENV).as_deref().and_then(token_problem) {
                out.push(Issue::new(path(), format!("(from ${TOKEN_ENV}) {problem}")));
            }
        }
    }
    for (i, o) in g.allowed_origins.iter().enumerate() {
        if let Err(e) = crate::config::origin::SiteOrigin::parse(o) {
            out.push(Issue::new(
                KeyPath::dotted("gateway.allowedOrigins").index(i),
                format!("must be an origin such as \"https://chat.example.com\" or \"http://localhost:3000\" (scheme://host[:port]): {e}; got {o:?}"),
            ));
        }
    }
}

/// What keeps a non-blank token from working in an `Authorization` header, if anything.
fn token_problem(t: &str) -> Option<&'static str> {
    if t.trim().is_empty() {
        None
    } else if t.trim() != t {
        Some("must not start or end with whitespace (HTTP headers drop it)")
    } else if t.chars().any(char::is_control) {
        Some("must not contain control characters")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::validate;
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn check(config: &Config) -> Vec<(String, String)> {
        issues(config, &no_env)
    }

    #[test]
    fn gateway_rules() {
        let mut c = Config::default();
        c.gateway.bind = "localhost".into();
        c.gateway.max_body_bytes = 10;
        c.gateway.port = 0;
        assert_eq!(
            check(&c),
            vec![
                (
                    "gateway.bind".into(),
                    "must be an IP address such as \"127.0.0.1\" or \"::1\", got \"localhost\""
                        .into()
                ),
                (
                    "gateway.maxBodyBytes".into(),
                    "must be at least 1024, got 10".into()
                ),
            ]
        );
        c = Config::default();
        c.gateway.bind = "0.0.0.0".into();
        let refusal = vec![(
            "gateway.bind".to_string(),
            "refusing to bind a non-loopback address without gateway.auth.token".to_string(),
        )];
        assert_eq!(check(&c), refusal);
        let env = |k: &str| (k == "SWITCHBOARD_TOKEN").then(|| "s3cret".to_string());
        assert_eq!(validate(&c, &env), vec![], "env fallback counts");
        c.gateway.auth.token = Some("s3cret".into());
        assert_eq!(check(&c), vec![]);
        c.gateway.bind = "::1".into();
        c.gateway.auth.token = None;
        assert_eq!(check(&c), vec![]);
    }

    fn issues(c: &Config, env: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
        validate(c, env)
            .into_iter()
            .map(|i| (i.path.to_string(), i.message))
            .collect()
    }

    /// Catches #20: a blank `gateway.auth.token` taken as "no token" while
    /// `SWITCHBOARD_TOKEN` made the bind check pass, so `run` served everything openly.
    #[test]
    fn a_blank_token_is_an_error_whatever_the_env_says() {
        let env = |k: &str| (k == "SWITCHBOARD_TOKEN").then(|| "s3cret".to_string());
        let blank = (
            "gateway.auth.token".to_string(),
            "must not be blank: remove the key to use $SWITCHBOARD_TOKEN, or set a token"
                .to_string(),
        );
        let refusal = (
            "gateway.bind".to_string(),
            "refusing to bind a non-loopback address without gateway.auth.token".to_string(),
        );
        for token in ["", " ", "\t\n"] {
            let mut c = Config::default();
            c.gateway.auth.token = Some(token.into());
            assert_eq!(issues(&c, &env), vec![blank.clone()], "{token:?}");
            assert_eq!(c.gateway.auth.effective_token(&env), None, "{token:?}");
            c.gateway.bind = "0.0.0.0".into();
            assert_eq!(
                issues(&c, &env),
                vec![refusal.clone(), blank.clone()],
                "{token:?}"
            );
        }
        let mut c = Config::default();
        c.gateway.bind = "0.0.0.0".into();
        let blank_env = |k: &str| (k == "SWITCHBOARD_TOKEN").then(|| "  ".to_string());
        assert_eq!(issues(&c, &blank_env), vec![refusal.clone()]);
        assert_eq!(c.gateway.auth.effective_token(&blank_env), None);
        assert_eq!(
            c.gateway.auth.effective_token(&env).as_deref(),
            Some("s3cret")
        );
        c.gateway.auth.token = Some("mine".into());
        assert_eq!(
            c.gateway.auth.effective_token(&env).as_deref(),
            Some("mine")
        );
    }

    #[test]
    fn tokens_that_no_header_can_carry_are_errors() {
        let mut c = Config::default();
        c.gateway.auth.token = Some(" padded".into());
        let path = "gateway.auth.token".to_string();
        assert_eq!(
            issues(&c, &no_env),
            vec![(
                path.clone(),
                "must not start or end with whitespace (HTTP headers drop it)".into()
            )]
        );
        c.gateway.auth.token = None;
        let env = |k: &str| (k == "SWITCHBOARD_TOKEN").then(|| "a\u{7}b".to_string());
        assert_eq!(
            issues(&c, &env),
            vec![(
                path,
                "(from $SWITCHBOARD_TOKEN) must not contain control characters".into()
            )]
        );
    }

    /// Catches: `mode: "none"` opening an exposed address, or silently ignoring a token.
    #[test]
    fn no_token_mode_is_for_loopback_only() {
        let mut c = Config::default();
        c.gateway.auth.mode = AuthMode::None;
        assert_eq!(check(&c), vec![]);
        let env = |k: &str| (k == "SWITCHBOARD_TOKEN").then(|| "s3cret".to_string());
        assert_eq!(c.gateway.auth.effective_token(&env), None);
        for bind in ["0.0.0.0", "192.168.1.2", "::"] {
            c.gateway.bind = bind.into();
            let found = issues(&c, &env);
            assert_eq!(found.len(), 1, "{bind}: {found:?}");
            assert_eq!(found[0].0, "gateway.auth.mode");
            assert!(found[0].1.contains("only on a loopback bind"), "{found:?}");
        }
        c.gateway.bind = "::1".into();
        c.gateway.auth.token = Some("s3cret".into());
        assert_eq!(
            check(&c),
            vec![(
                "gateway.auth.token".into(),
                "must not be set with gateway.auth.mode \"none\": remove one of the two".into()
            )]
        );
    }

    #[test]
    fn allowed_origins_are_checked() {
        let mut c = Config::default();
        c.gateway.allowed_origins = vec![
            "https://chat.example.com".into(),
            "http://localhost:3000".into(),
            "https://chat.example.com/".into(),
            "chat.example.com".into(),
        ];
        let found = issues(&c, &no_env);
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            ["gateway.allowedOrigins[2]", "gateway.allowedOrigins[3]"]
        );
        assert!(found[0].1.contains("no path"), "{}", found[0].1);
        assert!(found[1].1.contains("scheme://"), "{}", found[1].1);
    }
}
