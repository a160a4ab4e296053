//! BAR access through the kernel's sysfs `resourceN` file, mapped with memmap2.
//!
//! Needs root (or write access to the resource file) and no IOMMU set-up; the device may
//! be bound to no driver. The kernel only decodes the BAR while the device's memory space
//! is enabled, so opening enables it (`enable` = 1) if it is off.

use super::{MmapBar, OpenError};
use crate::access::{AccessError, RegisterAccess};
use crate::discover::{device_dir, normalize_bdf, read_id, SYSFS};
use smartnic_contract::regs::{PCI_DEVICE_ID, PCI_VENDOR_ID};
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

/// A SmartNIC BAR mapped from `/sys/bus/pci/devices/<BDF>/resourceN`.
pub struct SysfsBar {
    bar: MmapBar,
    bdf: String,
    path: PathBuf,
}

impl SysfsBar {
    /// Opens BAR 0 of the SmartNIC at `bdf` (`0000:03:00.0` or `03:00.0`).
    pub fn open(bdf: &str) -> Result<Self, OpenError> {
        Self::open_in(Path::new(SYSFS), bdf, 0)
    }

    /// Opens BAR `bar` of the SmartNIC at `bdf` under the sysfs root `sysfs`.
    pub fn open_in(sysfs: &Path, bdf: &str, bar: u8) -> Result<Self, OpenError> {
        let bdf = normalize_bdf(bdf)?;
        let dir = device_dir(sysfs, &bdf);
        if !dir.exists() {
            return Err(OpenError::NoDevice { bdf, path: dir });
        }
        let (vendor, device) = (read_id(&dir.join("vendor"))?, read_id(&dir.join("device"))?);
        if (vendor, device) != (PCI_VENDOR_ID, PCI_DEVICE_ID) {
            return Err(OpenError::WrongDevice {
                bdf,
                vendor,
                device,
                want_vendor: PCI_VENDOR_ID,
                want_device: PCI_DEVICE_ID,
            });
        }
        let path = dir.join(format!("resource{bar}"));
        if !path.exists() {
            return Err(OpenError::NoBar { bdf, bar, path });
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| OpenError::opening(&path, e))?;
        enable(&dir, &bdf)?;
        let len = file.metadata().map_err(|source| OpenError::Io { path: path.clone(), source })?.len();
        Ok(SysfsBar { bar: MmapBar::map(&file, len, &path)?, bdf, path })
    }

