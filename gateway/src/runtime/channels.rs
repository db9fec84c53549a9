//! The chat channels running in this process, by id (registered by `adapters`).

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use switchboard_channels::Channel;

/// The running channels, by id.
#[derive(Default)]
pub struct Channels {
    map: Mutex<HashMap<String, Arc<dyn Channel>>>,
}

impl Channels {
    pub fn get(&self, id: &str) -> Option<Arc<dyn Channel>> {
        self.map.lock().get(id).cloned()
    }

    pub fn register(&self, ch: Arc<dyn Channel>) {
        self.map.lock().insert(ch.id().to_string(), ch);
    }

    pub fn unregister(&self, id: &str) {
        self.map.lock().remove(id);
    }

    /// The ids of the running channels.
    pub fn ids(&self) -> Vec<String> {
        self.map.lock().keys().cloned().collect()
    }
}
