//! Shared mode (`storage.processes: "shared"`, PostgreSQL only): every gateway process on
//! one database is active, and the work is divided under leases, each piece held by one
//! process at a time (docs/postgres.md, "Shared mode"):
//!
//! - each process holds a lease of its own, `process:<owner>` (`standby::start`); its
//!   keeper renews it with everything else the process holds in one statement
//!   (`Store::renew_process`), so a process's leases all live and expire together, and a
//!   process that cannot renew stops acting (exit 75) as in standby mode;
//! - runs, outbox rows and timers carry the id of the process working on them
//!   (`lease_owner`) and an expiry; another process takes over what a dead one held once
//!   its expiry has passed;
//! - each channel's inbound side (`channel:telegram`, `channel:discord`) and the cron
//!   scheduler (`cron`) run in the one process that holds their lease (`hold`); every
//!   process can still send on every channel;
//! - the bus (`bus`, over `LISTEN`/`NOTIFY`; its wire form in `wire`): every process's
//!   events reach the clients of every other (`/ws`, `/api/events`, `wait: true`), and a
//!   stop taken by any process reaches the one that runs the run (`stop`);
//! - which run of a session runs now is read from the store, whichever process runs it
//!   (`running`).
//!
//! In standby mode (the default) and on SQLite there is no `Member`: one process acts.

pub mod bus;
pub mod hold;
pub mod running;
pub mod stop;
pub mod takeover;
pub mod wire;

pub use crate::runtime::Member;
