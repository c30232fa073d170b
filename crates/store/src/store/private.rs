//! The store holds conversations, so it is private to its user, as `pii.key` is: the dirs
//! `Store::open` creates are 0700, and the database is created 0600 before SQLite opens it
//! (SQLite's unix VFS gives the `-wal` and `-shm` files the database file's mode:
//! sqlite3.c `findCreateFileMode`). A store found readable by others is tightened to 0600,
//! with its `-wal` and `-shm`. An existing parent dir is left alone (it may be /tmp).

use std::path::Path;

use super::StoreError;

pub fn prepare(path: &Path) -> Result<(), StoreError> {
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| StoreError::Io { path: p, source }
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.exists()
    {
        crate::config::create_private_dirs(parent).map_err(io(parent))?;
    }
    if !path.exists() {
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        o.open(path).map_err(io(path))?;
    }
    #[cfg(unix)]
    for suffix in ["", "-wal", "-shm"] {
        use std::os::unix::fs::PermissionsExt;
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let p = Path::new(&name);
        if let Ok(m) = std::fs::metadata(p)
            && m.is_file()
            && m.permissions().mode() & 0o077 != 0
        {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)).map_err(io(p))?;
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use crate::store::Store;

    fn mode(p: &std::path::Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_store_and_its_wal_are_0600_in_a_0700_dir() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("data").join("kakeai");
        let db = dir.join("kakeai.db");
        let mut s = Store::open(&db).unwrap();
        s.write(|tx| Ok(tx.execute_batch("CREATE TABLE IF NOT EXISTS t (x)")?))
            .unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&d.path().join("data")), 0o700);
        assert_eq!(mode(&db), 0o600);
        let wal = dir.join("kakeai.db-wal");
        assert!(wal.exists());
        assert_eq!(mode(&wal), 0o600);
        assert_eq!(mode(&dir.join("kakeai.db-shm")), 0o600);
    }

    #[test]
    fn an_old_store_left_readable_by_others_is_tightened() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("old.db");
        drop(Store::open(&db).unwrap());
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(Store::open(&db).unwrap());
        assert_eq!(mode(&db), 0o600);
        // The parent existed: it is not touched.
        assert_ne!(mode(d.path()) & 0o777, 0);
    }
}
