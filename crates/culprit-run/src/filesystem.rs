//! The filesystem a directory is on, read from `/proc/self/mountinfo`: what a run's scratch directory measured.
//!
//! `statfs` gives a filesystem's magic number, not its name, and no device; mountinfo gives both, for the mount
//! whose mount point is the longest prefix of the directory's canonical path. The reading of mountinfo's text is
//! [`filesystem_in_mountinfo`], a function of the text alone, so that it is tested with real files' lines.

use culprit_core::model::ScratchFilesystem;
use std::path::Path;

/// The filesystem holding `dir`, as this process's mount table names it, with `dir`'s canonical path; `None` when
/// the directory or the table cannot be read (a kernel without /proc), which the run then records as unknown.
pub fn filesystem_of(dir: &Path) -> Option<ScratchFilesystem> {
    let canonical = std::fs::canonicalize(dir).ok()?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    filesystem_in_mountinfo(&mountinfo, &canonical.to_string_lossy())
}

/// The filesystem of the mount holding the absolute, canonical `path`, read from the text of a
/// `/proc/<pid>/mountinfo` (proc(5): `ID PARENT MAJOR:MINOR ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - TYPE SOURCE
/// SUPER_OPTIONS`). The mount is the one whose mount point is the longest prefix of `path` by whole components;
/// of two at one mount point (a tmpfs mounted over /dev/shm again), the later line, which hides the earlier. Lines
/// that do not read are passed over. `None` when no mount holds `path` (a relative path, an empty table).
pub fn filesystem_in_mountinfo(mountinfo: &str, path: &str) -> Option<ScratchFilesystem> {
    let mut best: Option<(usize, String, String)> = None;
    for line in mountinfo.lines() {
        let Some((mount_point, fs_type, source)) = mount_of_line(line) else { continue };
        if !holds(&mount_point, path) {
            continue;
        }
        if best.as_ref().is_none_or(|(length, _, _)| mount_point.len() >= *length) {
            best = Some((mount_point.len(), fs_type, source));
        }
    }
    let (_, fs_type, source) = best?;
    Some(ScratchFilesystem { path: path.to_string(), fs_type, source })
}

/// The mount point, filesystem type and source of one mountinfo line, unescaped; `None` for a line that does not
/// read as one.
fn mount_of_line(line: &str) -> Option<(String, String, String)> {
    let fields: Vec<&str> = line.split(' ').collect();
    let mount_point = fields.get(4)?;
    // The optional fields end at a lone "-"; the type and source follow it.
    let separator = fields.iter().skip(6).position(|field| *field == "-")? + 6;
    let fs_type = fields.get(separator + 1)?;
    let source = fields.get(separator + 2)?;
    Some((unescape(mount_point), unescape(fs_type), unescape(source)))
}

/// Whether the mount at `mount_point` holds `path`: it is the path, or a prefix of it ending at a `/`.
fn holds(mount_point: &str, path: &str) -> bool {
    match path.strip_prefix(mount_point) {
        Some(rest) => mount_point.ends_with('/') || rest.is_empty() || rest.starts_with('/'),
        None => false,
    }
}

/// A mountinfo field with the kernel's octal escapes (`\040` a space, `\011` a tab, `\012` a newline, `\134` a
/// backslash) turned back into their characters; a backslash not followed by three octal digits stays as it is.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let octal = bytes.get(at + 1..at + 4).filter(|digits| digits.iter().all(|d| (b'0'..=b'7').contains(d)));
        match (bytes[at], octal) {
            (b'\\', Some(digits)) => {
                let value = digits.iter().fold(0u32, |value, digit| value * 8 + u32::from(digit - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                at += 4;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The /proc/self/mountinfo of the machine the tests were written on (a VM whose root is ext4 on /dev/vda, with
    /// /dev/shm a tmpfs mounted twice), less one mount of its test harness.
    const RECORDED: &str = include_str!("../tests/data/mountinfo");

    fn found(mountinfo: &str, path: &str) -> Option<(String, String)> {
        filesystem_in_mountinfo(mountinfo, path).map(|f| (f.fs_type, f.source))
    }

    #[test]
    fn the_longest_mount_point_by_whole_components_holds_a_path() {
        let cases: [(&str, Option<(&str, &str)>); 7] = [
            ("/tmp/culprit-scratch", Some(("ext4", "/dev/vda"))),
            ("/", Some(("ext4", "/dev/vda"))),
            ("/dev/shm/x", Some(("tmpfs", "tmpfs"))),
            ("/dev/shm", Some(("tmpfs", "tmpfs"))),
            // A sibling whose name starts as a mount point's is not under it.
            ("/dev/shmem", Some(("devtmpfs", "devtmpfs"))),
            ("/sys/fs/cgroup/cpu/x", Some(("cgroup", "cgroup"))),
            ("relative/path", None),
        ];
        for (path, expected) in cases {
            let expected = expected.map(|(t, s)| (t.to_string(), s.to_string()));
            assert_eq!(found(RECORDED, path), expected, "{path}");
        }
        assert_eq!(filesystem_in_mountinfo(RECORDED, "/dev/shm/x").map(|f| f.path).as_deref(), Some("/dev/shm/x"));
    }

    #[test]
    fn escaped_spaces_optional_fields_and_later_mounts_are_read_as_the_kernel_means_them() {
        let table = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
61 22 8:2 / /mnt/my\\040disk rw,relatime shared:30 master:2 - xfs /dev/sdb\\0401 rw,attr2
62 22 0:50 / /srv rw - btrfs /dev/nvme0n1p2 rw
63 62 0:51 / /srv rw - overlay overlay rw,lowerdir=/a
this line is not a mount
64 22 0:52 / /back\\134slash rw - nfs4 server:/export rw
";
        let cases: [(&str, Option<(&str, &str)>); 6] = [
            ("/mnt/my disk/scratch", Some(("xfs", "/dev/sdb 1"))),
            ("/mnt/my", Some(("ext4", "/dev/sda1"))),
            // The later of two mounts at one point hides the earlier.
            ("/srv/x", Some(("overlay", "overlay"))),
            ("/back\\slash/x", Some(("nfs4", "server:/export"))),
            ("/home", Some(("ext4", "/dev/sda1"))),
            ("", None),
        ];
        for (path, expected) in cases {
            let expected = expected.map(|(t, s)| (t.to_string(), s.to_string()));
            assert_eq!(found(table, path), expected, "{path}");
        }
        assert_eq!(found("", "/"), None);
        // Lines cut short or without the separator are passed over, not misread.
        assert_eq!(found("1 2 3:4 / / rw\n1 2 3:4 / / rw -\n1 2", "/"), None);
    }

    #[test]
    fn backslashes_without_three_octal_digits_stay() {
        assert_eq!(unescape("a\\040b"), "a b");
        assert_eq!(unescape("a\\09b\\"), "a\\09b\\");
        assert_eq!(unescape("\\011\\012"), "\t\n");
    }

    #[test]
    fn this_machines_scratch_directory_is_on_a_filesystem_its_table_names() {
        let dir = std::env::temp_dir();
        let filesystem = filesystem_of(&dir).expect("the temp dir's filesystem");
        assert!(!filesystem.fs_type.is_empty());
        assert_eq!(filesystem.path, std::fs::canonicalize(&dir).unwrap().to_string_lossy());
    }
}
