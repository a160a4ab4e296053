//! Finding SmartNICs in sysfs: BDF, bound driver, IOMMU group, BAR 0 size, and what to do
//! to make a device usable through VFIO.
//!
//! Every function takes the sysfs root (normally `/sys`) so tests run on a fake tree.

use smartnic_contract::regs::{PCI_DEVICE_ID, PCI_VENDOR_ID};
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The system's sysfs root.
pub const SYSFS: &str = "/sys";

/// Why discovery failed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error("{0:?} is not a PCI address; use DDDD:BB:DD.F or BB:DD.F (hex), as `lspci -D` prints")]
    BadBdf(String),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: expected a hex ID like 0x10ee, found {found:?}", path.display())]
    BadId { path: PathBuf, found: String },
}

/// Normalises a PCI address to `dddd:bb:dd.f` (lower-case hex, domain 0000 if omitted).
pub fn normalize_bdf(s: &str) -> Result<String, DiscoverError> {
    let bad = || DiscoverError::BadBdf(s.to_owned());
    let parts: Vec<&str> = s.trim().split(':').collect();
    let (domain, bus, devfn) = match parts[..] {
        [d, b, df] => (d, b, df),
        [b, df] => ("0000", b, df),
        _ => return Err(bad()),
    };
    let (dev, func) = devfn.split_once('.').ok_or_else(bad)?;
    let hex = |x: &str, max_len: usize, max: u32| {
        let ok = !x.is_empty() && x.len() <= max_len && x.chars().all(|c| c.is_ascii_hexdigit());
        ok.then(|| u32::from_str_radix(x, 16).ok()).flatten().filter(|&v| v <= max).ok_or_else(bad)
    };
    let (d, b, v, f) = (hex(domain, 4, 0xFFFF)?, hex(bus, 2, 0xFF)?, hex(dev, 2, 0x1F)?, hex(func, 1, 7)?);
    Ok(format!("{d:04x}:{b:02x}:{v:02x}.{f:x}"))
}

/// The sysfs directory of a device.
pub fn device_dir(sysfs: &Path, bdf: &str) -> PathBuf {
    sysfs.join("bus/pci/devices").join(bdf)
}

/// One PCI function as sysfs describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// `dddd:bb:dd.f`.
    pub bdf: String,
    pub vendor: u16,
    pub device: u16,
    /// Name of the bound kernel driver, if any.
    pub driver: Option<String>,
    /// IOMMU group number; `None` when the IOMMU is off.
    pub iommu_group: Option<u32>,
    /// Size of BAR 0 in bytes, if the BAR exists.
    pub bar0_size: Option<u64>,
    /// Other functions in the same IOMMU group and their drivers.
    pub group_peers: Vec<(String, Option<String>)>,
}

/// Drivers VFIO accepts on the other members of a device's IOMMU group.
pub const VFIO_FRIENDLY: [&str; 3] = ["vfio-pci", "pci-stub", "pcieport"];

impl Candidate {
    /// Reads what sysfs says about the device at `bdf` (which must exist).
    pub fn read(sysfs: &Path, bdf: &str) -> Result<Self, DiscoverError> {
        let dir = device_dir(sysfs, bdf);
        let iommu_group = link_name(&dir.join("iommu_group")).and_then(|n| n.parse().ok());
        let mut group_peers = Vec::new();
        if iommu_group.is_some() {
            if let Ok(entries) = fs::read_dir(dir.join("iommu_group/devices")) {
                for e in entries.flatten() {
                    let peer = e.file_name().to_string_lossy().into_owned();
                    if peer != bdf {
                        let driver = link_name(&device_dir(sysfs, &peer).join("driver"));
                        group_peers.push((peer, driver));
                    }
                }
            }
            group_peers.sort();
        }
        Ok(Candidate {
            bdf: bdf.to_owned(),
            vendor: read_id(&dir.join("vendor"))?,
            device: read_id(&dir.join("device"))?,
            driver: link_name(&dir.join("driver")),
            iommu_group,
            bar0_size: fs::metadata(dir.join("resource0")).ok().map(|m| m.len()),
            group_peers,
        })
    }

    /// Whether the VFIO back end can open it as it stands.
    pub fn vfio_ready(&self) -> bool {
        self.driver.as_deref() == Some("vfio-pci")
            && self.iommu_group.is_some()
            && self.blocking_peers().is_empty()
    }

    /// Group members that keep the group from being viable for VFIO.
    pub fn blocking_peers(&self) -> Vec<&(String, Option<String>)> {
        self.group_peers
            .iter()
            .filter(|(_, d)| d.as_deref().is_some_and(|d| !VFIO_FRIENDLY.contains(&d)))
            .collect()
    }

