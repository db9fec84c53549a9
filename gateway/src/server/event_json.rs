//! The JSON of live events as clients read it (`/ws` event frames, `/api/events`). The
//! shape is the one [`Event`] derives (`events.rs`); this file only writes it with its
//! keys in alphabetical order, the order clients have always received (through a
//! `serde_json::Value`, whose maps are sorted). Shapes are listed in `docs/events.md` and
//! pinned by the golden tests beside this file.

use serde::Serialize;

use crate::events::Event;

/// An event as its JSON object, keys sorted.
pub struct Wire<'a>(pub &'a Event);

impl Serialize for Wire<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        to_value(self.0)
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }
}

/// An event as a `serde_json::Value` (the web chat's `event` frame carries one).
pub fn to_value(event: &Event) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::to_value(event)
}

/// An `/api/events` text frame: `{"event":{…},"type":"event"}`.
pub fn events_frame(event: &Event) -> Result<String, serde_json::Error> {
    #[derive(Serialize)]
    struct Frame<'a> {
        event: Wire<'a>,
        r#type: &'static str,
    }
    serde_json::to_string(&Frame {
        event: Wire(event),
        r#type: "event",
    })
}

#[cfg(test)]
#[path = "event_json_tests.rs"]
mod tests;
