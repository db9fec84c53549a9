//! Doctor's check of the user the daemon runs as, told by the owner of the state dir (the
//! daemon creates it): root is a warning. A root daemon's agents run their commands as
//! root, and it cannot keep its environment from them (it makes itself non-dumpable only
//! as another user).

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{Report, Status};

pub fn daemon_user(state_dir: &Path, r: &mut Report) {
    let Ok(meta) = std::fs::metadata(state_dir) else {
        r.add(
            "daemon user",
            Status::Skip,
            "the state dir does not exist yet",
        );
        return;
    };
    if meta.uid() == 0 {
        r.add(
            "daemon user",
            Status::Warn,
            format!(
                "{} belongs to root: the daemon runs as root, so agents' commands run as root and can read its environment; run it as a user of its own (deploy/switchboard.service)",
                state_dir.display()
            ),
        );
    } else {
        r.add(
            "daemon user",
            Status::Ok,
            format!("runs as uid {} (the owner of the state dir)", meta.uid()),
        );
    }
}