    pub fn bdf(&self) -> &str {
        &self.bdf
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Turns on memory-space decoding if the `enable` attribute says it is off.
fn enable(dir: &Path, bdf: &str) -> Result<(), OpenError> {
    let path = dir.join("enable");
    match fs::read_to_string(&path) {
        Ok(s) if s.trim() == "0" => fs::write(&path, "1").map_err(|source| OpenError::Disabled {
            bdf: bdf.to_owned(),
            path: path.clone(),
            source,
        }),
        _ => Ok(()),
    }
}

impl RegisterAccess for SysfsBar {
    fn bar_size(&self) -> u64 {
        self.bar.len()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        self.bar.read32(offset)
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        self.bar.write32(offset, value)
    }
    fn read_block(&mut self, offset: u32, out: &mut [u32]) -> Result<(), AccessError> {
        self.bar.read_block(offset, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::fake;
    use std::os::unix::fs::PermissionsExt;

    const NIC: (u16, u16) = (PCI_VENDOR_ID, PCI_DEVICE_ID);

    #[test]
    fn maps_resource0_of_a_fake_device() {
        let dir = tempfile::tempdir().unwrap();
        fake::device(dir.path(), "0000:03:00.0", NIC, None, None, 8192);
        let mut bar = SysfsBar::open_in(dir.path(), "03:00.0", 0).unwrap();
        assert_eq!(bar.bdf(), "0000:03:00.0");
        assert_eq!(bar.bar_size(), 8192);
        assert!(bar.path().ends_with("0000:03:00.0/resource0"));
        bar.write32(0x100, 0x1234_5678).unwrap();
        assert_eq!(bar.read32(0x100).unwrap(), 0x1234_5678);
        let raw = fs::read(bar.path()).unwrap();
        assert_eq!(&raw[0x100..0x104], &0x1234_5678u32.to_le_bytes());
        assert!(matches!(bar.read32(8192), Err(AccessError::OutOfRange { .. })));
    }

    #[test]
    fn missing_device_bar_and_wrong_ids_say_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fake::device(root, "0000:03:00.0", NIC, None, None, 0);
        fake::device(root, "0000:04:00.0", (0x8086, 0x1572), Some("i40e"), None, 4096);
        let e = SysfsBar::open_in(root, "0000:05:00.0", 0).err().unwrap();
        assert!(matches!(e, OpenError::NoDevice { .. }), "{e}");
        assert!(e.to_string().contains("lspci -D -d 10ee:"), "{e}");
        let e = SysfsBar::open_in(root, "0000:03:00.0", 0).err().unwrap();
        assert!(matches!(e, OpenError::NoBar { bar: 0, .. }), "{e}");
        let e = SysfsBar::open_in(root, "0000:04:00.0", 0).err().unwrap();
        assert!(e.to_string().contains("8086:1572, not a SmartNIC (10ee:7038)"), "{e}");
        let e = SysfsBar::open_in(root, "nonsense", 0).err().unwrap();
        assert!(matches!(e, OpenError::Discover(_)), "{e}");
    }

    #[test]
    fn disabled_memory_space_is_enabled() {
        let dir = tempfile::tempdir().unwrap();
        fake::device(dir.path(), "0000:03:00.0", NIC, None, None, 4096);
        let enable = device_dir(dir.path(), "0000:03:00.0").join("enable");
        fs::write(&enable, "0\n").unwrap();
        SysfsBar::open_in(dir.path(), "0000:03:00.0", 0).unwrap();
        assert_eq!(fs::read_to_string(&enable).unwrap().trim(), "1");
    }

    #[test]
    fn permission_errors_are_mapped_to_the_run_as_root_hint() {
        let e = OpenError::opening(Path::new("/x/resource0"), std::io::ErrorKind::PermissionDenied.into());
        let msg = e.to_string();
        assert!(matches!(e, OpenError::Permission { .. }));
        assert!(msg.contains("run as root") && msg.contains("vfio-pci"), "{msg}");
    }

    /// The real thing: a chmod 000 resource file. Root ignores file modes, so as root the
    /// open is repeated in a child process running as `nobody`.
    #[test]
    fn chmod_000_resource_file_gives_the_permission_error() {
        const CHILD: &str = "SMARTNIC_DRIVER_PERMISSION_CHILD";
        let open = |root: &Path| SysfsBar::open_in(root, "0000:03:00.0", 0).err().map(|e| e.to_string());
        if let Ok(root) = std::env::var(CHILD) {
            let msg = open(Path::new(&root)).expect("nobody must not be able to open a chmod 000 file");
            assert!(msg.contains("permission denied") && msg.contains("run as root"), "{msg}");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fake::device(root, "0000:03:00.0", NIC, None, None, 4096);
        let res = device_dir(root, "0000:03:00.0").join("resource0");
        fs::set_permissions(&res, fs::Permissions::from_mode(0o000)).unwrap();
        fs::set_permissions(root, fs::Permissions::from_mode(0o755)).unwrap();
        let euid = std::os::unix::fs::MetadataExt::uid(&fs::metadata("/proc/self").unwrap());
        if euid != 0 {
            let msg = open(root).expect("a chmod 000 file must not open");
            assert!(msg.contains("permission denied") && msg.contains("run as root"), "{msg}");
            return;
        }
        use std::os::unix::process::CommandExt;
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "backend::sysfs::tests::chmod_000_resource_file_gives_the_permission_error"])
            .args(["--nocapture", "--test-threads=1"])
            .env(CHILD, root)
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child as nobody failed:\n{text}");
        assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
    }
}
