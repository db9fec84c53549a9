//! The store's side of shared mode's bus (the gateway's `cluster::bus`): notifications between the
//! processes on one database. PostgreSQL has them (`LISTEN`/`NOTIFY`, `pg::notify`);
//! SQLite has one process per database, so nobody to tell and nothing to listen to.

use switchboard_channels::backoff::Backoff;

use super::engine::Engine;
use super::pg::Listener;
use super::{Result, Store};

impl Store {
    /// Send `payloads` on `channel` to every process listening on this database, in order,
    /// in one round trip. Each payload must be under 8000 bytes (PostgreSQL's limit). On
    /// SQLite it does nothing: no other process shares the database.
    pub async fn notify(&self, channel: &str, payloads: &[String]) -> Result<()> {
        match &self.engine {
            Engine::Sqlite(_) => Ok(()),
            Engine::Postgres(e) => e.notify(channel, payloads).await,
        }
    }

    /// A listener on `channels` (PostgreSQL; `None` on SQLite), on a connection of its own
    /// that reconnects after `backoff` waits when it drops.
    pub async fn listener(&self, channels: &[&str], backoff: Backoff) -> Result<Option<Listener>> {
        match &self.engine {
            Engine::Sqlite(_) => Ok(None),
            Engine::Postgres(e) => e.listener(channels, backoff).await.map(Some),
        }
    }
}
