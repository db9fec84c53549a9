//! The `channels.*` checks: each channel's section checks itself
//! ([`switchboard_channels::section::ChannelSection::check`]: API URLs, text limits,
//! allowlists, group keys); here its issues get their full key path.

use switchboard_channels::section::PathSeg;

use crate::config::error::{Issue, KeyPath, Seg};
use crate::config::Config;

pub(super) fn channels(config: &Config, out: &mut Vec<Issue>) {
    for (id, section) in config.channels.sections() {
        let mut found = Vec::new();
        section.check(&mut found);
        let at = KeyPath::dotted("channels").key(id);
        out.extend(found.into_iter().map(|i| {
            let mut path = at.clone();
            path.0.extend(i.path.into_iter().map(|s| match s {
                PathSeg::Key(k) => Seg::Key(k),
                PathSeg::Index(n) => Seg::Index(n),
            }));
            Issue::new(path, i.message)
        }));
    }
}