    /// What to do before the VFIO back end can open it (empty when it is ready).
    pub fn next_steps(&self) -> String {
        if self.vfio_ready() {
            return String::new();
        }
        let mut s = String::new();
        if self.iommu_group.is_none() {
            s.push_str(
                "# the IOMMU is off: add `intel_iommu=on iommu=pt` (Intel) or `amd_iommu=on` (AMD)\n\
                 # to the kernel command line and reboot; until then only the sysfs back end works (as root)\n",
            );
        }
        if self.driver.as_deref() != Some("vfio-pci") {
            s.push_str(&bind_commands(&self.bdf, self.driver.as_deref()));
        }
        for (peer, driver) in self.blocking_peers() {
            let _ = writeln!(
                s,
                "# {peer} shares IOMMU group {} and is bound to {}: bind it to vfio-pci as well",
                self.iommu_group.unwrap_or(0),
                driver.as_deref().unwrap_or("?")
            );
        }
        if let Some(g) = self.iommu_group {
            let _ = writeln!(s, "sudo chown $USER /dev/vfio/{g}   # or run as root");
        }
        s
    }
}

/// The shell commands that bind `bdf` to vfio-pci (unbinding `driver` first, if any).
pub fn bind_commands(bdf: &str, driver: Option<&str>) -> String {
    let dev = format!("/sys/bus/pci/devices/{bdf}");
    let mut s = String::from("sudo modprobe vfio-pci\n");
    if let Some(d) = driver {
        let _ = writeln!(s, "echo {bdf} | sudo tee {dev}/driver/unbind   # currently bound to {d}");
    }
    let _ = writeln!(s, "echo vfio-pci | sudo tee {dev}/driver_override");
    let _ = writeln!(s, "echo {bdf} | sudo tee /sys/bus/pci/drivers_probe");
    let _ = writeln!(s, "ls {dev}/iommu_group/devices   # every device listed must be bound to vfio-pci");
    s
}

/// Every PCI function in `sysfs` with this vendor and device ID, sorted by BDF.
pub fn list(sysfs: &Path, vendor: u16, device: u16) -> Result<Vec<Candidate>, DiscoverError> {
    let root = sysfs.join("bus/pci/devices");
    let entries = fs::read_dir(&root).map_err(|source| DiscoverError::Io { path: root.clone(), source })?;
    let mut out = Vec::new();
    for e in entries {
        let e = e.map_err(|source| DiscoverError::Io { path: root.clone(), source })?;
        let bdf = e.file_name().to_string_lossy().into_owned();
        let dir = root.join(&bdf);
        // Devices without readable IDs (or that vanished meanwhile) are not candidates.
        let (Ok(v), Ok(d)) = (read_id(&dir.join("vendor")), read_id(&dir.join("device"))) else {
            continue;
        };
        if v == vendor && d == device {
            out.push(Candidate::read(sysfs, &bdf)?);
        }
    }
    out.sort_by(|a, b| a.bdf.cmp(&b.bdf));
    Ok(out)
}

/// The SmartNICs (the contract's vendor and device ID) in `sysfs`.
pub fn smartnics(sysfs: &Path) -> Result<Vec<Candidate>, DiscoverError> {
    list(sysfs, PCI_VENDOR_ID, PCI_DEVICE_ID)
}

/// Parses a sysfs ID file (`0x10ee\n`).
pub fn read_id(path: &Path) -> Result<u16, DiscoverError> {
    let s = fs::read_to_string(path).map_err(|source| DiscoverError::Io { path: path.to_owned(), source })?;
    let t = s.trim();
    t.strip_prefix("0x")
        .and_then(|h| u16::from_str_radix(h, 16).ok())
        .ok_or_else(|| DiscoverError::BadId { path: path.to_owned(), found: t.to_owned() })
}

