//! Agent definitions (docs/subagents.md, Agents): Markdown files with YAML front matter, the built-in
//! `general`, `explore` and `plan`, and the `agents.list` entries of the config, merged into
//! one registry with alias lookup. `front_matter` reads the files' header, `definition` turns
//! it into an [`AgentDef`], `sources` finds the files and keeps the registry fresh, and
//! `registry` merges the sources and resolves ids and aliases.

pub mod definition;
pub mod front_matter;
pub mod registry;
pub mod sources;

pub use definition::{AgentDef, FileError, Isolation, Source, ToolSet};
pub use registry::{Registry, UnknownAgent};
pub use sources::Catalog;
