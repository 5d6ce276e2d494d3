//! What differs between Unix and Windows, in one place: who owns a file and who else may read
//! or write it, creating a file for its owner alone, whether a path still names an open file,
//! and the hang-up signal an operator sends to have files reread.
//!
//! On Windows a file's access is decided by its ACL, which this server does not read: the checks
//! that refuse a token file others can read, or a cache folder another user owns, apply on Unix
//! only (docs/security.md, "On Windows"). Everything else behaves the same.

use std::fs::{Metadata, OpenOptions};

/// A file's permission bits (`0o777`), where the platform has them.
pub(crate) fn mode(meta: &Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(meta.mode() & 0o777)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// The uid owning a file, where the platform has uids.
pub(crate) fn owner(meta: &Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(meta.uid())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// This process's effective uid, where the platform has uids.
pub(crate) fn effective_uid() -> Option<u32> {
    #[cfg(unix)]
    {
        Some(rustix::process::geteuid().as_raw())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Who runs this command, as a person reading an audit record recognises them.
pub(crate) fn user_description() -> String {
    let name = ["USER", "LOGNAME", "USERNAME"].iter().find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()));
    #[cfg(unix)]
    {
        let uid = rustix::process::getuid().as_raw();
        match name {
            Some(user) => format!("{user} (uid {uid}, command line)"),
            None => format!("uid {uid} (command line)"),
        }
    }
    #[cfg(not(unix))]
    {
        format!("{} (command line)", name.unwrap_or_else(|| "unknown user".into()))
    }
}

/// `options`, creating the file readable and writable by its owner alone (mode 600 on Unix; on
/// Windows the folder's inherited ACL).
pub(crate) fn owner_only(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600)
    }
    #[cfg(not(unix))]
    {
        options
    }
}

/// `options`, refusing to open through a symbolic link planted after the caller looked (Unix's
/// `O_NOFOLLOW`; Windows creates no symbolic links without a privilege users lack by default).
pub(crate) fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW)
    }
    #[cfg(not(unix))]
    {
        options
    }
}

/// A folder only its owner may enter (0700 on Unix).
pub(crate) fn make_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// What identifies a file while it exists (device and inode on Unix), to tell a file replaced at
/// its path from the one still open. `None` where the platform's std does not say (Windows).
pub(crate) fn file_id(meta: &Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// SIGHUP, by which an operator has the token file, the certificate and the policy reread.
/// Windows has no such signal: there they are read at start only.
pub(crate) struct Hangups {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Hangups {
    pub(crate) fn listen() -> std::io::Result<Hangups> {
        #[cfg(unix)]
        {
            Ok(Hangups { signal: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())? })
        }
        #[cfg(not(unix))]
        {
            Ok(Hangups {})
        }
    }

    /// The next hang-up; on Windows, never.
    pub(crate) async fn recv(&mut self) -> Option<()> {
        #[cfg(unix)]
        {
            self.signal.recv().await
        }
        #[cfg(not(unix))]
        {
            std::future::pending().await
        }
    }
}