/// The last component of a symlink's target (`driver` -> `.../drivers/vfio-pci`).
fn link_name(path: &Path) -> Option<String> {
    fs::read_link(path).ok()?.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// Builds fake sysfs trees for tests (here and in the back ends).
#[cfg(test)]
pub(crate) mod fake {
    use std::fs;
    use std::os::unix::fs::symlink;
    use std::path::Path;

    /// Adds a device with IDs, an optional driver, an optional IOMMU group and a BAR 0 of
    /// `bar0` bytes (none if 0).
    pub fn device(
        root: &Path,
        bdf: &str,
        ids: (u16, u16),
        driver: Option<&str>,
        group: Option<u32>,
        bar0: u64,
    ) {
        let dev = root.join("devices/pci0000:00").join(bdf);
        fs::create_dir_all(&dev).unwrap();
        fs::write(dev.join("vendor"), format!("0x{:04x}\n", ids.0)).unwrap();
        fs::write(dev.join("device"), format!("0x{:04x}\n", ids.1)).unwrap();
        fs::write(dev.join("enable"), "1\n").unwrap();
        if bar0 > 0 {
            let f = fs::File::create(dev.join("resource0")).unwrap();
            f.set_len(bar0).unwrap();
        }
        if let Some(d) = driver {
            let ddir = root.join("bus/pci/drivers").join(d);
            fs::create_dir_all(&ddir).unwrap();
            symlink(&ddir, dev.join("driver")).unwrap();
        }
        if let Some(g) = group {
            let gdir = root.join("kernel/iommu_groups").join(g.to_string());
            fs::create_dir_all(gdir.join("devices")).unwrap();
            symlink(&gdir, dev.join("iommu_group")).unwrap();
            symlink(&dev, gdir.join("devices").join(bdf)).unwrap();
        }
        let bus = root.join("bus/pci/devices");
        fs::create_dir_all(&bus).unwrap();
        symlink(&dev, bus.join(bdf)).unwrap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bdfs_are_normalised_and_checked() {
        assert_eq!(normalize_bdf("03:00.0").unwrap(), "0000:03:00.0");
        assert_eq!(normalize_bdf("0000:AF:1f.7").unwrap(), "0000:af:1f.7");
        for bad in ["", "03:00", "03:20.0", "03:00.8", "0:0:0:0.0", "xx:00.0", "12345:00:00.0", "03:00.0.1"] {
            assert!(matches!(normalize_bdf(bad), Err(DiscoverError::BadBdf(_))), "{bad}");
        }
    }

    #[test]
    fn lists_only_smartnics_with_driver_group_and_bar() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fake::device(root, "0000:03:00.0", (0x10EE, PCI_DEVICE_ID), Some("vfio-pci"), Some(12), 2 << 20);
        fake::device(root, "0000:01:00.0", (0x10EE, PCI_DEVICE_ID), None, None, 2 << 20);
        fake::device(root, "0000:02:00.0", (0x8086, 0x1572), Some("i40e"), Some(3), 4096);
        fake::device(root, "0000:04:00.0", (0x10EE, 0x7028), None, Some(4), 4096);
        let found = smartnics(root).unwrap();
        let bdfs: Vec<&str> = found.iter().map(|c| c.bdf.as_str()).collect();
        assert_eq!(bdfs, ["0000:01:00.0", "0000:03:00.0"]);
        let ready = &found[1];
        assert_eq!(ready.driver.as_deref(), Some("vfio-pci"));
        assert_eq!(ready.iommu_group, Some(12));
        assert_eq!(ready.bar0_size, Some(2 << 20));
        assert!(ready.vfio_ready());
        assert_eq!(ready.next_steps(), "");
        let bare = &found[0];
        assert_eq!((bare.driver.as_deref(), bare.iommu_group), (None, None));
        assert!(!bare.vfio_ready());
        let steps = bare.next_steps();
        assert!(steps.contains("intel_iommu=on"), "{steps}");
        assert!(steps.contains("echo vfio-pci | sudo tee /sys/bus/pci/devices/0000:01:00.0/driver_override"));
        assert!(!steps.contains("unbind"), "nothing to unbind: {steps}");
    }

    #[test]
    fn steps_unbind_the_current_driver_and_name_group_peers() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fake::device(root, "0000:03:00.0", (0x10EE, PCI_DEVICE_ID), Some("xdma"), Some(7), 4096);
        fake::device(root, "0000:03:00.1", (0x8086, 0x10FB), Some("ixgbe"), Some(7), 4096);
        let c = Candidate::read(root, "0000:03:00.0").unwrap();
        assert_eq!(c.group_peers, vec![("0000:03:00.1".to_owned(), Some("ixgbe".to_owned()))]);
        let steps = c.next_steps();
        assert!(steps.starts_with("sudo modprobe vfio-pci\n"), "{steps}");
        assert!(
            steps.contains("echo 0000:03:00.0 | sudo tee /sys/bus/pci/devices/0000:03:00.0/driver/unbind")
        );
        assert!(steps.contains("echo 0000:03:00.0 | sudo tee /sys/bus/pci/drivers_probe"));
        assert!(steps.contains("0000:03:00.1 shares IOMMU group 7 and is bound to ixgbe"), "{steps}");
        assert!(steps.contains("sudo chown $USER /dev/vfio/7"));
    }

    #[test]
    fn bad_ids_and_missing_roots_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(smartnics(dir.path()), Err(DiscoverError::Io { .. })));
        let p = dir.path().join("vendor");
        fs::write(&p, "10ee\n").unwrap();
        assert!(matches!(read_id(&p), Err(DiscoverError::BadId { .. })));
        fs::write(&p, "0x10ee\n").unwrap();
        assert_eq!(read_id(&p).unwrap(), 0x10EE);
    }
}
